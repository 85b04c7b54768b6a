//! The method coverage a user expects, each through `#[lens]` and checked against central
//! finite differences in f64: the elementary functions (`cbrt`, `ln_1p`, `exp_m1` and the
//! inverse hyperbolics too), `atan2`, `hypot`, `mul_add`, `clamp`,
//! the vector reductions (`norm`, `norm_squared`, `mean`, `max()`, `min()`), `component_div`,
//! entry-wise `abs` on vectors, the step functions (no change) and the path forms
//! (`f64::max(x, y)`, `T::exp(x)`). Generated code must not warn.
#![deny(warnings)]

use paralens::check_gradient;
use paralens::prelude::*;

mod common;
use common::{H, ok};

#[lens]
fn elementary(x: f64) -> (f64, f64, f64, f64) {
    let a = x.tan() + x.sinh() * x.cosh();
    let b = (0.5 * x).asin() + (0.3 * x).acos() + x.atan();
    let c = (x * x + 1.0).log2() + (x * x + 2.0).log10() + x.exp2();
    (
        a,
        b,
        c,
        x.floor() + x.signum() + x.round() + x.ceil() + x.trunc() + x,
    )
}

// The six added with issue 42, each in its domain: `acosh` above 1, `atanh` inside (-1, 1).
#[lens]
fn added(x: f64) -> (f64, f64, f64) {
    let a = x.cbrt() + x.ln_1p();
    let b = x.exp_m1() + (2.0 * x).asinh();
    let c = (x * x + 1.5).acosh() + (0.5 * x).atanh();
    (a, b, c)
}

#[lens]
fn added_f32(x: f32) -> f32 {
    x.cbrt() + x.ln_1p() + x.exp_m1() + x.asinh() + (x + 2.0).acosh() + (0.5 * x).atanh()
}

#[lens]
fn added_generic<T: Real>(x: T) -> T {
    x.cbrt() * x.exp_m1()
}

#[test]
fn cbrt_ln_1p_exp_m1_and_the_inverse_hyperbolics() {
    for x in [0.3, -0.7, 1.1, 0.05] {
        // The forward is Rust's own.
        let (a, b, c) = added(x);
        assert_eq!(a, x.cbrt() + x.ln_1p());
        assert_eq!(b, x.exp_m1() + (2.0 * x).asinh());
        assert_eq!(c, (x * x + 1.5).acosh() + (0.5 * x).atanh());
        ok("added", check_gradient(added, added_rev, x, H));
        ok(
            "added_generic",
            check_gradient(added_generic::<f64>, added_generic_rev::<f64>, x, H),
        );
        // f32 against the f64 derivative of the same expression.
        let d = 1.0 / (3.0 * x.cbrt() * x.cbrt())
            + 1.0 / (1.0 + x)
            + x.exp()
            + 1.0 / (x * x + 1.0).sqrt()
            + 1.0 / ((x + 2.0) * (x + 2.0) - 1.0).sqrt()
            + 0.5 / (1.0 - 0.25 * x * x);
        let d32 = f64::from(added_f32_rev(x as f32, 1.0));
        assert!(
            (d32 - d).abs() < 1e-4 * d.abs().max(1.0),
            "{d32} against {d}"
        );
    }
}

#[test]
fn elementary_functions() {
    for x in [0.3, -0.7, 1.1] {
        ok(
            "elementary",
            check_gradient(elementary, elementary_rev, x, H),
        );
    }
    // The step functions carry no change: only the last `+ x` counts.
    assert_eq!(elementary_rev(0.3, (0.0, 0.0, 0.0, 1.0)), 1.0);
}

#[lens]
fn two_and_three(y: f64, x: f64, z: f64) -> f64 {
    y.atan2(x) + y.hypot(x) + y.mul_add(x, z) + z.clamp(x, y)
}

#[test]
fn two_and_three_operand_methods() {
    let f = |(y, x, z): (f64, f64, f64)| two_and_three(y, x, z);
    let r = |(y, x, z): (f64, f64, f64), d: f64| two_and_three_rev(y, x, z, d);
    // z below, inside and above [x, y].
    for p in [
        (1.5, -0.5, -1.0),
        (1.5, -0.5, 0.4),
        (1.5, -0.5, 2.0),
        (-0.8, -1.2, 0.3),
    ] {
        ok("two_and_three", check_gradient(f, r, p, H));
    }
}

#[lens]
fn clamped(x: f64, lo: f64, hi: f64) -> f64 {
    x.clamp(lo, hi)
}

// As Rust's own `clamp`, in the function as written and in the reverse: bounds that cross
// are a panic, not a value (it was `lo`).
#[test]
#[should_panic(expected = "min > max")]
fn clamp_with_crossed_bounds_panics_as_written() {
    let _ = clamped(0.0, 1.0, -1.0);
}

