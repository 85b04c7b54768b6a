//! The scalar field of smooth lenses.

use core::fmt::{Debug, Display};

/// A real scalar: `f32` or `f64`.
///
/// Everything smooth in paralens is generic over this trait, so a model written once runs in
/// both precisions (tests use `f64` for finite differences, training uses `f32`).
///
/// The reverse rules of the float methods (`ExpRule`, `MaxRule`, ...) are supertraits: they are
/// implemented for `f32` and `f64` alone, so that a method called on another type is one
/// error, and generic code reaches them through this bound. So is `Elementwise`, so that the
/// activations of `fns` (`relu(x)`, `gelu(x)`) take a generic `T: Real`.
pub trait Real:
    nalgebra::RealField
    + Copy
    + Default
    + Debug
    + Display
    + Send
    + Sync
    + PartialOrd
    + crate::Tangent
    + crate::Flat<Self>
    + crate::gemm::SimdScalar
    + crate::span::DirectScalar
    + crate::rules::UnaryRules
    + crate::rules::PowiRule
    + crate::rules::PowfRule
    + crate::rules::MaxRule
    + crate::rules::MinRule
    + crate::rules::Atan2Rule
    + crate::rules::HypotRule
    + crate::rules::MulAddRule
    + crate::rules::ClampRule
    + crate::activation::Elementwise<Scalar = Self>
    + 'static
{
    /// Converts an `f64` constant (rounding for `f32`).
    #[must_use]
    fn cst(x: f64) -> Self;
    /// Widens to `f64` (for reporting and checks).
    #[must_use]
    fn to_f64(self) -> f64;
    /// `true` unless the value is NaN or infinite.
    #[must_use]
    fn finite(self) -> bool;
    /// `true` for NaN.
    #[must_use]
    fn is_nan_value(self) -> bool;
    /// `true` for NaN or an infinity, from the exponent bits alone (so that scans over many
    /// values vectorise).
    #[must_use]
    fn non_finite(self) -> bool;
    /// The smallest positive normal value; below it arithmetic turns subnormal and slow.
    const MIN_NORMAL: Self;
}

impl Real for f32 {
    #[inline]
    fn non_finite(self) -> bool {
        self.to_bits() & 0x7f80_0000 == 0x7f80_0000
    }
    const MIN_NORMAL: Self = f32::MIN_POSITIVE;
    #[inline]
    fn cst(x: f64) -> Self {
        x as f32
    }
    #[inline]
    fn to_f64(self) -> f64 {
        f64::from(self)
    }
    #[inline]
    fn finite(self) -> bool {
        self.is_finite()
    }
    #[inline]
    fn is_nan_value(self) -> bool {
        self.is_nan()
    }
}

impl Real for f64 {
    #[inline]
    fn non_finite(self) -> bool {
        self.to_bits() & 0x7ff0_0000_0000_0000 == 0x7ff0_0000_0000_0000
    }
    const MIN_NORMAL: Self = f64::MIN_POSITIVE;
    #[inline]
    fn cst(x: f64) -> Self {
        x
    }
    #[inline]
    fn to_f64(self) -> f64 {
        self
    }
    #[inline]
    fn finite(self) -> bool {
        self.is_finite()
    }
    #[inline]
    fn is_nan_value(self) -> bool {
        self.is_nan()
    }
}
