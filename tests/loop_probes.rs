//! A reviewer's probes of differentiated loops (which the reverse runs again instead of
//! keeping their pullbacks, where that is sound) and of assignment to entries (`v[i] = e`),
//! written to break them: every gradient against central finite differences in f64, and
//! bodies with effects run once. Four defects they found are fixed and stay here as
//! regressions: `mul_add` taken for a sum, a stateful `#[lens]` callee run twice, an effect
//! in `new` run twice, and carried values whose start is never read failing to compile.
#![allow(
    clippy::assign_op_pattern,
    clippy::needless_range_loop,
    clippy::neg_multiply,
    clippy::new_without_default,
    clippy::nonminimal_bool,
    unused
)]

use paralens::prelude::*;
use paralens::{GradCheck, check_gradient};
use std::cell::Cell;

const H: f64 = 1e-6;
const TOL: f64 = 1e-7;

fn ok(name: &str, r: GradCheck) {
    assert!(r.passes(TOL), "{name}: {r}");
}

type V2 = SVector<f64, 2>;
type V3 = SVector<f64, 3>;
type V4 = SVector<f64, 4>;

// ---------------------------------------------------------------- feature 1: loops

// L01 Horner with mul_add: the carried value is the receiver of mul_add.
#[lens]
fn l01_horner_mul_add(x: f64) -> f64 {
    let mut acc: f64 = 1.0;
    for k in 0..4 {
        acc = acc.mul_add(x, k as f64 + 0.5);
    }
    acc
}
#[test]
fn l01() {
    for x in [0.7, -1.3] {
        ok(
            "l01",
            check_gradient(l01_horner_mul_add, l01_horner_mul_add_rev, x, H),
        );
    }
}

// L02 mul_add with the carried value as the multiplier argument.
#[lens]
fn l02_mul_add_arg(x: f64) -> f64 {
    let mut acc = x;
    for _ in 0..3 {
        acc = x.mul_add(acc, 1.0);
    }
    acc
}
#[test]
fn l02() {
    ok(
        "l02",
        check_gradient(l02_mul_add_arg, l02_mul_add_arg_rev, 0.8, H),
    );
}

// L03 plain product.
#[lens]
fn l03_product(x: f64) -> f64 {
    let mut p = 1.0;
    for k in 0..5 {
        p = p * (x + k as f64);
    }
    p
}
#[test]
fn l03() {
    ok("l03", check_gradient(l03_product, l03_product_rev, 0.4, H));
}

// L04 division (continued fraction).
#[lens]
fn l04_division(x: f64) -> f64 {
    let mut q = x;
    for _ in 0..5 {
        q = x / (q + 1.0);
    }
    q
}
#[test]
fn l04() {
    ok(
        "l04",
        check_gradient(l04_division, l04_division_rev, 0.9, H),
    );
}

// L05 exp, ln, sqrt on carried values.
#[lens]
fn l05_exp_ln_sqrt(x: f64) -> f64 {
    let mut a = x;
    let mut s = 0.0;
    for _ in 0..4 {
        a = (a.exp() + x).ln();
        s = (s + a * 0.5 + x * x).sqrt();
    }
    a + s
}
#[test]
fn l05() {
    ok(
        "l05",
        check_gradient(l05_exp_ln_sqrt, l05_exp_ln_sqrt_rev, 0.6, H),
    );
}

// L06 powi with the counter, powf with a differentiated exponent.
#[lens]
fn l06_pow(x: f64, y: f64) -> f64 {
    let mut a = x;
    let mut b: f64 = 1.0;
    for k in 1..4 {
        a = a.powi(k) * 0.5 + y;
        b = (b + 0.5).powf(x);
    }
    a + b
}
#[test]
fn l06() {
    ok(
        "l06",
        check_gradient(
            |(x, y)| l06_pow(x, y),
            |(x, y), d| l06_pow_rev(x, y, d),
            (0.7, 0.3),
            H,
        ),
    );
}

// L07 tanh recurrence.
#[lens]
fn l07_tanh(x: f64, w: f64) -> f64 {
    let mut h = 0.0;
    for _ in 0..6 {
        h = (h * w + x).tanh();
    }
    h
}
#[test]
fn l07() {
    ok(
        "l07",
        check_gradient(
            |(x, w)| l07_tanh(x, w),
            |(x, w), d| l07_tanh_rev(x, w, d),
            (0.5, 1.4),
            H,
        ),
    );
}

// L08 max / min of a carried value.
#[lens]
fn l08_max_min(x: f64) -> f64 {
    let mut m: f64 = -10.0;
    let mut n: f64 = 10.0;
    for k in 0..5 {
        m = m.max(x * (k as f64 - 1.7));
        n = n.min(x * x - k as f64 * 0.3);
    }
    m + n
}
#[test]
fn l08() {
    for x in [0.8, -0.6] {
        ok("l08", check_gradient(l08_max_min, l08_max_min_rev, x, H));
    }
}

// L09 abs of a carried difference.
#[lens]
fn l09_abs(x: f64) -> f64 {
    let mut a = 0.3;
    for k in 0..4 {
        a = (a - x * k as f64).abs() + 0.1 * x;
    }
    a
}
#[test]
fn l09() {
    ok("l09", check_gradient(l09_abs, l09_abs_rev, 0.77, H));
}

// L10 carried value read only by an `if` condition (otherwise linear).
#[lens]
fn l10_if_cond(x: f64) -> f64 {
    let mut s = 0.0;
    let mut out = 0.0;
    for _ in 0..6 {
        s = s + x;
        if s > 1.0 {
            out = out + 2.0 * x;
        } else {
            out = out - x;
        }
    }
    out + s
}
#[test]
fn l10() {
    for x in [0.3, 0.45] {
        ok("l10", check_gradient(l10_if_cond, l10_if_cond_rev, x, H));
    }
}

// L11 carried value read only by a forward-only `let` (the coefficient it picks).
#[lens]
fn l11_fwd_let(x: f64) -> f64 {
    let mut f = 0.0;
    for _ in 0..6 {
        let c = if f > 1.0 { 3.0 } else { 0.5 };
        f = f + c * x;
    }
    f
}
#[test]
fn l11() {
    // x = 0.3: f = 0.15, 0.3, ... crosses 1 at some step
    for x in [0.3, 0.7] {
        let r = check_gradient(l11_fwd_let, l11_fwd_let_rev, x, H);
        ok("l11", r);
    }
}

// L12 `match` on a condition of a carried value.
#[lens]
fn l12_match(x: f64) -> f64 {
    let mut a = 0.2;
    let mut b = 0.0;
    for i in 0..6 {
        a = a + x;
        match (a > 1.0, i % 2) {
            (true, 0) => b = b + 3.0 * x,
            (false, _) => b = b + x,
            _ => b = b - x,
        }
    }
    b
}
#[test]
fn l12() {
    ok("l12", check_gradient(l12_match, l12_match_rev, 0.35, H));
}

// L13 carried value used as an index.
#[lens]
fn l13_index(x: SVector<f64, 4>, s0: f64) -> f64 {
    let mut s = s0;
    let mut acc = 0.0;
    for _ in 0..5 {
        let k = (s.floor() as usize).min(3);
        acc = acc + x[k] * x[k];
        s = s + 0.9;
    }
    acc + s
}
#[test]
fn l13() {
    let x = V4::new(0.3, -0.7, 1.1, 0.5);
    ok(
        "l13",
        check_gradient(
            |(x, s)| l13_index(x, s),
            |(x, s), d| l13_index_rev(x, s, d),
            (x, 0.15),
            H,
        ),
    );
}

// L14 index written `x[k as usize]` with k a carried-float-derived int and the carried value
// otherwise linear.
#[lens]
fn l14_index_cast(x: SVector<f64, 4>, t: f64) -> f64 {
    let mut s = t;
    let mut acc = 0.0;
    for _ in 0..4 {
        let k = (s * 2.0).floor() as i64;
        acc = acc + x[(k.rem_euclid(4)) as usize] * t;
        s = s + x[0];
    }
    acc
}
#[test]
fn l14() {
    let x = V4::new(0.35, -0.7, 1.1, 0.5);
    ok(
        "l14",
        check_gradient(
            |(x, s)| l14_index_cast(x, s),
            |(x, s), d| l14_index_cast_rev(x, s, d),
            (x, 0.1),
            H,
        ),
    );
}