#[test]
#[should_panic(expected = "min > max")]
fn clamp_with_crossed_bounds_panics_in_the_reverse() {
    let _ = clamped_rev(0.0, 1.0, -1.0, 1.0);
}

#[lens]
fn reductions(v: SVector<f64, 4>, w: SVector<f64, 4>) -> f64 {
    let q = v.component_div(&w);
    v.norm() + w.norm_squared() + q.mean() + v.max() - w.min() + v.abs().sum()
}

#[test]
fn vector_reductions_and_quotients() {
    let v = SVector::<f64, 4>::new(0.3, -1.2, 0.8, 0.1);
    let w = SVector::<f64, 4>::new(1.5, 0.7, -0.9, 2.2);
    ok(
        "reductions",
        check_gradient(
            |(v, w)| reductions(v, w),
            |(v, w), d| reductions_rev(v, w, d),
            (v, w),
            H,
        ),
    );
    // The largest entry of v (0.8, index 2) and the smallest of w (-0.9, index 2) get `d`.
    let (dv, dw) = reductions_rev(v, w, 1.0);
    let norm = v.norm();
    assert!((dv[2] - (0.8 / norm + 1.0 / (4.0 * -0.9) + 1.0 + 1.0)).abs() < 1e-12);
    assert!((dw[2] - (2.0 * -0.9 - 0.8 / (4.0 * 0.81) - 1.0)).abs() < 1e-12);
}

#[lens]
fn path_forms(x: f64, y: f64) -> f64 {
    f64::max(x, y) + f64::exp(x) * f64::min(y, 0.5) + f64::atan2(y, x)
}

#[lens]
fn generic_path_forms<T: Real>(x: T) -> T {
    T::exp(x) + T::sin(x) * x
}

/// The receiver of a path form is checked against the path's type in the function as
/// written alone (`f32::exp(x)` of an `f64` is refused, `tests/ui/lens/scalar_path_of_another_float.rs`):
/// a literal receiver takes that type, and an `f32` function runs in `f32`.
#[lens]
fn path_receivers(x: f64) -> f64 {
    f64::max(0.0, x) + f64::powi(x, 3) + f64::mul_add(x, 2.0, 1.0) * f64::exp(-x)
}

#[lens]
fn path_forms_f32(x: f32) -> f32 {
    f32::exp(x) * f32::max(x, 0.5) + f32::sin(2.0 * x)
}

// Through a type alias (`R::sin(x)` with `type R = f64`) the macro cannot tell the alias
// from a type of the user's with a `sin` of its own, and the sweeps call `R::sin_vjp`, as
// for such a type. Without the rule trait in scope that is one error, whose help names the
// trait to import; with it, `R::sin_vjp` is `f64`'s rule.
mod alias {
    use paralens::prelude::*;
    use paralens::rules::{MaxRule, SinRule};

    pub type R = f64;

    #[lens]
    pub fn alias_path(x: R, y: R) -> R {
        R::sin(x) * R::max(x, y)
    }
}

#[test]
fn methods_called_through_their_type() {
    let f = |(x, y): (f64, f64)| path_forms(x, y);
    let r = |(x, y): (f64, f64), d: f64| path_forms_rev(x, y, d);
    for p in [(0.3, 0.9), (1.2, -0.4)] {
        ok("path_forms", check_gradient(f, r, p, H));
    }
    for x in [0.7, -0.4] {
        ok(
            "path_receivers",
            check_gradient(path_receivers, path_receivers_rev, x, H),
        );
    }
    // In f32, against the f64 derivative of the same expression: exp(x) max(x, 0.5) + sin(2x).
    for x in [0.8_f32, 0.2] {
        let xd = f64::from(x);
        let want = if xd > 0.5 {
            xd.exp() * xd + xd.exp()
        } else {
            xd.exp() * 0.5
        } + 2.0 * (2.0 * xd).cos();
        let got = f64::from(path_forms_f32_rev(x, 1.0));
        assert!(
            (got - want).abs() < 1e-5 * want.abs().max(1.0),
            "{got} {want}"
        );
        assert_eq!(path_forms_f32(x), x.exp() * x.max(0.5) + (2.0 * x).sin());
    }
    let f = |(x, y): (f64, f64)| alias::alias_path(x, y);
    let r = |(x, y): (f64, f64), d: f64| alias::alias_path_rev(x, y, d);
    for p in [(0.3, 0.9), (1.2, -0.4)] {
        ok("alias_path", check_gradient(f, r, p, H));
    }
    assert_eq!(alias::alias_path(1.2, -0.4), 1.2f64.sin() * 1.2);
    ok(
        "generic_path_forms",
        check_gradient(
            generic_path_forms::<f64>,
            generic_path_forms_rev::<f64>,
            0.6,
            H,
        ),
    );
}
