//! Activation lenses: entry-wise on scalars and matrices, and softmax on vectors.

use crate::lens::lens_is_para;
use crate::rules::activation as rule;
use crate::{Lens, Real, Tangent};
use nalgebra::{SMatrix, SVector};

/// Values an entry-wise function can be applied to: a scalar, a static matrix of them, or a
/// [`crate::HeapMatrix`].
///
/// The input of an activation is kept (its pullback needs it) while the output is new, and
/// the pullback rewrites the output change in place: so `map_entries` reads `self` and
/// `zip_entries` consumes it, and a large matrix is never copied.
pub trait Elementwise: Tangent {
    /// The entry type.
    type Scalar: Real;
    /// A new value: `f` of every entry.
    #[must_use]
    fn map_entries(&self, f: impl FnMut(Self::Scalar) -> Self::Scalar) -> Self;
    /// `self` with every entry `s` replaced by `f(s, o)`, `o` the corresponding entry of `o`.
    #[must_use]
    fn zip_entries(
        self,
        o: &Self,
        f: impl FnMut(Self::Scalar, Self::Scalar) -> Self::Scalar,
    ) -> Self;
}

macro_rules! scalar_elementwise {
    ($($t:ty),*) => {$(
        impl Elementwise for $t {
            type Scalar = $t;
            #[inline]
            fn map_entries(&self, mut f: impl FnMut($t) -> $t) -> $t {
                f(*self)
            }
            #[inline]
            fn zip_entries(self, o: &$t, mut f: impl FnMut($t, $t) -> $t) -> $t {
                f(self, *o)
            }
        }
    )*};
}
scalar_elementwise!(f32, f64);

impl<T: Real, const R: usize, const C: usize> Elementwise for SMatrix<T, R, C> {
    type Scalar = T;
    #[inline]
    fn map_entries(&self, f: impl FnMut(T) -> T) -> Self {
        self.map(f)
    }
    #[inline]
    fn zip_entries(self, o: &Self, f: impl FnMut(T, T) -> T) -> Self {
        self.zip_map(o, f)
    }
}

#[cfg(feature = "alloc")]
impl<T: Real, const R: usize, const C: usize> Elementwise for crate::HeapMatrix<T, R, C> {
    type Scalar = T;
    #[inline]
    fn map_entries(&self, mut f: impl FnMut(T) -> T) -> Self {
        // Each entry written once, straight into the new block.
        Self::from_entries(self.as_slice().iter().map(|&x| f(x)))
    }
    #[inline]
    fn zip_entries(mut self, o: &Self, mut f: impl FnMut(T, T) -> T) -> Self {
        for (s, &v) in self.as_mut_slice().iter_mut().zip(o.as_slice()) {
            *s = f(*s, v);
        }
        self
    }
}

macro_rules! entrywise_lens {
    ($(#[$doc:meta])* $name:ident, $rule:path) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
        pub struct $name;

        impl<V: Elementwise> Lens<V> for $name {
            type Out = V;
            #[inline]
            fn apply(&self, x: V) -> V {
                x.map_entries(|v| $rule(v).0)
            }
            #[inline]
            fn apply_vjp(&self, x: V) -> (V, impl FnOnce(V) -> V) {
                (x.map_entries(|v| $rule(v).0), #[inline(always)] move |d: V| d.zip_entries(&x, |dv, v| $rule(v).1(dv)))
            }
        }
    };
}

entrywise_lens!(
    /// `max(x, 0)` entry-wise.
    ///
    /// ```
    /// use paralens::{Lens, Relu};
    /// use paralens::nalgebra::SVector;
    /// let x = SVector::<f32, 2>::new(-1.0, 2.0);
    /// assert_eq!(Relu.apply(x), SVector::<f32, 2>::new(0.0, 2.0));
    /// assert_eq!(Relu.reverse(x, SVector::repeat(1.0)), SVector::<f32, 2>::new(0.0, 1.0));
    /// ```
    Relu, rule::relu);
entrywise_lens!(
    /// The logistic function entry-wise.
    Sigmoid, rule::sigmoid);
entrywise_lens!(
    /// `tanh` entry-wise.
    Tanh, rule::tanh);
entrywise_lens!(
    /// `ln(1 + e^x)` entry-wise.
    Softplus, rule::softplus);
entrywise_lens!(
    /// GELU (tanh form) entry-wise.
    Gelu, rule::gelu);

/// `x` where positive, `alpha x` elsewhere, entry-wise.
///
/// ```
/// use paralens::{Lens, LeakyRelu};
/// assert_eq!(LeakyRelu(0.1_f64).apply(-2.0_f64), -0.2);
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LeakyRelu<T>(pub T);

impl<V: Elementwise> Lens<V> for LeakyRelu<V::Scalar> {
    type Out = V;
    #[inline]
    fn apply(&self, x: V) -> V {
        x.map_entries(|v| rule::leaky_relu(v, self.0).0)
    }
    #[inline]
    fn apply_vjp(&self, x: V) -> (V, impl FnOnce(V) -> V) {
        let a = self.0;
        (
            x.map_entries(|v| rule::leaky_relu(v, a).0),
            #[inline(always)]
            move |d: V| d.zip_entries(&x, |dv, v| rule::leaky_relu(v, a).1(dv)),
        )
    }
}

/// `softmax` on a vector.
///
/// ```
/// use paralens::{Lens, Softmax};
/// use paralens::nalgebra::SVector;
/// let y = Softmax.apply(SVector::<f64, 3>::new(1.0, 1.0, 1.0));
/// assert!((y.sum() - 1.0).abs() < 1e-15);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Softmax;

impl<T: Real, const N: usize> Lens<SVector<T, N>> for Softmax {
    type Out = SVector<T, N>;
    #[inline]
    fn apply_vjp(&self, x: SVector<T, N>) -> (Self::Out, impl FnOnce(Self::Out) -> SVector<T, N>) {
        rule::softmax(x)
    }
}

/// `log_softmax` on a vector.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LogSoftmax;

impl<T: Real, const N: usize> Lens<SVector<T, N>> for LogSoftmax {
    type Out = SVector<T, N>;
    #[inline]
    fn apply_vjp(&self, x: SVector<T, N>) -> (Self::Out, impl FnOnce(Self::Out) -> SVector<T, N>) {
        rule::log_softmax(x)
    }
}

lens_is_para!(
    [] Relu,
    [] Sigmoid,
    [] Tanh,
    [] Softplus,
    [] Gelu,
    [] Softmax,
    [] LogSoftmax,
    [T] LeakyRelu<T>,
);