// L15 through a tuple and destructuring.
#[lens]
fn l15_tuple(x: f64, y: f64) -> f64 {
    let mut a = x;
    let mut b = y;
    for _ in 0..4 {
        let t = (a, b);
        let (u, v) = t;
        a = u + v;
        b = v * u * 0.5;
    }
    a + b
}
#[test]
fn l15() {
    ok(
        "l15",
        check_gradient(
            |(x, y)| l15_tuple(x, y),
            |(x, y), d| l15_tuple_rev(x, y, d),
            (0.4, 0.9),
            H,
        ),
    );
}

// L16 a carried array.
#[lens]
fn l16_array(x: f64, y: f64) -> f64 {
    let mut arr = [x, y];
    for _ in 0..4 {
        arr = [arr[1], arr[0] * arr[1] + x];
    }
    arr[0] + arr[1]
}
#[test]
fn l16() {
    ok(
        "l16",
        check_gradient(
            |(x, y)| l16_array(x, y),
            |(x, y), d| l16_array_rev(x, y, d),
            (0.6, 0.8),
            H,
        ),
    );
}

// L17 a carried struct (fields read by a product).
#[derive(Clone, Copy, Debug, PartialEq, Tangent)]
pub struct State {
    pub pos: f64,
    pub vel: f64,
}

#[lens]
fn l17_struct(x: f64, k: f64) -> f64 {
    let mut st = State { pos: x, vel: 0.0 };
    for _ in 0..5 {
        let a = st.pos * k * -1.0;
        st = State {
            pos: st.pos + st.vel * 0.1,
            vel: st.vel + a * 0.1,
        };
    }
    st.pos * st.pos
}
#[test]
fn l17() {
    ok(
        "l17",
        check_gradient(
            |(x, k)| l17_struct(x, k),
            |(x, k), d| l17_struct_rev(x, k, d),
            (0.9, 2.0),
            H,
        ),
    );
}

// L18 let aliases and shadowing inside the body.
#[lens]
fn l18_alias_shadow(x: f64) -> f64 {
    let mut acc = x;
    for _ in 0..3 {
        let t = acc;
        let t = t * t;
        let acc2 = t;
        acc = acc2 + x;
    }
    acc
}
#[test]
fn l18() {
    ok(
        "l18",
        check_gradient(l18_alias_shadow, l18_alias_shadow_rev, 0.5, H),
    );
}

// L19 nested loops with a product in the inner one.
#[lens]
fn l19_nested(x: f64) -> f64 {
    let mut a = x;
    let mut total = 0.0;
    for i in 0..3 {
        let mut b = a;
        for j in 0..2 {
            b = b * x + (i + j) as f64 * 0.1;
        }
        a = b.sin();
        total = total + a;
    }
    total
}
#[test]
fn l19() {
    ok("l19", check_gradient(l19_nested, l19_nested_rev, 0.7, H));
}

// L20 one carried value linear (a), one not (b).
#[lens]
fn l20_linear_and_not(x: f64) -> f64 {
    let mut a = 0.0;
    let mut b = 1.0;
    for _ in 0..5 {
        a = a + b;
        b = b * x;
    }
    a + b
}
#[test]
fn l20() {
    ok(
        "l20",
        check_gradient(l20_linear_and_not, l20_linear_and_not_rev, 0.8, H),
    );
}

// L21 linear carried a feeding a non-linear b next iteration.
#[lens]
fn l21_linear_feeds(x: f64) -> f64 {
    let mut a = x;
    let mut b = 1.0;
    for _ in 0..4 {
        b = b * a;
        a = a + x;
    }
    b
}
#[test]
fn l21() {
    ok(
        "l21",
        check_gradient(l21_linear_feeds, l21_linear_feeds_rev, 0.6, H),
    );
}

// L22 carried vectors with component_mul and dot.
#[lens]
fn l22_vectors(x: SVector<f64, 3>, w: SVector<f64, 3>) -> f64 {
    let mut v = x;
    let mut s = 0.0;
    for _ in 0..4 {
        v = v.component_mul(&w) + x;
        s = s + v.dot(&w);
    }
    s + v.norm_squared()
}
#[test]
fn l22() {
    let x = V3::new(0.3, -0.5, 0.8);
    let w = V3::new(0.9, 0.4, -0.7);
    ok(
        "l22",
        check_gradient(
            |(x, w)| l22_vectors(x, w),
            |(x, w), d| l22_vectors_rev(x, w, d),
            (x, w),
            H,
        ),
    );
}

// L23 `.rev()` with a product and the counter as weight.
#[lens]
fn l23_rev(x: f64) -> f64 {
    let mut a = 1.0;
    for k in (0..5).rev() {
        a = a * (x + k as f64) + a * a * 0.01 * k as f64;
    }
    a
}
#[test]
fn l23() {
    ok("l23", check_gradient(l23_rev, l23_rev_rev, 0.3, H));
}

// L24 `.step_by(2)` and `.rev().step_by(2)`.
#[lens]
fn l24_step(x: f64) -> f64 {
    let mut a = x;
    for k in (1..8).step_by(2) {
        a = a * x + (k as f64).sqrt() * a.sin();
    }
    let mut b = x;
    for k in (0..7).rev().step_by(3) {
        b = b * b * 0.5 + k as f64 * x;
    }
    a + b
}
#[test]
fn l24() {
    ok("l24", check_gradient(l24_step, l24_step_rev, 0.45, H));
}

// L25 `0..=N` with a const generic N, and N = 0, 1.
#[lens]
fn l25_inclusive<const N: usize>(x: f64) -> f64 {
    let mut a = x;
    for k in 0..=N {
        a = a * a * 0.5 + (k as f64) * x;
    }
    a
}
#[test]
fn l25() {
    for x in [0.4, -0.9] {
        ok(
            "l25_3",
            check_gradient(l25_inclusive::<3>, l25_inclusive_rev::<3>, x, H),
        );
        ok(
            "l25_0",
            check_gradient(l25_inclusive::<0>, l25_inclusive_rev::<0>, x, H),
        );
        ok(
            "l25_1",
            check_gradient(l25_inclusive::<1>, l25_inclusive_rev::<1>, x, H),
        );
    }
}

// L26 const generic with `N - 1` and `0..N` where N = 0.
#[lens]
fn l26_zero_trip<const N: usize>(x: f64) -> f64 {
    let mut a = x;
    for _ in 0..N {
        a = a * a + x;
    }
    a * 3.0
}
#[test]
fn l26() {
    ok(
        "l26_0",
        check_gradient(l26_zero_trip::<0>, l26_zero_trip_rev::<0>, 0.4, H),
    );
    ok(
        "l26_4",
        check_gradient(l26_zero_trip::<4>, l26_zero_trip_rev::<4>, 0.4, H),
    );
}

// L27 the counter as f64 inside a non-linear function.
#[lens]
fn l27_counter_f64(x: f64) -> f64 {
    let mut a = 1.0;
    for i in 0..5 {
        let t = i as f64 * 0.3;
        a = a * (t + x).sin() + t;
    }
    a
}
#[test]
fn l27() {
    ok(
        "l27",
        check_gradient(l27_counter_f64, l27_counter_f64_rev, 0.6, H),
    );
}

// L28 reading a carried value after its reassignment in the same iteration.
#[lens]
fn l28_read_after_assign(x: f64) -> f64 {
    let mut f = 0.0;
    let mut acc = 0.0;
    for _ in 0..4 {
        f = f + x;
        let g = f * f;
        acc = acc + g;
    }
    acc
}
#[test]
fn l28() {
    ok(
        "l28",
        check_gradient(l28_read_after_assign, l28_read_after_assign_rev, 0.7, H),
    );
}

// L29 forward-only let reading a carried value after reassignment, carried otherwise linear.
#[lens]
fn l29_fwd_after_assign(x: f64) -> f64 {
    let mut f = -0.5;
    let mut acc = 0.0;
    for _ in 0..5 {
        f = f + x;
        let sgn = if f > 0.0 { 1.0 } else { -1.0 };
        acc = acc + sgn * x;
    }
    acc + f
}
#[test]
fn l29() {
    ok(
        "l29",
        check_gradient(l29_fwd_after_assign, l29_fwd_after_assign_rev, 0.3, H),
    );
}

// L30 compound assignments.
#[lens]
fn l30_compound(x: f64) -> f64 {
    let mut s = 0.0;
    let mut p = 1.0;
    for _ in 0..4 {
        s += x;
        p *= s;
        p -= 0.1 * x;
        s /= 1.0 + x * 0.1;
    }
    p + s
}
#[test]
fn l30() {
    ok(
        "l30",
        check_gradient(l30_compound, l30_compound_rev, 0.9, H),
    );
}

