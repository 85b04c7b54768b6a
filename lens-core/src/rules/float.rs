//! Float methods of two and three operands: `atan2`, `hypot`, `mul_add`, `clamp`.

use crate::Real;

/// `y.atan2(x)` (the angle of the point `(x, y)`); reverse
/// `(d x / (x^2 + y^2), -d y / (x^2 + y^2))` for `(y, x)`, zero at the origin (where it has
/// no derivative).
pub trait Atan2Rule: Sized {
    /// The forward value and its pullback.
    fn atan2_vjp(self, x: Self) -> (Self, impl FnOnce(Self) -> (Self, Self));
}

impl<T: Real> Atan2Rule for T {
    #[inline]
    fn atan2_vjp(self, x: T) -> (T, impl FnOnce(T) -> (T, T)) {
        let y = self;
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
}

/// `x.hypot(y) = sqrt(x^2 + y^2)`; reverse `(d x / h, d y / h)` (zero at the origin, where
/// it has no derivative).
pub trait HypotRule: Sized {
    /// The forward value and its pullback.
    fn hypot_vjp(self, y: Self) -> (Self, impl FnOnce(Self) -> (Self, Self));
}

impl<T: Real> HypotRule for T {
    #[inline]
    fn hypot_vjp(self, y: T) -> (T, impl FnOnce(T) -> (T, T)) {
        let x = self;
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
}

/// `x.mul_add(a, b) = x a + b`; reverse `(d a, d x, d)`.
pub trait MulAddRule: Sized {
    /// The forward value and its pullback.
    fn mul_add_vjp(self, a: Self, b: Self) -> (Self, impl FnOnce(Self) -> (Self, Self, Self));
}

impl<T: Real> MulAddRule for T {
    #[inline]
    fn mul_add_vjp(self, a: T, b: T) -> (T, impl FnOnce(T) -> (T, T, T)) {
        (
            self * a + b,
            #[inline(always)]
            move |d: T| (d * a, d * self, d),
        )
    }
}

/// `x.clamp(lo, hi)`; the change goes to whichever operand is the value: `x` inside
/// `[lo, hi]` (bounds included), `lo` below, `hi` above.
pub trait ClampRule: Sized {
    /// The forward value and its pullback.
    fn clamp_vjp(self, lo: Self, hi: Self) -> (Self, impl FnOnce(Self) -> (Self, Self, Self));
}

impl<T: Real> ClampRule for T {
    #[inline]
    fn clamp_vjp(self, lo: T, hi: T) -> (T, impl FnOnce(T) -> (T, T, T)) {
        let z = T::zero();
        let (value, which) = if self < lo {
            (lo, 1)
        } else if self > hi {
            (hi, 2)
        } else {
            (self, 0)
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
}
