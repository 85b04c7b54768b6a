//! A bias added to every example: `y = x + b`.

#[cfg(feature = "alloc")]
use crate::HeapMatrix;
use crate::{Init, Para, Real};
use nalgebra::{SMatrix, SVector};
use rand::Rng;

/// A bias added to a vector: `y = x + b`, reverse `(d, d)`.
///
/// ```
/// use paralens::span::Bias;
/// use paralens::Para;
/// use paralens::nalgebra::{SMatrix, SVector};
/// let b = SVector::<f64, 2>::new(1.0, -1.0);
/// assert_eq!(Bias::<2, f64>::new().forward(&b, SVector::zeros()), b);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Bias<const N: usize, T = f32>(core::marker::PhantomData<fn() -> T>);

impl<const N: usize, T> Bias<N, T> {
    /// A bias of `N` entries.
    #[must_use]
    pub const fn new() -> Self {
        Self(core::marker::PhantomData)
    }
}

/// On a batch (columns are examples) the bias is added to every column and its change is
/// the sum of the columns' changes.
impl<T: Real, const N: usize, const B: usize> Para<SMatrix<T, N, B>> for Bias<N, T> {
    type Param = SVector<T, N>;
    type Out = SMatrix<T, N, B>;

    #[inline]
    fn forward(&self, b: &SVector<T, N>, mut x: SMatrix<T, N, B>) -> SMatrix<T, N, B> {
        for mut col in x.column_iter_mut() {
            col += b;
        }
        x
    }

    #[inline]
    fn vjp(
        &self,
        b: &SVector<T, N>,
        x: SMatrix<T, N, B>,
    ) -> (
        SMatrix<T, N, B>,
        impl FnOnce(SMatrix<T, N, B>, &mut SVector<T, N>) -> SMatrix<T, N, B>,
    ) {
        (
            self.forward(b, x),
            #[inline(always)]
            |d: SMatrix<T, N, B>, db: &mut SVector<T, N>| {
                for col in d.column_iter() {
                    *db += col;
                }
                d
            },
        )
    }
}

/// On a batch kept on the heap: added in place, the change passed through.
#[cfg(feature = "alloc")]
impl<T: Real, const N: usize, const B: usize> Para<HeapMatrix<T, N, B>> for Bias<N, T> {
    type Param = SVector<T, N>;
    type Out = HeapMatrix<T, N, B>;

    #[inline]
    fn forward(&self, b: &SVector<T, N>, mut x: HeapMatrix<T, N, B>) -> HeapMatrix<T, N, B> {
        for mut col in x.column_iter_mut() {
            col += b;
        }
        x
    }

    #[inline]
    fn vjp(
        &self,
        b: &SVector<T, N>,
        x: HeapMatrix<T, N, B>,
    ) -> (
        HeapMatrix<T, N, B>,
        impl FnOnce(HeapMatrix<T, N, B>, &mut SVector<T, N>) -> HeapMatrix<T, N, B>,
    ) {
        (
            Para::<HeapMatrix<T, N, B>>::forward(self, b, x),
            #[inline(always)]
            |d: HeapMatrix<T, N, B>, db: &mut SVector<T, N>| {
                for col in d.column_iter() {
                    *db += col;
                }
                d
            },
        )
    }
}

/// Biases start at zero.
impl<T: Real, const N: usize> Init for Bias<N, T> {
    type Param = SVector<T, N>;
    fn init_with<R: Rng + ?Sized>(&self, _rng: &mut R) -> Self::Param {
        SVector::zeros()
    }
}