// L31 a loop inside an if branch.
#[lens]
fn l31_loop_in_if(x: f64, flag: bool) -> f64 {
    let mut a = x;
    if flag {
        for _ in 0..3 {
            a = a * a + x;
        }
    } else {
        a = a * 2.0;
    }
    a
}
#[test]
fn l31() {
    for flag in [true, false] {
        ok(
            "l31",
            check_gradient(
                |x| l31_loop_in_if(x, flag),
                |x, d| l31_loop_in_if_rev(x, flag, d),
                0.3,
                H,
            ),
        );
    }
}

// L32 if without else inside a loop, squaring the carried value on some iterations.
#[lens]
fn l32_if_no_else(x: f64) -> f64 {
    let mut a = x;
    for i in 0..5 {
        if i == 2 || i == 4 {
            a = a * a;
        }
        a = a + x;
    }
    a
}
#[test]
fn l32() {
    ok(
        "l32",
        check_gradient(l32_if_no_else, l32_if_no_else_rev, 0.6, H),
    );
}

// L33 a body calling another #[lens] function with the carried value.
#[lens]
fn step33(a: f64, x: f64) -> f64 {
    a * x + a.sin()
}
#[lens]
fn l33_call(x: f64) -> f64 {
    let mut a = x;
    for _ in 0..4 {
        a = step33(a, x);
    }
    a
}
#[test]
fn l33() {
    ok("l33", check_gradient(l33_call, l33_call_rev, 0.5, H));
}

// L34 a carried value used only through a forward-only NO_CHANGE method (signum).
#[lens]
fn l34_signum(x: f64) -> f64 {
    let mut a = -1.0;
    let mut acc = 0.0;
    for _ in 0..6 {
        a = a + x;
        let s = a.signum();
        acc = acc + s * x * x;
    }
    acc
}
#[test]
fn l34() {
    ok("l34", check_gradient(l34_signum, l34_signum_rev, 0.35, H));
}

// L35 clamp with carried bounds, hypot, atan2, recip.
#[lens]
fn l35_misc(x: f64, y: f64) -> f64 {
    let mut a = x;
    let mut b = y;
    for _ in 0..3 {
        a = (a * 1.5).clamp(-1.0, b + 0.5);
        b = a.hypot(b) * 0.5 + b.atan2(a + 2.0) + (b + 2.0).recip();
    }
    a + b
}
#[test]
fn l35() {
    ok(
        "l35",
        check_gradient(
            |(x, y)| l35_misc(x, y),
            |(x, y), d| l35_misc_rev(x, y, d),
            (0.4, 0.3),
            H,
        ),
    );
}

// L36 entries of a carried vector that is only updated linearly, but read in a product.
#[lens]
fn l36_entries(x: SVector<f64, 2>) -> f64 {
    let mut v = x;
    let mut s = 0.0;
    for _ in 0..3 {
        v = v + x;
        s = s + v[0] * v[1];
    }
    s
}
#[test]
fn l36() {
    ok(
        "l36",
        check_gradient(l36_entries, l36_entries_rev, V2::new(0.3, -0.8), H),
    );
}

// L37 carried value in the exponent of powi through a forward-only let.
#[lens]
fn l37_powi_extra(x: f64) -> f64 {
    let mut a = 0.0;
    let mut b = 0.0;
    for _ in 0..4 {
        a = a + x;
        let big = a > 1.0;
        let n = if big { 3 } else { 2 };
        b = b + x.powi(n);
    }
    b
}
#[test]
fn l37() {
    ok(
        "l37",
        check_gradient(l37_powi_extra, l37_powi_extra_rev, 0.4, H),
    );
}

// L38 a carried value used in a `match` guard.
#[lens]
fn l38_guard(x: f64) -> f64 {
    let mut a = 0.0;
    let mut out = 0.0;
    for i in 0..6 {
        a = a + x;
        match i {
            k if (k as f64) < a * 4.0 => out = out + x * x,
            _ => out = out + x,
        }
    }
    out
}
#[test]
fn l38() {
    ok("l38", check_gradient(l38_guard, l38_guard_rev, 0.31, H));
}

// L39 norm and sum of a carried vector.
#[lens]
fn l39_norm(x: SVector<f64, 3>) -> f64 {
    let mut v = x;
    for _ in 0..3 {
        v = v * v.norm() + x * v.sum();
    }
    v.sum()
}
#[test]
fn l39() {
    ok(
        "l39",
        check_gradient(l39_norm, l39_norm_rev, V3::new(0.3, -0.2, 0.4), H),
    );
}

// L40 f64::mul_add path form.
#[lens]
fn l40_fmul_add(x: f64) -> f64 {
    let mut acc = 2.0;
    for _ in 0..3 {
        acc = f64::mul_add(acc, acc, x);
    }
    acc
}
#[test]
fn l40() {
    ok(
        "l40",
        check_gradient(l40_fmul_add, l40_fmul_add_rev, 0.3, H),
    );
}

// L41 a linear carried vector indexed by the counter, read in a product after the loop only.
#[lens]
fn l41_index_counter<const N: usize>(x: SVector<f64, N>, w: f64) -> f64 {
    let mut s = 0.0;
    let mut t = 0.0;
    for i in 0..N {
        s = s + x[i];
        t = t + s * w * x[N - 1 - i];
    }
    s * t
}
#[test]
fn l41() {
    let x = V4::new(0.3, -0.6, 0.9, 0.2);
    ok(
        "l41",
        check_gradient(
            |(x, w)| l41_index_counter::<4>(x, w),
            |(x, w), d| l41_index_counter_rev::<4>(x, w, d),
            (x, 1.3),
            H,
        ),
    );
}

// L42 a carried value used in an `||` condition.
#[lens]
fn l42_or_cond(x: f64) -> f64 {
    let mut a = 0.0;
    let mut out = 0.0;
    for i in 0..6 {
        a = a + x;
        if i == 0 || a > 1.0 {
            out = out + x * x;
        }
    }
    out
}
#[test]
fn l42() {
    ok("l42", check_gradient(l42_or_cond, l42_or_cond_rev, 0.3, H));
}

// L43 a forward-only let with a closure reading the carried value.
#[lens]
fn l43_closure(x: f64) -> f64 {
    let mut a = 0.0;
    let mut out = 0.0;
    for _ in 0..5 {
        a = a + x;
        let w = if 1.0 < a { 2.0 } else { 1.0 } + if 2.0 < a { 1.0 } else { 0.0 };
        out = out + w * x;
    }
    out
}
#[test]
fn l43() {
    ok("l43", check_gradient(l43_closure, l43_closure_rev, 0.45, H));
}

// L45 a carried value swapped with another (a rotation of three).
#[lens]
fn l45_rotate(x: f64, y: f64, z: f64) -> f64 {
    let mut a = x;
    let mut b = y;
    let mut c = z;
    for _ in 0..4 {
        let t = a;
        a = b;
        b = c;
        c = t * a + b;
    }
    a * b + c
}
#[test]
fn l45() {
    ok(
        "l45",
        check_gradient(
            |(x, y, z)| l45_rotate(x, y, z),
            |(x, y, z), d| l45_rotate_rev(x, y, z, d),
            (0.3, 0.7, -0.4),
            H,
        ),
    );
}

// L46 a carried value read in a block expression used as a value.
#[lens]
fn l46_block(x: f64) -> f64 {
    let mut a = x;
    for _ in 0..3 {
        let b = {
            let t = a * x;
            t + 1.0
        };
        a = b;
    }
    a
}
#[test]
fn l46() {
    ok("l46", check_gradient(l46_block, l46_block_rev, 0.8, H));
}

// L47 matrix carried and multiplied.
#[lens]
fn l47_matrix(m: SMatrix<f64, 2, 2>, v: SVector<f64, 2>) -> f64 {
    let mut x = v;
    for _ in 0..3 {
        x = m * x + v;
    }
    x.norm_squared()
}
#[test]
fn l47() {
    let m = SMatrix::<f64, 2, 2>::new(0.5, -0.3, 0.2, 0.7);
    ok(
        "l47",
        check_gradient(
            |(m, v)| l47_matrix(m, v),
            |(m, v), d| l47_matrix_rev(m, v, d),
            (m, V2::new(0.4, -0.9)),
            H,
        ),
    );
}

