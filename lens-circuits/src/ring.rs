//! Polynomial circuits over finite rings and a semiring: the same reverse rules as over the
//! reals (`+` gives `(d, d)`, `*` gives `(y d, x d)`), with the ring's own arithmetic. The
//! `#[lens]` macro only sees operators, so bodies over these types differentiate unchanged.
//!
//! - [`Z2k`]: integers modulo `2^k` (wrapping `u8`, `u16`, `u32`, `u64`);
//! - [`Zp`]: integers modulo a prime `P`;
//! - [`Sat`]: the saturating semiring `{0, ..., N}` (addition and multiplication capped at
//!   `N`), which has no negation.

use core::fmt;
use core::ops::{Add, Mul, Neg, Sub};
use lens_core::Tangent;
use lens_core::rules::{AddRule, MulRule, NegRule, SquareRule, SubRule};

/// Implements the polynomial reverse rules for a ring type.
macro_rules! ring_rules {
    ($t:ty $(, $($g:tt)*)?) => {
        impl<$($($g)*)?> AddRule for $t {
            type Out = Self;
            #[inline]
            fn add_vjp(self, y: Self) -> (Self, impl FnOnce(Self) -> (Self, Self)) {
                (self + y, #[inline(always)] |d: Self| (d, d))
            }
        }
        impl<$($($g)*)?> MulRule for $t {
            type Out = Self;
            #[inline]
            fn mul_vjp(self, y: Self) -> (Self, impl FnOnce(Self) -> (Self, Self)) {
                (self * y, #[inline(always)] move |d: Self| (y * d, self * d))
            }
        }
        impl<$($($g)*)?> SquareRule for $t {
            #[inline]
            fn square_vjp(self) -> (Self, impl FnOnce(Self) -> Self) {
                (self * self, #[inline(always)] move |d: Self| (self + self) * d)
            }
        }
    };
}

/// Subtraction and negation, for rings (not the semiring).
macro_rules! ring_sub_rules {
    ($t:ty $(, $($g:tt)*)?) => {
        impl<$($($g)*)?> SubRule for $t {
            type Out = Self;
            #[inline]
            fn sub_vjp(self, y: Self) -> (Self, impl FnOnce(Self) -> (Self, Self)) {
                (self - y, #[inline(always)] |d: Self| (d, -d))
            }
        }
        impl<$($($g)*)?> NegRule for $t {
            #[inline]
            fn neg_vjp(self) -> (Self, impl FnOnce(Self) -> Self) {
                (-self, #[inline(always)] |d: Self| -d)
            }
        }
    };
}

/// An integer modulo `2^k`, `k` the width of `T` (`u8`, `u16`, `u32` or `u64`).
///
/// ```
/// use paralens::circuits::ring::Z2k;
/// assert_eq!(Z2k(250u8) + Z2k(10), Z2k(4));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Z2k<T>(pub T);

macro_rules! z2k {
    ($($u:ty),*) => {$(
        impl Add for Z2k<$u> {
            type Output = Self;
            #[inline]
            fn add(self, o: Self) -> Self { Self(self.0.wrapping_add(o.0)) }
        }
        impl Sub for Z2k<$u> {
            type Output = Self;
            #[inline]
            fn sub(self, o: Self) -> Self { Self(self.0.wrapping_sub(o.0)) }
        }
        impl Mul for Z2k<$u> {
            type Output = Self;
            #[inline]
            fn mul(self, o: Self) -> Self { Self(self.0.wrapping_mul(o.0)) }
        }
        impl Neg for Z2k<$u> {
            type Output = Self;
            #[inline]
            fn neg(self) -> Self { Self(self.0.wrapping_neg()) }
        }
        impl Tangent for Z2k<$u> {
            #[inline]
            fn zeros() -> Self { Self(0) }
            #[inline]
            fn accumulate(&mut self, o: &Self) { *self = *self + *o; }
        }
        ring_rules!(Z2k<$u>);
        ring_sub_rules!(Z2k<$u>);
    )*};
}
z2k!(u8, u16, u32, u64);

/// An integer modulo the prime `P` (`P < 2^32`, so products fit a `u64`).
///
/// ```
/// use paralens::circuits::ring::Zp;
/// let x = Zp::<7>::new(5);
/// assert_eq!(x * x, Zp::new(4)); // 25 mod 7
/// assert_eq!(-x, Zp::new(2));
/// ```
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Zp<const P: u64>(u64);

impl<const P: u64> Zp<P> {
    const CHECK: () = assert!(P >= 2 && P < (1 << 32), "Zp<P> needs 2 <= P < 2^32");

    /// `v mod P`.
    #[must_use]
    pub const fn new(v: u64) -> Self {
        let () = Self::CHECK;
        Self(v % P)
    }

    /// The representative in `0..P`.
    #[must_use]
    pub const fn value(self) -> u64 {
        self.0
    }
}

impl<const P: u64> fmt::Debug for Zp<P> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (mod {P})", self.0)
    }
}

impl<const P: u64> Add for Zp<P> {
    type Output = Self;
    #[inline]
    fn add(self, o: Self) -> Self {
        Self((self.0 + o.0) % P)
    }
}

impl<const P: u64> Sub for Zp<P> {
    type Output = Self;
    #[inline]
    fn sub(self, o: Self) -> Self {
        Self((self.0 + P - o.0) % P)
    }
}

impl<const P: u64> Mul for Zp<P> {
    type Output = Self;
    #[inline]
    fn mul(self, o: Self) -> Self {
        Self(self.0 * o.0 % P)
    }
}

impl<const P: u64> Neg for Zp<P> {
    type Output = Self;
    #[inline]
    fn neg(self) -> Self {
        Self((P - self.0) % P)
    }
}

impl<const P: u64> Tangent for Zp<P> {
    #[inline]
    fn zeros() -> Self {
        Self(0)
    }
    #[inline]
    fn accumulate(&mut self, o: &Self) {
        *self = *self + *o;
    }
}

ring_rules!(Zp<P>, const P: u64);
ring_sub_rules!(Zp<P>, const P: u64);

/// The saturating semiring `{0, ..., N}`: `a + b = min(a + b, N)`, `a * b = min(a b, N)`.
///
/// ```
/// use paralens::circuits::ring::Sat;
/// assert_eq!(Sat::<10>::new(7) + Sat::new(6), Sat::new(10));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Sat<const N: u64>(u64);

impl<const N: u64> Sat<N> {
    /// `min(v, N)`.
    #[must_use]
    pub const fn new(v: u64) -> Self {
        Self(if v < N { v } else { N })
    }

    /// The value in `0..=N`.
    #[must_use]
    pub const fn value(self) -> u64 {
        self.0
    }
}

impl<const N: u64> Add for Sat<N> {
    type Output = Self;
    #[inline]
    fn add(self, o: Self) -> Self {
        Self::new(self.0.saturating_add(o.0))
    }
}

impl<const N: u64> Mul for Sat<N> {
    type Output = Self;
    #[inline]
    fn mul(self, o: Self) -> Self {
        Self::new(self.0.saturating_mul(o.0))
    }
}

impl<const N: u64> Tangent for Sat<N> {
    #[inline]
    fn zeros() -> Self {
        Self(0)
    }
    #[inline]
    fn accumulate(&mut self, o: &Self) {
        *self = *self + *o;
    }
}

ring_rules!(Sat<N>, const N: u64);
