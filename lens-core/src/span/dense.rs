//! The dense (fully connected) layer `y = W x + b`.

use super::small;
use crate::gemm::{View, ViewMut, gemm};
use crate::{HeapMatrix, Init, Para, Real, Tangent};
use alloc::boxed::Box;
use core::marker::PhantomData;
use nalgebra::{SMatrix, SVector};
use rand::Rng;

/// Parameters of a [`Dense`] layer: weights `w` (`O x I`) and bias `b`.
///
/// The weights are boxed: a 784x128 matrix is 400 KB, and parameters, their changes and the
/// optimizer's moments (all of this type) must not travel on the stack. The box is allocated
/// when the parameters are made, never in a step.
#[derive(Debug, PartialEq, Tangent)]
pub struct DenseParams<T: Real, const I: usize, const O: usize> {
    /// The weight matrix, output by input.
    pub w: Box<SMatrix<T, O, I>>,
    /// The bias vector.
    pub b: SVector<T, O>,
}

/// Copies the weights into a new box without passing them through the stack (`Box::clone`
/// builds the copy there first in a debug build: 400 KB for a 784x128 layer).
impl<T: Real, const I: usize, const O: usize> Clone for DenseParams<T, I, O> {
    fn clone(&self) -> Self {
        let mut w: Box<SMatrix<T, O, I>> = Tangent::zeros();
        w.as_mut_slice().copy_from_slice(self.w.as_slice());
        Self { w, b: self.b }
    }
}

/// A dense layer from `I` inputs to `O` outputs, `y = W x + b`, as a parametric lens.
///
/// Reverse: `dW = dy x^T`, `db = dy`, `dx = W^T dy`.
///
/// ```
/// use paralens::{Dense, Init, Para};
/// use paralens::nalgebra::SVector;
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
        let limit = nalgebra::ComplexField::sqrt(6.0 / fan as f64);
        DenseParams {
            w: boxed_from_fn(|| T::cst(rng.random_range(-limit..limit))),
            b: SVector::zeros(),
        }
    }
}

/// The layer on a batch: the columns of `x` are examples, `Y = W X + b 1^T`, reverse
/// `dW = dY X^T`, `db = dY 1`, `dX = W^T dY`; a vector is a batch of one. Batches of 8 or more
/// through a layer at least 16 wide go through the allocation-free [`crate::gemm`] (packed
/// panels, a SIMD micro-kernel chosen for the CPU); smaller ones through the always-inlined
/// forward and `dW` of `span/small.rs` and nalgebra's `tr_mul` for `dX`.
impl<T: Real, const I: usize, const O: usize, const B: usize> Para<SMatrix<T, I, B>>
    for Dense<I, O, T>
{
    type Param = DenseParams<T, I, O>;
    type Out = SMatrix<T, O, B>;

    #[inline(always)]
    fn forward(&self, p: &Self::Param, x: SMatrix<T, I, B>) -> SMatrix<T, O, B> {
        if !Self::takes_gemm(B) {
            return small::affine(&p.w, &p.b, &x);
        }
        let mut y = SMatrix::<T, O, B>::zeros();
        gemm(
            &View::col_major(p.w.as_slice(), O, I),
            &View::col_major(x.as_slice(), I, B).t(),
            &mut ViewMut::col_major(y.as_mut_slice(), O, B),
        );
        for mut col in y.column_iter_mut() {
            col += &p.b;
        }
        y
    }

    #[inline]
    fn vjp(
        &self,
        p: &Self::Param,
        x: SMatrix<T, I, B>,
    ) -> (
        SMatrix<T, O, B>,
        impl FnOnce(SMatrix<T, O, B>, &mut Self::Param) -> SMatrix<T, I, B>,
    ) {
        (
            self.forward(p, x),
            #[inline(always)]
            move |dy: SMatrix<T, O, B>, dp: &mut Self::Param| {
                for col in dy.column_iter() {
                    dp.b += col;
                }
                if Self::takes_gemm(B) {
                    // The product adds into the caller's buffer: dW += dY X^T in place.
                    gemm(
                        &View::col_major(dy.as_slice(), O, B),
                        &View::col_major(x.as_slice(), I, B),
                        &mut ViewMut::col_major(dp.w.as_mut_slice(), O, I),
                    );
                    let mut dx = SMatrix::<T, I, B>::zeros();
                    gemm(
                        &View::col_major(p.w.as_slice(), O, I).t(),
                        &View::col_major(dy.as_slice(), O, B).t(),
                        &mut ViewMut::col_major(dx.as_mut_slice(), I, B),
                    );
                    dx
                } else {
                    small::add_outer(&mut dp.w, &dy, &x);
                    p.w.tr_mul(&dy)
                }
            },
        )
    }

    #[inline]
    fn vjp_params(
        &self,
        p: &Self::Param,
        x: SMatrix<T, I, B>,
    ) -> (
        SMatrix<T, O, B>,
        impl FnOnce(SMatrix<T, O, B>, &mut Self::Param),
    ) {
        (
            self.forward(p, x),
            // The parameter change only: no W^T dY (a third of a first layer's work).
            #[inline(always)]
            move |dy: SMatrix<T, O, B>, dp: &mut Self::Param| {
                for col in dy.column_iter() {
                    dp.b += col;
                }
                if Self::takes_gemm(B) {
                    gemm(
                        &View::col_major(dy.as_slice(), O, B),
                        &View::col_major(x.as_slice(), I, B),
                        &mut ViewMut::col_major(dp.w.as_mut_slice(), O, I),
                    );
                } else {
                    small::add_outer(&mut dp.w, &dy, &x);
                }
            },
        )
    }
}