// L48 carried values through a tuple assigned at once.
#[lens]
fn l48_tuple_assign(x: f64) -> f64 {
    let mut p = (x, 1.0);
    for _ in 0..4 {
        p = (p.0 * p.1, p.0 + x);
    }
    p.0 + p.1
}
#[test]
fn l48() {
    ok(
        "l48",
        check_gradient(l48_tuple_assign, l48_tuple_assign_rev, 0.9, H),
    );
}

// L49 a carried value negated and subtracted (all linear) with a product on a separate value.
#[lens]
fn l49_neg(x: f64) -> f64 {
    let mut a = x;
    let mut b = 0.0;
    for _ in 0..4 {
        a = -a + x;
        b = b - a * 0.5;
    }
    a * b
}
#[test]
fn l49() {
    ok("l49", check_gradient(l49_neg, l49_neg_rev, 0.9, H));
}

// L50 `1..=N` const item bound and `N / 2`.
const M: usize = 6;
#[lens]
fn l50_const_forms(x: f64) -> f64 {
    let mut a = x;
    for k in 1..=M / 2 {
        a = a * x / (k as f64);
    }
    a
}
#[test]
fn l50() {
    ok(
        "l50",
        check_gradient(l50_const_forms, l50_const_forms_rev, 0.9, H),
    );
}

// L51 mul_add outside any loop (tape-free straight line): the reference behaviour.
#[lens]
fn l51_mul_add_plain(x: f64) -> f64 {
    let a = x * 2.0;
    a.mul_add(x, 1.0)
}
#[test]
fn l51() {
    ok(
        "l51",
        check_gradient(l51_mul_add_plain, l51_mul_add_plain_rev, 0.7, H),
    );
}

// L52 the l01 loop with an effect in the body (forces the tape path): should match FD.
#[lens]
fn l52_mul_add_tape(x: f64) -> f64 {
    let mut acc: f64 = 1.0;
    for k in 0..4 {
        RUNS.with(|r| r.set(r.get() + 1));
        acc = acc.mul_add(x, k as f64 + 0.5);
    }
    acc
}
#[test]
fn l52() {
    ok(
        "l52",
        check_gradient(l52_mul_add_tape, l52_mul_add_tape_rev, 0.7, H),
    );
}

thread_local! {
    static RUNS: Cell<usize> = const { Cell::new(0) };
    static CALLS: Cell<usize> = const { Cell::new(0) };
    static NEXT: Cell<f64> = const { Cell::new(0.0) };
    static NEWS: Cell<usize> = const { Cell::new(0) };
}

// L53 println! in the body.
#[lens]
fn l53_println(x: f64) -> f64 {
    let mut a = x;
    for i in 0..3 {
        a = a * x + 1.0;
        println!("iteration {i}: {a}");
    }
    a
}
#[test]
fn l53() {
    ok("l53", check_gradient(l53_println, l53_println_rev, 0.6, H));
}

// L54 a Cell counter in the body: runs once per iteration.
#[lens]
fn l54_cell(x: f64) -> f64 {
    let mut a = x;
    for _ in 0..5 {
        RUNS.with(|r| r.set(r.get() + 1));
        a = a.sin() * x;
    }
    a
}
#[test]
fn l54() {
    RUNS.with(|r| r.set(0));
    let (_, pb) = l54_cell_vjp(0.8);
    let _ = pb(1.0);
    assert_eq!(RUNS.with(|r| r.get()), 5, "body ran again");
    ok("l54", check_gradient(l54_cell, l54_cell_rev, 0.8, H));
}

// L55 a `&mut` call in the body.
fn bump(n: &mut usize) {
    *n += 1;
    RUNS.with(|r| r.set(r.get() + 1));
}
#[lens]
fn l55_mut_call(x: f64) -> f64 {
    let mut n = 0usize;
    let mut a = x;
    for _ in 0..4 {
        bump(&mut n);
        a = a * x + n as f64;
    }
    a
}
#[test]
fn l55() {
    RUNS.with(|r| r.set(0));
    let (_, pb) = l55_mut_call_vjp(0.7);
    let _ = pb(1.0);
    assert_eq!(RUNS.with(|r| r.get()), 4, "body ran again");
    ok(
        "l55",
        check_gradient(l55_mut_call, l55_mut_call_rev, 0.7, H),
    );
}

// L56 the body calls a #[lens] function that has an effect: does it run twice?
#[lens]
fn counted_step(a: f64, x: f64) -> f64 {
    CALLS.with(|c| c.set(c.get() + 1));
    a * x + 0.5
}
#[lens]
fn l56_effect_in_callee(x: f64) -> f64 {
    let mut a = x;
    for _ in 0..4 {
        a = counted_step(a, x);
    }
    a
}
#[test]
fn l56() {
    ok(
        "l56",
        check_gradient(l56_effect_in_callee, l56_effect_in_callee_rev, 0.7, H),
    );
    CALLS.with(|c| c.set(0));
    let (_, pb) = l56_effect_in_callee_vjp(0.7);
    let fwd = CALLS.with(|c| c.get());
    let _ = pb(1.0);
    let total = CALLS.with(|c| c.get());
    assert_eq!(
        (fwd, total),
        (4, 4),
        "the callee's effect ran again in the reverse"
    );
}

// L57 the body calls a #[lens] function with state: recomputation sees other values.
#[lens]
fn drifting(a: f64) -> f64 {
    let k = NEXT.with(|c| {
        let v = c.get();
        c.set(v + 1.0);
        1.0 + 0.5 * v
    });
    a * a * k
}
#[lens]
fn l57_stateful_callee(x: f64) -> f64 {
    let mut a = x;
    for _ in 0..3 {
        a = drifting(a) + x;
    }
    a
}
#[test]
fn l57() {
    let f = |x: f64| {
        NEXT.with(|c| c.set(0.0));
        l57_stateful_callee(x)
    };
    let r = |x: f64, d: f64| {
        NEXT.with(|c| c.set(0.0));
        l57_stateful_callee_rev(x, d)
    };
    ok("l57", check_gradient(f, r, 0.4, H));
}

// L58 a constructor with an effect in a forward-only let of the body (`new` is whitelisted).
pub struct Noisy(f64);
impl Noisy {
    pub fn new() -> Self {
        NEWS.with(|c| c.set(c.get() + 1));
        Noisy(2.0)
    }
}
#[lens]
fn l58_new_effect(x: f64) -> f64 {
    let mut a = x;
    for _ in 0..3 {
        let n = Noisy::new();
        a = a * x + n.0;
    }
    a
}
#[test]
fn l58() {
    ok(
        "l58",
        check_gradient(l58_new_effect, l58_new_effect_rev, 0.5, H),
    );
    NEWS.with(|c| c.set(0));
    let (_, pb) = l58_new_effect_vjp(0.5);
    let fwd = NEWS.with(|c| c.get());
    let _ = pb(1.0);
    let total = NEWS.with(|c| c.get());
    assert_eq!((fwd, total), (3, 3), "Noisy::new ran again in the reverse");
}

// L59 runtime start and runtime step of the range (forward-only arguments).
#[lens]
fn l59_runtime_range(x: f64, start: usize, step: usize) -> f64 {
    let mut a = x;
    for i in (start..6).step_by(step) {
        a = a * x + (i as f64) * a.cos();
    }
    a
}
#[test]
fn l59() {
    for (s, k) in [(0, 1), (1, 2), (2, 3), (5, 1), (6, 1)] {
        ok(
            "l59",
            check_gradient(
                |x| l59_runtime_range(x, s, k),
                |x, d| l59_runtime_range_rev(x, s, k, d),
                0.6,
                H,
            ),
        );
    }
}

// L60 nested loops where the inner does not read the outer counter (both recomputed).
#[lens]
fn l60_nested_pure(x: f64, y: f64) -> f64 {
    let mut a = x;
    let mut s = 0.0;
    for _ in 0..3 {
        let mut b = a;
        let mut c = 0.0;
        for k in 0..3 {
            c = c + b;
            b = b * y + k as f64 * 0.1;
        }
        a = c * 0.3 + b.tanh();
        s = s + a;
    }
    s
}
#[test]
fn l60() {
    ok(
        "l60",
        check_gradient(
            |(x, y)| l60_nested_pure(x, y),
            |(x, y), d| l60_nested_pure_rev(x, y, d),
            (0.5, 0.8),
            H,
        ),
    );
}

