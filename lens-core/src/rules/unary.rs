//! The float methods people write, for every [`Real`] scalar (so `#[lens]` functions generic
//! over `T: Real` work too): those of one operand (`exp`, `sin`, `cbrt`, ...) generated from
//! the one list `lens-macros/src/unary.rules`, and `powi powf max min` here.

use crate::Real;
use nalgebra::SMatrix;

macro_rules! unary_rule {
    ($(#[$doc:meta])* $rule:ident :: $m:ident, |$x:ident, $y:ident, $d:ident| $fwd:expr => $rev:expr) => {
        $(#[$doc])*
        ///
        /// Implemented for `f32` and `f64` (and a supertrait of [`Real`], so generic code
        /// calls it on `T: Real`): on another type, `.method()` in a `#[lens]` body is one
        /// error naming the type, with nothing following from a value of the wrong type.
        #[diagnostic::on_unimplemented(
            message = "no reverse rule for this float method on `{Self}`",
            label = "differentiated here, and `{Self}` is not a float scalar",
            note = "the float methods (`exp`, `sin`, ...) are differentiated on `f32` and `f64`; for every entry of a matrix, write `m.map(f)` with `f` a `#[lens]` function"
        )]
        pub trait $rule: Sized {
            /// The value's type, `Self`.
            type Out;
            /// The forward value and its pullback.
            fn $m(self) -> (Self::Out, impl FnOnce(Self::Out) -> Self);
        }

        unary_rule!(@impl $rule :: $m, f32, |$x, $y, $d| $fwd => $rev);
        unary_rule!(@impl $rule :: $m, f64, |$x, $y, $d| $fwd => $rev);
    };
    (@impl $rule:ident :: $m:ident, $t:ty, |$x:ident, $y:ident, $d:ident| $fwd:expr => $rev:expr) => {
        impl $rule for $t {
            type Out = $t;
            #[inline]
            fn $m(self) -> ($t, impl FnOnce($t) -> $t) {
                #[inline(always)]
                fn rule<T: Real>($x: T) -> (T, impl FnOnce(T) -> T) {
                    let $y: T = $fwd;
                    ($y, #[inline(always)] move |$d: T| {
                        let _ = ($x, $y);
                        $rev
                    })
                }
                rule(self)
            }
        }
    };
}

// Every rule of a float method of one operand, and `UnaryRules`, from the one list in
// `lens-macros/src/unary.rules`, which the macro's table of primitives reads too.
lens_macros::__unary_rules!();

/// The rule trait of a float method of several operands, implemented for `f32` and `f64`
/// alone through the generic body `$body` (and a supertrait of [`Real`], so generic code
/// calls it on `T: Real`), with the message for another type.
macro_rules! several_operands {
    ($(#[$doc:meta])* $rule:ident :: $m:ident ($($arg:ident: $ty:ty),*) -> $back:ty => $body:ident) => {
        $(#[$doc])*
        #[diagnostic::on_unimplemented(
            message = "no reverse rule for this float method on `{Self}`",
            label = "differentiated here, and `{Self}` is not a float scalar",
            note = "`max`, `min`, `powi`, `powf`, `atan2`, `hypot`, `mul_add` and `clamp` are differentiated on `f32` and `f64`; of a vector or matrix, `m.max()` and `m.min()` (no argument) are its largest and smallest entries, and `m.map(f)` applies a `#[lens]` function `f` to every entry"
        )]
        pub trait $rule: Sized {
            /// The forward value and its pullback.
            fn $m(self, $($arg: $ty),*) -> (Self, impl FnOnce(Self) -> $back);
        }

        several_operands!(@impl f32, $rule :: $m ($($arg: $ty),*) -> $back => $body);
        several_operands!(@impl f64, $rule :: $m ($($arg: $ty),*) -> $back => $body);
    };
    (@impl $t:ty, $rule:ident :: $m:ident ($($arg:ident: $ty:ty),*) -> $back:ty => $body:ident) => {
        impl $rule for $t {
            #[inline]
            fn $m(self, $($arg: $ty),*) -> (Self, impl FnOnce(Self) -> $back) {
                $body(self, $($arg),*)
            }
        }
    };
}
pub(crate) use several_operands;

several_operands!(
    /// `x.powi(n)`; reverse `d n x^(n-1)` (the integer exponent gets no change).
    PowiRule::powi_vjp(n: i32) -> Self => powi_rule);
