//! Float methods of two and three operands: `atan2`, `hypot`, `mul_add`, `clamp`.

use super::unary::several_operands;
use crate::Real;

several_operands!(
    /// `y.atan2(x)` (the angle of the point `(x, y)`); reverse
    /// `(d x / (x^2 + y^2), -d y / (x^2 + y^2))` for `(y, x)`, zero at the origin (where it has
    /// no derivative).
    Atan2Rule::atan2_vjp(x: Self) -> (Self, Self) => atan2_rule);

#[inline(always)]
fn atan2_rule<T: Real>(this: T, x: T) -> (T, impl FnOnce(T) -> (T, T)) {
    let y = this;
    (
        y.atan2(x),
        #[inline(always)]
        move |d: T| {
            let r2 = x * x + y * y;
            if r2 == T::zero() {
                // No derivative at the origin: zero, as `hypot` and `norm` give.
                (T::zero(), T::zero())
            } else {
                (d * x / r2, -d * y / r2)
            }
        },
    )
}

several_operands!(
    /// `x.hypot(y) = sqrt(x^2 + y^2)`; reverse `(d x / h, d y / h)` (zero at the origin, where
    /// it has no derivative).
    HypotRule::hypot_vjp(y: Self) -> (Self, Self) => hypot_rule);

#[inline(always)]
fn hypot_rule<T: Real>(this: T, y: T) -> (T, impl FnOnce(T) -> (T, T)) {
    let x = this;
    let h = x.hypot(y);
    (
        h,
        #[inline(always)]
        move |d: T| {
            if h == T::zero() {
                (T::zero(), T::zero())
            } else {
                (d * x / h, d * y / h)
            }
        },
    )
}

several_operands!(
    /// `x.mul_add(a, b) = x a + b`; reverse `(d a, d x, d)`.
    MulAddRule::mul_add_vjp(a: Self, b: Self) -> (Self, Self, Self) => mul_add_rule);

#[inline(always)]
fn mul_add_rule<T: Real>(this: T, a: T, b: T) -> (T, impl FnOnce(T) -> (T, T, T)) {
    (
        // Rust's own, rounded once (`x * a + b` rounds twice, and differed from it).
        this.mul_add(a, b),
        #[inline(always)]
        move |d: T| (d * a, d * this, d),
    )
}

several_operands!(
    /// `x.clamp(lo, hi)`; the change goes to whichever operand is the value: `x` inside
    /// `[lo, hi]` (bounds included), `lo` below, `hi` above.
    ClampRule::clamp_vjp(lo: Self, hi: Self) -> (Self, Self, Self) => clamp_rule);

#[inline(always)]
fn clamp_rule<T: Real>(this: T, lo: T, hi: T) -> (T, impl FnOnce(T) -> (T, T, T)) {
    // As `f64::clamp`: the function as written runs this rule, and must panic where Rust's
    // own `clamp` does.
    assert!(
        lo <= hi,
        "min > max, or either was NaN. min = {lo:?}, max = {hi:?}"
    );
    let z = T::zero();
    let (value, which) = if this < lo {
        (lo, 1)
    } else if this > hi {
        (hi, 2)
    } else {
        (this, 0)
    };
    (
        value,
        #[inline(always)]
        move |d: T| match which {
            0 => (d, z, z),
            1 => (z, d, z),
            _ => (z, z, d),
        },
    )
}