// L61 an array of vectors carried and indexed by the counter.
#[lens]
fn l61_array_of_vectors(x: SVector<f64, 2>) -> f64 {
    let mut arr = [x, x * 2.0, x * 3.0];
    let mut s = 0.0;
    for i in 0..3 {
        arr = [arr[1], arr[2], arr[0] + x];
        s = s + arr[i % 3].dot(&x);
    }
    s
}
#[test]
fn l61() {
    ok(
        "l61",
        check_gradient(
            l61_array_of_vectors,
            l61_array_of_vectors_rev,
            V2::new(0.4, -0.3),
            H,
        ),
    );
}

// L62 a para! model with a loop whose body calls a sub-model (no `map`, so recomputed).
para! {
    pub struct Rec2 {
        cell: Dense<2, 2, f64>,
        #[nodiff]
        scale: f64,
    }
    fn forward(&self, x: SVector<f64, 2>) -> f64 {
        let mut h = x;
        let mut s = 0.0;
        for k in 0..4 {
            let z = self.cell(h) * self.scale;
            h = z.component_mul(&z) * 0.3 + x;
            s = s + h.dot(&x) * (k as f64 + 1.0);
        }
        s
    }
}
#[test]
fn l62() {
    let model = Rec2 {
        cell: Dense::new(),
        scale: 0.8,
    };
    let p = model.init(7);
    let x = V2::new(0.3, -0.6);
    let (dp, dx) = model.changes(&p, x, 1.0);
    let mut worst: f64 = 0.0;
    for i in 0..2 {
        for j in 0..2 {
            let (mut a, mut b) = (p.clone(), p.clone());
            a.cell.w[(i, j)] += H;
            b.cell.w[(i, j)] -= H;
            let num = (model.forward(&a, x) - model.forward(&b, x)) / (2.0 * H);
            worst = worst.max((num - dp.cell.w[(i, j)]).abs());
        }
        let (mut a, mut b) = (p.clone(), p.clone());
        a.cell.b[i] += H;
        b.cell.b[i] -= H;
        let num = (model.forward(&a, x) - model.forward(&b, x)) / (2.0 * H);
        worst = worst.max((num - dp.cell.b[i]).abs());
        let (mut xa, mut xb) = (x, x);
        xa[i] += H;
        xb[i] -= H;
        let num = (model.forward(&p, xa) - model.forward(&p, xb)) / (2.0 * H);
        worst = worst.max((num - dx[i]).abs());
    }
    assert!(worst < 1e-6, "largest error {worst}");
    let mut only = <Rec2 as Init>::Param::zeros();
    let (_, pull) = model.vjp_params(&p, x);
    pull(1.0, &mut only);
    assert!((*only.cell.w - *dp.cell.w).amax() < 1e-12);
    assert!((only.cell.b - dp.cell.b).amax() < 1e-12);
}

// L63 para! loop where the carried value enters the sub-model only linearly-adjacent:
// a sum of sub-model outputs of the input, carried value only summed.
para! {
    pub struct Rec3 {
        cell: Dense<2, 2, f64>,
    }
    fn forward(&self, x: SVector<f64, 2>) -> f64 {
        let mut acc = x;
        let mut y = x;
        for _ in 0..3 {
            y = self.cell(y);
            acc = acc + y;
        }
        acc.norm_squared()
    }
}
#[test]
fn l63() {
    let model = Rec3 { cell: Dense::new() };
    let p = model.init(11);
    let x = V2::new(0.5, -0.2);
    let (dp, dx) = model.changes(&p, x, 1.0);
    let mut worst: f64 = 0.0;
    for i in 0..2 {
        for j in 0..2 {
            let (mut a, mut b) = (p.clone(), p.clone());
            a.cell.w[(i, j)] += H;
            b.cell.w[(i, j)] -= H;
            let num = (model.forward(&a, x) - model.forward(&b, x)) / (2.0 * H);
            worst = worst.max((num - dp.cell.w[(i, j)]).abs());
        }
        let (mut xa, mut xb) = (x, x);
        xa[i] += H;
        xb[i] -= H;
        let num = (model.forward(&p, xa) - model.forward(&p, xb)) / (2.0 * H);
        worst = worst.max((num - dx[i]).abs());
    }
    assert!(worst < 1e-6, "largest error {worst}");
}

// L64 para! loop with mul_add on the carried value.
para! {
    pub struct Rec4 {
        cell: Dense<1, 1, f64>,
    }
    fn forward(&self, x: SVector<f64, 1>) -> f64 {
        let mut acc: f64 = 1.0;
        let y = self.cell(x);
        for _ in 0..3 {
            acc = acc.mul_add(y[0], 0.5);
        }
        acc
    }
}
#[test]
fn l64() {
    let model = Rec4 { cell: Dense::new() };
    let p = model.init(3);
    let x = SVector::<f64, 1>::new(0.7);
    let (dp, dx) = model.changes(&p, x, 1.0);
    let mut xa = x;
    xa[0] += H;
    let mut xb = x;
    xb[0] -= H;
    let num = (model.forward(&p, xa) - model.forward(&p, xb)) / (2.0 * H);
    let (mut a, mut b) = (p.clone(), p.clone());
    a.cell.w[(0, 0)] += H;
    b.cell.w[(0, 0)] -= H;
    let numw = (model.forward(&a, x) - model.forward(&b, x)) / (2.0 * H);
    assert!(
        (num - dx[0]).abs() < 1e-6 && (numw - dp.cell.w[(0, 0)]).abs() < 1e-6,
        "dx {} vs {num}; dw {} vs {numw}",
        dx[0],
        dp.cell.w[(0, 0)]
    );
}

// L65 a Horner loop written with `*` and `+` (the correct counterpart of L01).
#[lens]
fn l65_horner(x: f64) -> f64 {
    let mut acc = 1.0;
    for k in 0..4 {
        acc = acc * x + (k as f64 + 0.5);
    }
    acc
}
#[test]
fn l65() {
    ok("l65", check_gradient(l65_horner, l65_horner_rev, 0.7, H));
    let a = l01_horner_mul_add_rev(0.7, 1.0);
    let b = l65_horner_rev(0.7, 1.0);
    assert!((a - b).abs() < 1e-12, "mul_add loop {a} vs * + loop {b}");
}

// ---------------------------------------------------------------- feature 2: entry writes

// E01 overwrite then read.
#[lens]
fn e01_overwrite_read(v: SVector<f64, 3>, x: f64) -> f64 {
    let mut v = v;
    v[1] = x * x;
    v.dot(&v) + v[1] * v[0]
}
#[test]
fn e01() {
    ok(
        "e01",
        check_gradient(
            |(v, x)| e01_overwrite_read(v, x),
            |(v, x), d| e01_overwrite_read_rev(v, x, d),
            (V3::new(0.3, -0.4, 0.9), 0.7),
            H,
        ),
    );
}

// E02 read then overwrite (the old value survives in a binding).
#[lens]
fn e02_read_overwrite(v: SVector<f64, 3>) -> f64 {
    let mut w = v;
    let old = w[1];
    w[1] = old * 2.0 + w[0];
    w[0] = w[1] * w[2];
    old * w[1] + w.sum() + v.dot(&w)
}
#[test]
fn e02() {
    ok(
        "e02",
        check_gradient(
            e02_read_overwrite,
            e02_read_overwrite_rev,
            V3::new(0.3, -0.4, 0.9),
            H,
        ),
    );
}

// E03 write in one loop, read in another.
#[lens]
fn e03_two_loops<const N: usize>(x: SVector<f64, N>) -> f64 {
    let mut y = x;
    for i in 1..N {
        y[i] = y[i - 1] * x[i] + y[i].sin();
    }
    let mut s = 0.0;
    for i in 0..N {
        s = s + y[i] * y[i] * (i as f64 + 1.0);
    }
    s
}
#[test]
fn e03() {
    let x = SVector::<f64, 5>::new(0.3, -0.7, 1.1, 0.4, -0.2);
    ok(
        "e03",
        check_gradient(e03_two_loops::<5>, e03_two_loops_rev::<5>, x, H),
    );
}

// E04 write inside `if` without else (differentiated vector).
#[lens]
fn e04_if_no_else(v: SVector<f64, 3>, flag: bool) -> f64 {
    let mut v = v;
    if flag {
        v[2] = v[0] * v[1];
    }
    v.norm_squared()
}
#[test]
fn e04() {
    for flag in [true, false] {
        ok(
            "e04",
            check_gradient(
                |v| e04_if_no_else(v, flag),
                |v, d| e04_if_no_else_rev(v, flag, d),
                V3::new(0.3, -0.4, 0.9),
                H,
            ),
        );
    }
}