/// The layer on a batch kept on the heap ([`HeapMatrix`]): the same products as on an
/// `SMatrix`, written into pooled blocks instead of returned by value, so that no activation or
/// change of a large layer passes through the stack.
impl<T: Real, const I: usize, const O: usize, const B: usize> Para<HeapMatrix<T, I, B>>
    for Dense<I, O, T>
{
    type Param = DenseParams<T, I, O>;
    type Out = HeapMatrix<T, O, B>;

    #[inline]
    fn forward(&self, p: &Self::Param, x: HeapMatrix<T, I, B>) -> HeapMatrix<T, O, B> {
        Self::heap_forward(p, &x)
    }

    #[inline]
    fn vjp(
        &self,
        p: &Self::Param,
        x: HeapMatrix<T, I, B>,
    ) -> (
        HeapMatrix<T, O, B>,
        impl FnOnce(HeapMatrix<T, O, B>, &mut Self::Param) -> HeapMatrix<T, I, B>,
    ) {
        // The input is moved into the pullback (a pointer), not copied.
        (
            Self::heap_forward(p, &x),
            #[inline(always)]
            move |dy: HeapMatrix<T, O, B>, dp: &mut Self::Param| {
                for col in dy.column_iter() {
                    dp.b += col;
                }
                // Both products by `gemm`, which adds into its destination: dW += dY X^T
                // straight into the caller's buffer, dX = W^T dY into a fresh block.
                gemm(
                    &View::col_major(dy.as_slice(), O, B),
                    &View::col_major(x.as_slice(), I, B),
                    &mut ViewMut::col_major(dp.w.as_mut_slice(), O, I),
                );
                let mut dx = HeapMatrix::<T, I, B>::zeros();
                gemm(
                    &View::col_major(p.w.as_slice(), O, I).t(),
                    &View::col_major(dy.as_slice(), O, B).t(),
                    &mut ViewMut::col_major(dx.as_mut_slice(), I, B),
                );
                dx
            },
        )
    }

    #[inline]
    fn vjp_params(
        &self,
        p: &Self::Param,
        x: HeapMatrix<T, I, B>,
    ) -> (
        HeapMatrix<T, O, B>,
        impl FnOnce(HeapMatrix<T, O, B>, &mut Self::Param),
    ) {
        (
            Self::heap_forward(p, &x),
            // The parameter change only: no W^T dY.
            #[inline(always)]
            move |dy: HeapMatrix<T, O, B>, dp: &mut Self::Param| {
                for col in dy.column_iter() {
                    dp.b += col;
                }
                gemm(
                    &View::col_major(dy.as_slice(), O, B),
                    &View::col_major(x.as_slice(), I, B),
                    &mut ViewMut::col_major(dp.w.as_mut_slice(), O, I),
                );
            },
        )
    }
}

impl<T: Real, const I: usize, const O: usize> Dense<I, O, T> {
    /// `W x + b 1^T` into a pooled block.
    #[inline]
    fn heap_forward<const B: usize>(
        p: &DenseParams<T, I, O>,
        x: &SMatrix<T, I, B>,
    ) -> HeapMatrix<T, O, B> {
        let mut y = HeapMatrix::<T, O, B>::zeros();
        if Self::takes_gemm(B) {
            gemm(
                &View::col_major(p.w.as_slice(), O, I),
                &View::col_major(x.as_slice(), I, B).t(),
                &mut ViewMut::col_major(y.as_mut_slice(), O, B),
            );
        } else {
            y.gemm(T::one(), &*p.w, x, T::zero());
        }
        for mut col in y.column_iter_mut() {
            col += &p.b;
        }
        y
    }
}

impl<const I: usize, const O: usize, T> Dense<I, O, T> {
    /// Whether a batch of `b` columns goes through [`crate::gemm`] (folded at compile
    /// time), else through `span/small.rs` and nalgebra: the packing and the micro-kernel's
    /// fixed tile pay off from 8 columns on layers 16 wide. Public so that a test can tell
    /// which path a shape takes.
    ///
    /// ```
    /// use paralens::Dense;
    /// assert!(Dense::<784, 128, f32>::takes_gemm(32));
    /// assert!(!Dense::<4, 16, f32>::takes_gemm(1));
    /// ```
    #[inline(always)]
    #[must_use]
    pub const fn takes_gemm(b: usize) -> bool {
        b >= 8 && I >= 16 && O >= 16
    }
}

/// A boxed static matrix filled column by column from `f`, built in place (a large matrix
/// never passes through the stack: `Box::new(SMatrix::from_fn(..))` builds it there first).
fn boxed_from_fn<T: Real, const R: usize, const C: usize>(
    mut f: impl FnMut() -> T,
) -> Box<SMatrix<T, R, C>> {
    let mut m: Box<SMatrix<T, R, C>> = Tangent::zeros();
    for v in m.as_mut_slice() {
        *v = f();
    }
    m
}
