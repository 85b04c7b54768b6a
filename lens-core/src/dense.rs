//! The dense (fully connected) layer `y = W x + b`.

use crate::{Init, Para, Real, Tangent};
use core::marker::PhantomData;
use nalgebra::{SMatrix, SVector};
use rand::Rng;

/// Parameters of a [`Dense`] layer: weights `w` (`O x I`) and bias `b`.
#[derive(Clone, Debug, PartialEq, Tangent)]
pub struct DenseParams<T: Real, const I: usize, const O: usize> {
    /// The weight matrix, output by input.
    pub w: SMatrix<T, O, I>,
    /// The bias vector.
    pub b: SVector<T, O>,
}

/// A dense layer from `I` inputs to `O` outputs, `y = W x + b`, as a parametric lens.
///
/// Reverse: `dW = dy x^T`, `db = dy`, `dx = W^T dy`.
///
/// ```
/// use lens_core::{Dense, Init, Para};
/// use nalgebra::SVector;
///
/// let layer = Dense::<4, 16>::new();
/// let p = layer.init(42); // He-uniform weights, zero bias
/// let y = layer.forward(&p, SVector::<f32, 4>::repeat(1.0));
/// assert_eq!(y.len(), 16);
/// ```
#[derive(Debug)]
pub struct Dense<const I: usize, const O: usize, T = f32> {
    glorot: bool,
    _t: PhantomData<fn() -> T>,
}

impl<const I: usize, const O: usize, T> Clone for Dense<I, O, T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<const I: usize, const O: usize, T> Copy for Dense<I, O, T> {}

impl<const I: usize, const O: usize, T> Default for Dense<I, O, T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<const I: usize, const O: usize, T> Dense<I, O, T> {
    /// A layer initialised He-uniform (for ReLU-like activations that follow it).
    #[must_use]
    pub const fn new() -> Self {
        Self {
            glorot: false,
            _t: PhantomData,
        }
    }

    /// A layer initialised Glorot-uniform (for tanh, sigmoid or a final linear layer).
    #[must_use]
    pub const fn glorot() -> Self {
        Self {
            glorot: true,
            _t: PhantomData,
        }
    }
}

impl<T: Real, const I: usize, const O: usize> Init for Dense<I, O, T> {
    type Param = DenseParams<T, I, O>;

    /// Weights uniform in `±sqrt(6 / I)` (He) or `±sqrt(6 / (I + O))` (Glorot); zero bias.
    fn init_with<R: Rng + ?Sized>(&self, rng: &mut R) -> Self::Param {
        let fan = if self.glorot { I + O } else { I };
        let limit = (6.0 / fan as f64).sqrt();
        DenseParams {
            w: SMatrix::from_fn(|_, _| T::cst(rng.random_range(-limit..limit))),
            b: SVector::zeros(),
        }
    }
}

impl<T: Real, const I: usize, const O: usize> Para<SVector<T, I>> for Dense<I, O, T> {
    type Param = DenseParams<T, I, O>;
    type Out = SVector<T, O>;

    #[inline]
    fn forward(&self, p: &Self::Param, x: SVector<T, I>) -> SVector<T, O> {
        p.w * x + p.b
    }

    #[inline]
    fn vjp(
        &self,
        p: &Self::Param,
        x: SVector<T, I>,
    ) -> (
        SVector<T, O>,
        impl FnOnce(SVector<T, O>) -> (Self::Param, SVector<T, I>),
    ) {
        (
            self.forward(p, x),
            #[inline(always)]
            move |dy: SVector<T, O>| {
                let dp = DenseParams {
                    w: dy * x.transpose(),
                    b: dy,
                };
                (dp, p.w.tr_mul(&dy))
            },
        )
    }
}