// E05 write into a forward-only zeros vector inside `if` without else.
#[lens]
fn e05_zeros_if(x: SVector<f64, 3>, flag: bool) -> f64 {
    let mut w = SVector::<f64, 3>::zeros();
    if flag {
        w[0] = x[1] * x[2];
    }
    w.dot(&x) + x[0]
}
#[test]
fn e05() {
    for flag in [true, false] {
        ok(
            "e05",
            check_gradient(
                |v| e05_zeros_if(v, flag),
                |v, d| e05_zeros_if_rev(v, flag, d),
                V3::new(0.3, -0.4, 0.9),
                H,
            ),
        );
    }
}

// E06 forward-only zeros written in a loop under an `if` without else.
#[lens]
fn e06_zeros_loop_if(x: SVector<f64, 3>) -> f64 {
    let mut w = SVector::<f64, 3>::zeros();
    for i in 0..3 {
        if i != 1 {
            w[i] = x[i] * x[i];
        }
    }
    w.dot(&x)
}
#[test]
fn e06() {
    ok(
        "e06",
        check_gradient(
            e06_zeros_loop_if,
            e06_zeros_loop_if_rev,
            V3::new(0.3, -0.4, 0.9),
            H,
        ),
    );
}

// E07 a matrix built entry by entry in nested loops.
#[lens]
fn e07_outer(a: SVector<f64, 3>, b: SVector<f64, 2>) -> f64 {
    let mut m = SMatrix::<f64, 3, 2>::zeros();
    for r in 0..3 {
        for c in 0..2 {
            m[(r, c)] = a[r] * b[c] + (r + c) as f64;
        }
    }
    (m * b).dot(&a) + m.norm_squared()
}
#[test]
fn e07() {
    ok(
        "e07",
        check_gradient(
            |(a, b)| e07_outer(a, b),
            |(a, b), d| e07_outer_rev(a, b, d),
            (V3::new(0.3, -0.4, 0.9), V2::new(0.6, -1.1)),
            H,
        ),
    );
}

// E08 indices computed from the loop counter: a reversed copy and a strided `+=`.
#[lens]
fn e08_counter_index<const N: usize>(x: SVector<f64, N>, s: f64) -> f64 {
    let mut v = SVector::<f64, N>::zeros();
    for i in 0..N {
        v[N - 1 - i] = x[i] * s;
    }
    let mut u = x;
    for i in 0..N {
        u[(i * 2) % N] += v[i] * u[i];
    }
    u.dot(&v)
}
#[test]
fn e08() {
    let x = SVector::<f64, 5>::new(0.3, -0.7, 1.1, 0.4, -0.2);
    ok(
        "e08",
        check_gradient(
            |(x, s)| e08_counter_index::<5>(x, s),
            |(x, s), d| e08_counter_index_rev::<5>(x, s, d),
            (x, 0.8),
            H,
        ),
    );
}

// E09 compound assignments on array entries.
#[lens]
fn e09_array_ops(x: f64, y: f64) -> f64 {
    let mut a = [x, y, x * y];
    for i in 0..3 {
        a[i] *= x + i as f64;
        a[(i + 1) % 3] -= a[i] * 0.5;
        a[i] /= 1.0 + y * y;
    }
    a[0] * a[1] + a[2]
}
#[test]
fn e09() {
    ok(
        "e09",
        check_gradient(
            |(x, y)| e09_array_ops(x, y),
            |(x, y), d| e09_array_ops_rev(x, y, d),
            (0.7, -0.4),
            H,
        ),
    );
}

// E10 matrix `+=` by pair and assignment by column-major position.
#[lens]
fn e10_matrix_ops(m: SMatrix<f64, 2, 2>, s: f64) -> f64 {
    let mut m = m;
    m[(1, 0)] += s * m[(0, 1)];
    m[3] = m[0] * s;
    m[(0, 0)] *= m[(1, 1)];
    m.sum() + m[(0, 0)] * m[3]
}
#[test]
fn e10() {
    let m = SMatrix::<f64, 2, 2>::new(0.3, -0.4, 1.5, 0.9);
    ok(
        "e10",
        check_gradient(
            |(m, s)| e10_matrix_ops(m, s),
            |(m, s), d| e10_matrix_ops_rev(m, s, d),
            (m, 0.7),
            H,
        ),
    );
}

// E11 an array of vectors written by a recurrence.
#[lens]
fn e11_array_vectors(x: SVector<f64, 2>) -> f64 {
    let mut arr = [x, x, x, x];
    for i in 1..4 {
        arr[i] = arr[i - 1].component_mul(&x) * 2.0 + x;
    }
    arr[3].dot(&arr[1])
}
#[test]
fn e11() {
    ok(
        "e11",
        check_gradient(
            e11_array_vectors,
            e11_array_vectors_rev,
            V2::new(0.4, -0.3),
            H,
        ),
    );
}

// E12 the same entry overwritten twice; the old value read through an alias first.
#[lens]
fn e12_twice(v: SVector<f64, 3>, x: f64) -> f64 {
    let mut w = v;
    let alias = w;
    w[1] = x;
    w[1] = w[1] * w[1] + alias[1];
    w.dot(&alias)
}
#[test]
fn e12() {
    ok(
        "e12",
        check_gradient(
            |(v, x)| e12_twice(v, x),
            |(v, x), d| e12_twice_rev(v, x, d),
            (V3::new(0.3, -0.4, 0.9), 0.6),
            H,
        ),
    );
}

// E13 swap of two entries.
#[lens]
fn e13_swap(v: SVector<f64, 3>) -> f64 {
    let mut w = v;
    let t = w[0];
    w[0] = w[2];
    w[2] = t;
    w.dot(&SVector::<f64, 3>::new(1.0, 2.0, 3.0)) * v[0]
}
#[test]
fn e13() {
    ok(
        "e13",
        check_gradient(e13_swap, e13_swap_rev, V3::new(0.3, -0.4, 0.9), H),
    );
}

// E14 entry written inside a match arm.
#[lens]
fn e14_match(v: SVector<f64, 3>, k: usize) -> f64 {
    let mut w = v;
    match k {
        0 => w[0] = w[1] * w[2],
        1 => {
            w[1] += w[0];
            w[2] *= 2.0;
        }
        _ => {}
    }
    w.norm_squared()
}
#[test]
fn e14() {
    for k in 0..3 {
        ok(
            "e14",
            check_gradient(
                |v| e14_match(v, k),
                |v, d| e14_match_rev(v, k, d),
                V3::new(0.3, -0.4, 0.9),
                H,
            ),
        );
    }
}

// E15 forward-only values written into a differentiated vector.
#[lens]
fn e15_const_write(v: SVector<f64, 3>) -> f64 {
    let mut w = v;
    w[0] = 0.0;
    w[2] = 3.0;
    w.dot(&v) * w[1]
}
#[test]
fn e15() {
    ok(
        "e15",
        check_gradient(
            e15_const_write,
            e15_const_write_rev,
            V3::new(0.3, -0.4, 0.9),
            H,
        ),
    );
    let g = e15_const_write_rev(V3::new(0.3, -0.4, 0.9), 1.0);
    let _ = g;
}

// E16 the index comes from a differentiated value through floor.
#[lens]
fn e16_floor_index(v: SVector<f64, 3>, s: f64) -> f64 {
    let mut w = v;
    let k = (s.floor() as usize).min(2);
    w[k] = s * s;
    w.dot(&v)
}
#[test]
fn e16() {
    for s in [0.4, 1.3, 2.6] {
        ok(
            "e16",
            check_gradient(
                |(v, s)| e16_floor_index(v, s),
                |(v, s), d| e16_floor_index_rev(v, s, d),
                (V3::new(0.3, -0.4, 0.9), s),
                H,
            ),
        );
    }
}

// E17 writing an entry of a `mut` argument.
#[lens]
fn e17_mut_arg(mut v: SVector<f64, 3>, x: f64) -> f64 {
    v[0] = v[0] * x;
    v[2] -= x;
    v.norm_squared()
}
#[test]
fn e17() {
    ok(
        "e17",
        check_gradient(
            |(v, x)| e17_mut_arg(v, x),
            |(v, x), d| e17_mut_arg_rev(v, x, d),
            (V3::new(0.3, -0.4, 0.9), 0.6),
            H,
        ),
    );
}

