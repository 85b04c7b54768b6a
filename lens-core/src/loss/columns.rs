//! A per-example loss on a batch whose columns are examples.

use super::Loss;
#[cfg(feature = "alloc")]
use crate::HeapMatrix;
use crate::{LabelError, Real};
use nalgebra::{SMatrix, SVector};

/// The loss `L` of each column of a batch (one example per column), averaged: the loss of a
/// batched model (`Dense` and the span layers take `SMatrix<T, I, B>`). Labels are one per
/// column, and a bad one is reported with its column.
///
/// ```
/// use paralens::{Loss, PerColumn, SoftmaxCrossEntropy};
/// use paralens::nalgebra::SMatrix;
/// type Batch = SMatrix<f64, 3, 2>; // 3 classes, 2 examples
/// let loss = PerColumn(SoftmaxCrossEntropy);
/// let l = loss.loss(&Batch::zeros(), &[0, 2]);
/// assert!((l - 3f64.ln()).abs() < 1e-15);
/// let (column, _) = Loss::<Batch>::check_labels(&loss, &[0, 3]).unwrap_err();
/// assert_eq!(column, 1);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PerColumn<L>(pub L);

impl<T, L, const N: usize, const B: usize> Loss<SMatrix<T, N, B>> for PerColumn<L>
where
    T: Real,
    L: Loss<SVector<T, N>, Scalar = T>,
{
    type Label = [L::Label; B];
    type Scalar = T;

    fn check_label(&self, labels: &Self::Label) -> Result<(), LabelError> {
        Loss::<SMatrix<T, N, B>>::check_labels(self, labels).map_err(|(_, e)| e)
    }

    fn check_labels(&self, labels: &Self::Label) -> Result<(), (usize, LabelError)> {
        for (i, label) in labels.iter().enumerate() {
            self.0.check_label(label).map_err(|e| (i, e))?;
        }
        Ok(())
    }

    fn vjp(
        &self,
        y: SMatrix<T, N, B>,
        labels: &Self::Label,
    ) -> (T, impl FnOnce(T) -> SMatrix<T, N, B>) {
        let mut total = T::zero();
        let pulls: [_; B] = core::array::from_fn(|b| {
            let (l, pull) = self.0.vjp(y.column(b).into_owned(), &labels[b]);
            total += l;
            pull
        });
        let mean = T::one() / T::cst(B as f64);
        (
            total * mean,
            #[inline(always)]
            move |dl: T| {
                let mut dy = SMatrix::<T, N, B>::zeros();
                for (b, pull) in pulls.into_iter().enumerate() {
                    dy.set_column(b, &pull(dl * mean));
                }
                dy
            },
        )
    }
}

/// The same loss on a batch kept on the heap; the output change is a pooled block too.
#[cfg(feature = "alloc")]
impl<T, L, const N: usize, const B: usize> Loss<HeapMatrix<T, N, B>> for PerColumn<L>
where
    T: Real,
    L: Loss<SVector<T, N>, Scalar = T>,
{
    type Label = [L::Label; B];
    type Scalar = T;

    fn check_label(&self, labels: &Self::Label) -> Result<(), LabelError> {
        Loss::<SMatrix<T, N, B>>::check_label(self, labels)
    }

    fn check_labels(&self, labels: &Self::Label) -> Result<(), (usize, LabelError)> {
        Loss::<SMatrix<T, N, B>>::check_labels(self, labels)
    }

    fn vjp(
        &self,
        y: HeapMatrix<T, N, B>,
        labels: &Self::Label,
    ) -> (T, impl FnOnce(T) -> HeapMatrix<T, N, B>) {
        let mut total = T::zero();
        let pulls: [_; B] = core::array::from_fn(|b| {
            let (l, pull) = self.0.vjp(y.column(b).into_owned(), &labels[b]);
            total += l;
            pull
        });
        let mean = T::one() / T::cst(B as f64);
        (
            total * mean,
            #[inline(always)]
            move |dl: T| {
                let mut dy = HeapMatrix::<T, N, B>::zeros();
                for (b, pull) in pulls.into_iter().enumerate() {
                    dy.set_column(b, &pull(dl * mean));
                }
                dy
            },
        )
    }
}
