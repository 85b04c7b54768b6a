//! The primitives at their edges (the table "At their edges" of `paralens::primitives`): at
//! zeros, kinks, ties, infinities and NaN, each rule's forward value is Rust's own, bit for
//! bit (NaN where Rust's is NaN), through the function as written and `_vjp`; its change is
//! the derivative's value, finite wherever the derivative is, and the documented value at
//! the kinks where there is none.
#![deny(warnings)]
#![allow(clippy::excessive_precision)]

use paralens::prelude::*;

/// The points every one-operand method is tried at.
const POINTS: [f64; 15] = [
    0.0,
    -0.0,
    1.0,
    -1.0,
    0.5,
    -0.5,
    2.0,
    -3.0,
    1e-300,
    1e300,
    -1e300,
    f64::INFINITY,
    f64::NEG_INFINITY,
    f64::NAN,
    f64::MIN_POSITIVE,
];

/// The same value, or both NaN.
fn same(a: f64, b: f64) -> bool {
    a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
}

/// Equal up to rounding (a few ulps of the larger), or both the same infinity or NaN.
fn close(a: f64, b: f64) -> bool {
    same(a, b)
        || (a.is_finite()
            && b.is_finite()
            && (a - b).abs() <= 1e-12 * a.abs().max(b.abs()).max(1e-300))
}

type Unary = (
    &'static str,
    fn(f64) -> f64,
    fn(f64) -> (f64, f64),
    fn(f64) -> f64,
    fn(f64) -> f64,
);

#[lens]
fn exp_of(x: f64) -> f64 {
    x.exp()
}

#[lens]
fn exp2_of(x: f64) -> f64 {
    x.exp2()
}

#[lens]
fn ln_of(x: f64) -> f64 {
    x.ln()
}

#[lens]
fn log2_of(x: f64) -> f64 {
    x.log2()
}

#[lens]
fn log10_of(x: f64) -> f64 {
    x.log10()
}

#[lens]
fn sqrt_of(x: f64) -> f64 {
    x.sqrt()
}

#[lens]
fn sin_of(x: f64) -> f64 {
    x.sin()
}

#[lens]
fn cos_of(x: f64) -> f64 {
    x.cos()
}

#[lens]
fn tan_of(x: f64) -> f64 {
    x.tan()
}

#[lens]
fn tanh_of(x: f64) -> f64 {
    x.tanh()
}

#[lens]
fn sinh_of(x: f64) -> f64 {
    x.sinh()
}

#[lens]
fn cosh_of(x: f64) -> f64 {
    x.cosh()
}

#[lens]
fn asin_of(x: f64) -> f64 {
    x.asin()
}

#[lens]
fn acos_of(x: f64) -> f64 {
    x.acos()
}

#[lens]
fn atan_of(x: f64) -> f64 {
    x.atan()
}

#[lens]
fn abs_of(x: f64) -> f64 {
    x.abs()
}

#[lens]
fn recip_of(x: f64) -> f64 {
    x.recip()
}

#[lens]
fn cbrt_of(x: f64) -> f64 {
    x.cbrt()
}

#[lens]
fn ln_1p_of(x: f64) -> f64 {
    x.ln_1p()
}

#[lens]
fn exp_m1_of(x: f64) -> f64 {
    x.exp_m1()
}

#[lens]
fn asinh_of(x: f64) -> f64 {
    x.asinh()
}

#[lens]
fn acosh_of(x: f64) -> f64 {
    x.acosh()
}

#[lens]
fn atanh_of(x: f64) -> f64 {
    x.atanh()
}