// E18 a recomputable loop writing a carried vector linearly.
#[lens]
fn e18_loop_linear(x: SVector<f64, 3>) -> f64 {
    let mut y = x;
    for i in 0..3 {
        y[i] = y[i] + y[(i + 1) % 3];
    }
    y.dot(&x)
}
#[test]
fn e18() {
    ok(
        "e18",
        check_gradient(
            e18_loop_linear,
            e18_loop_linear_rev,
            V3::new(0.3, -0.4, 0.9),
            H,
        ),
    );
}

// E19 an entry from a branch value depending on the previous entry (`if` expression).
#[lens]
fn e19_branch_value(x: f64) -> f64 {
    let mut w = SVector::<f64, 4>::zeros();
    for i in 0..4 {
        w[i] = if i == 0 { 1.0 } else { w[i - 1] * x + 0.5 };
    }
    w.sum()
}
#[test]
fn e19() {
    ok(
        "e19",
        check_gradient(e19_branch_value, e19_branch_value_rev, 0.7, H),
    );
}

// E20 an entry assigned from the whole vector's norm.
#[lens]
fn e20_norm_entry(v: SVector<f64, 3>) -> f64 {
    let mut w = v;
    w[1] = w.norm();
    w[2] = w.dot(&v);
    w.sum() * w[0]
}
#[test]
fn e20() {
    ok(
        "e20",
        check_gradient(
            e20_norm_entry,
            e20_norm_entry_rev,
            V3::new(0.3, -0.4, 0.9),
            H,
        ),
    );
}

// E21 a forward-only array literal written in a loop.
#[lens]
fn e21_array_zeros(x: f64) -> f64 {
    let mut a = [0.0; 4];
    for i in 0..4 {
        a[i] = x.powi(i as i32 + 1);
    }
    a[0] * a[3] + a[1] * a[2]
}
#[test]
fn e21() {
    ok(
        "e21",
        check_gradient(e21_array_zeros, e21_array_zeros_rev, 0.7, H),
    );
}

// E22 entry writes in a para! loop.
para! {
    pub struct Writer {
        cell: Dense<2, 2, f64>,
    }
    fn forward(&self, x: SVector<f64, 2>) -> f64 {
        let mut out = SVector::<f64, 3>::zeros();
        let mut h = x;
        for t in 0..3 {
            h = self.cell(h);
            out[t] = h.dot(&x);
        }
        out.norm_squared()
    }
}
#[test]
fn e22() {
    let model = Writer { cell: Dense::new() };
    let p = model.init(5);
    let x = V2::new(0.3, -0.6);
    let (dp, dx) = model.changes(&p, x, 1.0);
    let mut worst: f64 = 0.0;
    for i in 0..2 {
        for j in 0..2 {
            let (mut a, mut b) = (p.clone(), p.clone());
            a.cell.w[(i, j)] += H;
            b.cell.w[(i, j)] -= H;
            let num = (model.forward(&a, x) - model.forward(&b, x)) / (2.0 * H);
            worst = worst.max((num - dp.cell.w[(i, j)]).abs());
        }
        let (mut xa, mut xb) = (x, x);
        xa[i] += H;
        xb[i] -= H;
        let num = (model.forward(&p, xa) - model.forward(&p, xb)) / (2.0 * H);
        worst = worst.max((num - dx[i]).abs());
    }
    assert!(worst < 1e-6, "largest error {worst}");
}

// E23 matrix entries written inside `if` without else in a loop, by position.
#[lens]
fn e23_matrix_if_loop(m: SMatrix<f64, 2, 3>, s: f64) -> f64 {
    let mut m = m;
    for i in 0..6 {
        if i % 2 == 1 {
            m[i] = m[i - 1] * s + m[i];
        }
    }
    m.norm_squared()
}
#[test]
fn e23() {
    let m = SMatrix::<f64, 2, 3>::new(0.3, -0.4, 1.5, 0.9, 0.2, -0.7);
    ok(
        "e23",
        check_gradient(
            |(m, s)| e23_matrix_if_loop(m, s),
            |(m, s), d| e23_matrix_if_loop_rev(m, s, d),
            (m, 0.6),
            H,
        ),
    );
}

// ---------------------------------------------------------------- batch 3

// L66 the stateful callee of L57 with an effect in the loop body (tape path): reference.
#[lens]
fn l66_stateful_tape(x: f64) -> f64 {
    let mut a = x;
    for _ in 0..3 {
        RUNS.with(|r| r.set(r.get() + 1));
        a = drifting(a) + x;
    }
    a
}
#[test]
fn l66() {
    let f = |x: f64| {
        NEXT.with(|c| c.set(0.0));
        l66_stateful_tape(x)
    };
    let r = |x: f64, d: f64| {
        NEXT.with(|c| c.set(0.0));
        l66_stateful_tape_rev(x, d)
    };
    ok("l66", check_gradient(f, r, 0.4, H));
}

// L67 a carried value shadowed by a `let` after its assignment.
#[lens]
fn l67_shadow_after_assign(x: f64) -> f64 {
    let mut a = x;
    let mut s = 0.0;
    for _ in 0..3 {
        a = a + x;
        let a = a * a;
        s = s + a;
    }
    s + a
}
#[test]
fn l67() {
    ok(
        "l67",
        check_gradient(l67_shadow_after_assign, l67_shadow_after_assign_rev, 0.6, H),
    );
}

// L68 a value that becomes differentiated in one iteration only.
#[lens]
fn l68_grows(x: f64) -> f64 {
    let mut a = 0.25;
    let mut s = 0.0;
    for i in 0..4 {
        if i == 1 {
            a = x * x;
        }
        s = s + a * x;
    }
    s * a
}
#[test]
fn l68() {
    ok("l68", check_gradient(l68_grows, l68_grows_rev, 0.6, H));
}

// L69 a reset to a constant inside the loop (in a branch, and at the end of the body).
#[lens]
fn l69_reset(x: f64) -> f64 {
    let mut a = x;
    let mut s = 0.0;
    for i in 0..4 {
        s = s + a * a;
        a = a * x;
        if i == 1 {
            a = 0.5;
        }
    }
    s + a
}
#[test]
fn l69() {
    ok("l69", check_gradient(l69_reset, l69_reset_rev, 0.7, H));
}

#[lens]
fn l69b_reset_end(x: f64) -> f64 {
    let mut a = x;
    let mut s = 0.0;
    for _ in 0..3 {
        a = a + x;
        s = s + a * a;
        a = 0.25;
    }
    s + a
}
#[test]
fn l69b() {
    ok(
        "l69b",
        check_gradient(l69b_reset_end, l69b_reset_end_rev, 0.7, H),
    );
}

// L70 alias of a carried value read by a forward-only comparison.
#[lens]
fn l70_alias_cmp(x: SVector<f64, 2>) -> f64 {
    let mut a = 0.0;
    let mut s = 0.0;
    for _ in 0..5 {
        a = a + x[0];
        let k = a;
        let j = (k > 1.0) as usize;
        s = s + x[j] * x[1];
    }
    s
}
#[test]
fn l70() {
    ok(
        "l70",
        check_gradient(l70_alias_cmp, l70_alias_cmp_rev, V2::new(0.45, -0.8), H),
    );
}

// L71 carried struct / tuple / array updated only linearly, read non-linearly afterwards.
#[lens]
fn l71_linear_aggregates(x: f64, y: f64) -> f64 {
    let mut st = State { pos: x, vel: y };
    let mut p = (x, y);
    let mut arr = [x, y];
    for _ in 0..4 {
        st = State {
            pos: st.pos + st.vel,
            vel: st.vel - x,
        };
        p = (p.0 + p.1, p.1 + y);
        arr = [arr[0] - arr[1], arr[1] + x];
    }
    st.pos * st.vel + p.0 * p.1 + arr[0] * arr[1]
}
#[test]
fn l71() {
    ok(
        "l71",
        check_gradient(
            |(x, y)| l71_linear_aggregates(x, y),
            |(x, y), d| l71_linear_aggregates_rev(x, y, d),
            (0.4, -0.7),
            H,
        ),
    );
}

// L72 `(0..=N).rev().step_by(2)` with a const generic.
#[lens]
fn l72_rev_step<const N: usize>(x: f64) -> f64 {
    let mut a = x;
    for k in (0..=N).rev().step_by(2) {
        a = a * a * 0.3 + x * k as f64;
    }
    a
}
#[test]
fn l72() {
    ok(
        "l72_5",
        check_gradient(l72_rev_step::<5>, l72_rev_step_rev::<5>, 0.7, H),
    );
    ok(
        "l72_4",
        check_gradient(l72_rev_step::<4>, l72_rev_step_rev::<4>, 0.7, H),
    );
}