several_operands!(
    /// `x.powf(a)`; reverse `(d a x^(a-1), d x^a ln x)` (the first is 0 where `a = 0`, the
    /// second where `x <= 0`).
    PowfRule::powf_vjp(a: Self) -> (Self, Self) => powf_rule);
several_operands!(
    /// `x.max(y)`; the change goes to the larger operand (to `x` on a tie); a NaN operand is
    /// ignored, as `f64::max` ignores it.
    MaxRule::max_vjp(y: Self) -> (Self, Self) => max_rule);
several_operands!(
    /// `x.min(y)`; the change goes to the smaller operand (to `x` on a tie); a NaN operand is
    /// ignored, as `f64::min` ignores it.
    MinRule::min_vjp(y: Self) -> (Self, Self) => min_rule);

#[inline(always)]
fn powi_rule<T: Real>(x: T, n: i32) -> (T, impl FnOnce(T) -> T) {
    (
        x.powi(n),
        #[inline(always)]
        move |d: T| {
            if n == 0 {
                T::zero()
            } else {
                d * T::cst(f64::from(n)) * x.powi(n - 1)
            }
        },
    )
}

#[inline(always)]
fn powf_rule<T: Real>(x: T, a: T) -> (T, impl FnOnce(T) -> (T, T)) {
    let y = x.powf(a);
    (
        y,
        #[inline(always)]
        move |d: T| {
            // `x^0` is 1 everywhere: its change is 0, where `0 x^-1` is NaN at `x = 0`.
            let dx = if a == T::zero() {
                T::zero()
            } else {
                d * a * x.powf(a - T::one())
            };
            let da = if x > T::zero() {
                d * y * x.ln()
            } else {
                T::zero()
            };
            (dx, da)
        },
    )
}

#[inline(always)]
fn max_rule<T: Real>(x: T, y: T) -> (T, impl FnOnce(T) -> (T, T)) {
    // As `f64::max`: a NaN operand is ignored (the value and the change are the other's).
    #[allow(clippy::eq_op)]
    let first = y != y || x >= y;
    (
        if first { x } else { y },
        #[inline(always)]
        move |d: T| {
            if first {
                (d, T::zero())
            } else {
                (T::zero(), d)
            }
        },
    )
}

#[inline(always)]
fn min_rule<T: Real>(x: T, y: T) -> (T, impl FnOnce(T) -> (T, T)) {
    // As `f64::min`: a NaN operand is ignored (the value and the change are the other's).
    #[allow(clippy::eq_op)]
    let first = y != y || x <= y;
    (
        if first { x } else { y },
        #[inline(always)]
        move |d: T| {
            if first {
                (d, T::zero())
            } else {
                (T::zero(), d)
            }
        },
    )
}

/// `|a|` entry by entry on a heap matrix, in a block of its own; reverse `d sign(a)` entry by
/// entry (0 where an entry is 0), in the block of `d`.
#[cfg(feature = "alloc")]
impl<T: Real, const R: usize, const C: usize> AbsRule for crate::HeapMatrix<T, R, C> {
    type Out = Self;
    #[inline]
    fn abs_vjp(self) -> (Self, impl FnOnce(Self) -> Self) {
        let mut y = self.clone();
        for v in y.as_mut_slice() {
            *v = v.abs();
        }
        (
            y,
            #[inline(always)]
            move |mut d: Self| {
                for (d, &x) in d.as_mut_slice().iter_mut().zip(self.as_slice()) {
                    *d = if x > T::zero() {
                        *d
                    } else if x < T::zero() {
                        -*d
                    } else {
                        T::zero()
                    };
                }
                d
            },
        )
    }
}

/// `|a|` entry by entry; reverse `d sign(a)` entry by entry (0 where an entry is 0).
impl<T: Real, const R: usize, const C: usize> AbsRule for SMatrix<T, R, C> {
    type Out = Self;
    #[inline]
    fn abs_vjp(self) -> (Self, impl FnOnce(Self) -> Self) {
        (
            self.abs(),
            #[inline(always)]
            move |d: Self| {
                d.zip_map(&self, |d, x| {
                    if x > T::zero() {
                        d
                    } else if x < T::zero() {
                        -d
                    } else {
                        T::zero()
                    }
                })
            },
        )
    }
}