/// `(name, function as written, value and change through `_vjp`, Rust's own, derivative)`.
fn unaries() -> Vec<Unary> {
    vec![
        (
            "exp",
            exp_of,
            |x| {
                let (y, pb) = exp_of_vjp(x);
                (y, pb(1.0))
            },
            f64::exp,
            |x| x.exp(),
        ),
        (
            "exp2",
            exp2_of,
            |x| {
                let (y, pb) = exp2_of_vjp(x);
                (y, pb(1.0))
            },
            f64::exp2,
            |x| x.exp2() * core::f64::consts::LN_2,
        ),
        (
            "ln",
            ln_of,
            |x| {
                let (y, pb) = ln_of_vjp(x);
                (y, pb(1.0))
            },
            f64::ln,
            |x| 1.0 / x,
        ),
        (
            "log2",
            log2_of,
            |x| {
                let (y, pb) = log2_of_vjp(x);
                (y, pb(1.0))
            },
            f64::log2,
            |x| 1.0 / (x * core::f64::consts::LN_2),
        ),
        (
            "log10",
            log10_of,
            |x| {
                let (y, pb) = log10_of_vjp(x);
                (y, pb(1.0))
            },
            f64::log10,
            |x| 1.0 / (x * core::f64::consts::LN_10),
        ),
        (
            "sqrt",
            sqrt_of,
            |x| {
                let (y, pb) = sqrt_of_vjp(x);
                (y, pb(1.0))
            },
            f64::sqrt,
            |x| 0.5 / x.sqrt(),
        ),
        (
            "sin",
            sin_of,
            |x| {
                let (y, pb) = sin_of_vjp(x);
                (y, pb(1.0))
            },
            f64::sin,
            |x| x.cos(),
        ),
        (
            "cos",
            cos_of,
            |x| {
                let (y, pb) = cos_of_vjp(x);
                (y, pb(1.0))
            },
            f64::cos,
            |x| -x.sin(),
        ),
        (
            "tan",
            tan_of,
            |x| {
                let (y, pb) = tan_of_vjp(x);
                (y, pb(1.0))
            },
            f64::tan,
            |x| 1.0 + x.tan() * x.tan(),
        ),
        (
            "tanh",
            tanh_of,
            |x| {
                let (y, pb) = tanh_of_vjp(x);
                (y, pb(1.0))
            },
            f64::tanh,
            |x| 1.0 - x.tanh() * x.tanh(),
        ),
        (
            "sinh",
            sinh_of,
            |x| {
                let (y, pb) = sinh_of_vjp(x);
                (y, pb(1.0))
            },
            f64::sinh,
            |x| x.cosh(),
        ),
        (
            "cosh",
            cosh_of,
            |x| {
                let (y, pb) = cosh_of_vjp(x);
                (y, pb(1.0))
            },
            f64::cosh,
            |x| x.sinh(),
        ),
        (
            "asin",
            asin_of,
            |x| {
                let (y, pb) = asin_of_vjp(x);
                (y, pb(1.0))
            },
            f64::asin,
            |x| 1.0 / (1.0 - x * x).sqrt(),
        ),
        (
            "acos",
            acos_of,
            |x| {
                let (y, pb) = acos_of_vjp(x);
                (y, pb(1.0))
            },
            f64::acos,
            |x| -1.0 / (1.0 - x * x).sqrt(),
        ),
        (
            "atan",
            atan_of,
            |x| {
                let (y, pb) = atan_of_vjp(x);
                (y, pb(1.0))
            },
            f64::atan,
            |x| 1.0 / (1.0 + x * x),
        ),
        (
            "abs",
            abs_of,
            |x| {
                let (y, pb) = abs_of_vjp(x);
                (y, pb(1.0))
            },
            f64::abs,
            |x| {
                if x > 0.0 {
                    1.0
                } else if x < 0.0 {
                    -1.0
                } else {
                    0.0
                }
            },
        ),
        (
            "recip",
            recip_of,
            |x| {
                let (y, pb) = recip_of_vjp(x);
                (y, pb(1.0))
            },
            f64::recip,
            |x| -1.0 / (x * x),
        ),
        (
            "cbrt",
            cbrt_of,
            |x| {
                let (y, pb) = cbrt_of_vjp(x);
                (y, pb(1.0))
            },
            f64::cbrt,
            |x| 1.0 / (3.0 * x.cbrt() * x.cbrt()),
        ),
        (
            "ln_1p",
            ln_1p_of,
            |x| {
                let (y, pb) = ln_1p_of_vjp(x);
                (y, pb(1.0))
            },
            f64::ln_1p,
            |x| 1.0 / (1.0 + x),
        ),
        (
            "exp_m1",
            exp_m1_of,
            |x| {
                let (y, pb) = exp_m1_of_vjp(x);
                (y, pb(1.0))
            },
            f64::exp_m1,
            |x| x.exp(),
        ),
        (
            "asinh",
            asinh_of,
            |x| {
                let (y, pb) = asinh_of_vjp(x);
                (y, pb(1.0))
            },
            f64::asinh,
            |x| 1.0 / (x * x + 1.0).sqrt(),
        ),
        (
            "acosh",
            acosh_of,
            |x| {
                let (y, pb) = acosh_of_vjp(x);
                (y, pb(1.0))
            },
            f64::acosh,
            |x| 1.0 / (x * x - 1.0).sqrt(),
        ),
        (
            "atanh",
            atanh_of,
            |x| {
                let (y, pb) = atanh_of_vjp(x);
                (y, pb(1.0))
            },
            f64::atanh,
            |x| 1.0 / (1.0 - x * x),
        ),
    ]
}

#[test]
fn one_operand_methods_are_rusts_own_at_every_edge() {
    for (name, written, vjp, rust, derivative) in unaries() {
        for x in POINTS {
            let want = rust(x);
            let (y, d) = vjp(x);
            assert!(
                same(written(x), want),
                "{name}({x}) as written: {} against {want}",
                written(x)
            );
            assert!(
                same(y, want),
                "{name}({x}) through _vjp: {y} against {want}"
            );
            // The change is the derivative's value wherever that is a number (rounding
            // aside); an infinite or NaN derivative (sqrt at 0, ln below 0) is what the rule
            // gives too, never a NaN where the derivative is a number.
            let want_d = derivative(x);
            if want_d.is_finite() {
                assert!(close(d, want_d), "{name}'({x}): {d} against {want_d}");
            } else {
                assert!(
                    !d.is_finite(),
                    "{name}'({x}): {d} where the derivative is {want_d}"
                );
            }
        }
    }
}