// L73 a carried matrix and vector, linear only, then a product.
#[lens]
fn l73_matrix_linear(m: SMatrix<f64, 2, 2>) -> f64 {
    let mut a = m;
    for _ in 0..3 {
        a = a + m.transpose() - a * 0.5;
    }
    (a * a).sum()
}
#[test]
fn l73() {
    ok(
        "l73",
        check_gradient(
            l73_matrix_linear,
            l73_matrix_linear_rev,
            SMatrix::<f64, 2, 2>::new(0.3, -0.4, 1.5, 0.9),
            H,
        ),
    );
}

// L74 a nested loop where the inner loop's carried value is only summed, outer is a product.
#[lens]
fn l74_nested_sum(x: SVector<f64, 3>) -> f64 {
    let mut p = 1.0;
    for i in 0..3 {
        let mut s = 0.0;
        for j in 0..3 {
            s = s + x[j] * (i + j) as f64;
        }
        p = p * (s + x[i]);
    }
    p
}
#[test]
fn l74() {
    ok(
        "l74",
        check_gradient(
            l74_nested_sum,
            l74_nested_sum_rev,
            V3::new(0.3, -0.4, 0.9),
            H,
        ),
    );
}

// L75 a value computed before the loop from the carried init, read inside (free, not carried).
#[lens]
fn l75_free_and_carried(x: f64) -> f64 {
    let mut a = x;
    let b = a * 3.0;
    for _ in 0..4 {
        a = a * b - x;
    }
    a + b
}
#[test]
fn l75() {
    ok(
        "l75",
        check_gradient(l75_free_and_carried, l75_free_and_carried_rev, 0.4, H),
    );
}

// L76 the carried value used as the `min`/`max` bound of an index clamp and an `if` inside a
// nested block.
#[lens]
fn l76_block_cond(x: SVector<f64, 3>) -> f64 {
    let mut a = 0.0;
    let mut s = 0.0;
    for _ in 0..4 {
        a = a + 0.6;
        let v = {
            let i = (a as usize).min(2);
            x[i]
        };
        s = s + v * v;
    }
    s
}
#[test]
fn l76() {
    ok(
        "l76",
        check_gradient(
            l76_block_cond,
            l76_block_cond_rev,
            V3::new(0.3, -0.4, 0.9),
            H,
        ),
    );
}

// L77 clamp with the carried value as the receiver, used linearly otherwise.
#[lens]
fn l77_clamp(x: f64) -> f64 {
    let mut a = 0.0;
    let mut s = 0.0;
    for _ in 0..5 {
        a = a + x;
        s = s + a.clamp(0.2, 0.9) * x;
    }
    s
}
#[test]
fn l77() {
    ok("l77", check_gradient(l77_clamp, l77_clamp_rev, 0.35, H));
}

// E24 a forward-only vector written with forward-only values inside a differentiated loop.
#[lens]
fn e24_fwd_mask(x: SVector<f64, 3>) -> f64 {
    let mut mask = SVector::<f64, 3>::zeros();
    let mut acc = 0.0;
    for i in 0..3 {
        mask[i] = i as f64 + 1.0;
        acc = acc + x[i] * mask[i] * x[i];
    }
    acc + mask.dot(&x)
}
#[test]
fn e24() {
    ok(
        "e24",
        check_gradient(e24_fwd_mask, e24_fwd_mask_rev, V3::new(0.3, -0.4, 0.9), H),
    );
}

// E25 writes in both branches (different entries), and a shadowed copy written in a branch.
#[lens]
fn e25_both_branches(v: SVector<f64, 3>, flag: bool) -> f64 {
    let mut w = v;
    if flag {
        w[0] = w[1] * w[2];
    } else {
        w[2] += w[0] * 3.0;
    }
    if !flag {
        let mut w = w;
        w[1] = 100.0;
        let _unused = w.sum();
    }
    w.norm_squared() + w[1]
}
#[test]
fn e25() {
    for flag in [true, false] {
        ok(
            "e25",
            check_gradient(
                |v| e25_both_branches(v, flag),
                |v, d| e25_both_branches_rev(v, flag, d),
                V3::new(0.3, -0.4, 0.9),
                H,
            ),
        );
    }
}

// E26 the index is `imax` of a differentiated vector.
#[lens]
fn e26_imax_index(v: SVector<f64, 3>) -> f64 {
    let mut w = v;
    let k = v.imax();
    w[k] = w[k] * w[k] * 0.5;
    w.dot(&v)
}
#[test]
fn e26() {
    ok(
        "e26",
        check_gradient(
            e26_imax_index,
            e26_imax_index_rev,
            V3::new(0.3, -0.4, 0.9),
            H,
        ),
    );
}

// E27 a recomputable loop writing a carried vector with a linear carried scalar beside it.
#[lens]
fn e27_loop_scalar_and_vector(x: SVector<f64, 4>) -> f64 {
    let mut v = SVector::<f64, 4>::zeros();
    let mut s = 0.0;
    for i in 0..4 {
        s = s + x[i];
        v[i] = s * x[i];
    }
    v.norm_squared() + s
}
#[test]
fn e27() {
    ok(
        "e27",
        check_gradient(
            e27_loop_scalar_and_vector,
            e27_loop_scalar_and_vector_rev,
            V4::new(0.3, -0.4, 0.9, 0.5),
            H,
        ),
    );
}

// ------------------------------------------- compile probes that used to fail, now fixed

// A carried value whose start is never read (the recomputed loop dropped the pullback that
// typed its zero).
#[lens]
fn ce01(x: f64) -> f64 {
    let mut a: f64 = 0.0;
    let mut b = x;
    for _ in 0..4 {
        a = b * b;
        b = a + x;
    }
    a + b
}
#[lens]
fn ce01c(x: f64) -> f64 {
    let mut last = x;
    for k in 0..3 {
        last = x * (k as f64);
    }
    last
}
#[test]
fn carried_values_whose_start_is_never_read() {
    ok("ce01", check_gradient(ce01, ce01_rev, 0.3, H));
    ok("ce01c", check_gradient(ce01c, ce01c_rev, 0.7, H));
    assert!((ce01c_rev(0.7, 1.0) - 2.0).abs() < 1e-12);
}

// `||` and a match guard reading an outside `Vec`, which is used after the loop: not moved.
#[lens]
fn ce02(x: f64, #[nodiff] w: Vec<f64>) -> f64 {
    let mut acc = 0.0;
    for i in 0..3 {
        let big = false || w[i] > 1.0;
        acc = acc + x * x * (big as i32 as f64);
    }
    acc * w.len() as f64
}
#[lens]
fn ce03(x: f64, #[nodiff] w: Vec<f64>) -> f64 {
    let mut acc = 0.0;
    for i in 0..3 {
        match i {
            k if k < w.len() => acc = acc + x * x,
            _ => acc = acc + x,
        }
    }
    acc * w.len() as f64
}
#[test]
fn outside_values_read_by_or_and_guards() {
    let w = vec![0.5, 2.0, 3.0];
    // Two of three entries are big: 2 x^2 * 3 -> 12 x.
    assert!((ce02_rev(0.5, w.clone(), 1.0) - 6.0).abs() < 1e-12);
    // Every counter passes the guard: 3 x^2 * 3 -> 18 x.
    assert!((ce03_rev(0.5, w, 1.0) - 9.0).abs() < 1e-12);
}

para! {
    /// A carried value overwritten by a sub-model each iteration.
    pub struct Last {
        cell: Dense<2, 2, f64>,
    }
    fn forward(&self, x: SVector<f64, 2>) -> SVector<f64, 2> {
        let mut y = x;
        for _ in 0..3 {
            y = self.cell(x);
        }
        y
    }
}
#[test]
fn a_sub_model_overwriting_a_carried_value_in_para() {
    let m = Last { cell: Dense::new() };
    let p = m.init(2);
    let x = V2::new(0.3, -0.8);
    let (y, pull) = Para::vjp(&m, &p, x);
    let mut dp = <LastParams as Tangent>::zeros();
    let dx = pull(V2::new(1.0, 0.5), &mut dp);
    // Only the last iteration's output is the result: the same as one call.
    let (y1, pull1) = Para::vjp(&m.cell, &p.cell, x);
    let mut dp1 = Tangent::zeros();
    let dx1 = pull1(V2::new(1.0, 0.5), &mut dp1);
    assert_eq!(y, y1);
    assert!((dx - dx1).amax() < 1e-12);
    assert!((*dp.cell.w - *dp1.w).amax() < 1e-12);
}