#[lens]
fn max_of(x: f64, y: f64) -> f64 {
    x.max(y)
}

#[lens]
fn min_of(x: f64, y: f64) -> f64 {
    x.min(y)
}

#[lens]
fn powf_of(x: f64, a: f64) -> f64 {
    x.powf(a)
}

#[lens]
fn atan2_of(y: f64, x: f64) -> f64 {
    y.atan2(x)
}

#[lens]
fn hypot_of(x: f64, y: f64) -> f64 {
    x.hypot(y)
}

#[lens]
fn mul_add_of(x: f64, a: f64, b: f64) -> f64 {
    x.mul_add(a, b)
}

#[lens]
fn clamp_of(x: f64, lo: f64, hi: f64) -> f64 {
    x.clamp(lo, hi)
}

#[lens]
fn powi_of(x: f64) -> (f64, f64) {
    (x.powi(0), x.powi(1))
}

#[test]
fn two_operand_methods_are_rusts_own_at_every_edge() {
    for x in POINTS {
        for y in POINTS {
            assert!(same(max_of(x, y), x.max(y)) || (x == y), "max({x}, {y})");
            assert!(same(min_of(x, y), x.min(y)) || (x == y), "min({x}, {y})");
            assert!(same(powf_of(x, y), x.powf(y)), "powf({x}, {y})");
            assert!(same(atan2_of(x, y), x.atan2(y)), "atan2({x}, {y})");
            assert!(same(hypot_of(x, y), x.hypot(y)), "hypot({x}, {y})");
            assert!(
                same(mul_add_of(x, y, 0.25), x.mul_add(y, 0.25)),
                "mul_add({x}, {y})"
            );
            // The change of max and min goes to the operand that is the value: one of the
            // two gets all of it, the other none.
            let (dx, dy) = max_of_rev(x, y, 1.0);
            assert!(
                (dx, dy) == (1.0, 0.0) || (dx, dy) == (0.0, 1.0),
                "max'({x}, {y})"
            );
            let (dx, dy) = min_of_rev(x, y, 1.0);
            assert!(
                (dx, dy) == (1.0, 0.0) || (dx, dy) == (0.0, 1.0),
                "min'({x}, {y})"
            );
        }
    }
    // Ties: the change to `x`.
    assert_eq!(max_of_rev(2.0, 2.0, 1.0), (1.0, 0.0));
    assert_eq!(min_of_rev(-1.0, -1.0, 1.0), (1.0, 0.0));
    // `mul_add` is rounded once, as Rust's: here `x a + b` rounded twice differs.
    let (x, a, b): (f64, f64, f64) = (0.1, 10.0, -1.0);
    assert_ne!(x * a + b, x.mul_add(a, b));
    assert_eq!(mul_add_of(x, a, b).to_bits(), x.mul_add(a, b).to_bits());
}

#[test]
fn the_kinks_give_their_documented_changes() {
    // `hypot` and `atan2` at the origin: zero, where they have no derivative.
    assert_eq!(hypot_of_rev(0.0, 0.0, 1.0), (0.0, 0.0));
    assert_eq!(atan2_of_rev(0.0, 0.0, 1.0), (0.0, 0.0));
    // `abs` at 0: zero (the subgradient's middle).
    assert_eq!(abs_of_rev(0.0, 1.0), 0.0);
    // `powf` at a zero exponent: x^0 = 1 has change 0 for x, at 0 too; d/da x^a is 0 where
    // x <= 0 (x^a has no derivative in a there).
    for x in [0.0, 2.0, -2.0] {
        assert_eq!(powf_of_rev(x, 0.0, 1.0).0, 0.0, "at {x}");
    }
    assert_eq!(powf_of_rev(-2.0, 3.0, 1.0).1, 0.0);
    // `powi(0)` is 1 with change 0 at 0 as elsewhere; `powi(1)` is x, change 1.
    assert_eq!(powi_of_rev(0.0, (1.0, 0.0)), 0.0);
    assert_eq!(powi_of_rev(0.0, (0.0, 1.0)), 1.0);
    // `clamp` at a bound: the change to `x` (bounds included in `[lo, hi]`).
    assert_eq!(clamp_of_rev(1.0, 1.0, 2.0, 1.0), (1.0, 0.0, 0.0));
    assert_eq!(clamp_of_rev(2.0, 1.0, 2.0, 1.0), (1.0, 0.0, 0.0));
    assert_eq!(clamp_of_rev(3.0, 1.0, 2.0, 1.0), (0.0, 0.0, 1.0));
    assert_eq!(
        clamp_of(f64::NAN, 1.0, 2.0).is_nan(),
        f64::NAN.clamp(1.0, 2.0).is_nan()
    );
}
