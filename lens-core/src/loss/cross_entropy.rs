//! Softmax cross-entropy with an integer class label.

use super::Loss;
use crate::rules::activation::log_sum_exp;
use crate::{LabelError, Real};
use nalgebra::SVector;

/// Softmax cross-entropy from logits: `lse(y) - y[c]` for class `c`, with a stable
/// log-sum-exp; reverse `(softmax(y) - onehot(c)) dl`.
///
/// ```
/// use paralens::{Loss, SoftmaxCrossEntropy};
/// use paralens::nalgebra::SVector;
/// let logits = SVector::<f64, 3>::new(0.0, 0.0, 0.0);
/// assert!((SoftmaxCrossEntropy.loss(&logits, &1) - 3f64.ln()).abs() < 1e-15);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SoftmaxCrossEntropy;

impl<T: Real, const N: usize> Loss<SVector<T, N>> for SoftmaxCrossEntropy {
    type Label = usize;
    type Scalar = T;

    fn check_label(&self, &label: &usize) -> Result<(), LabelError> {
        super::check_class::<N>(label)
    }

    #[inline]
    fn vjp(&self, y: SVector<T, N>, &c: &usize) -> (T, impl FnOnce(T) -> SVector<T, N>) {
        let lse = log_sum_exp(&y);
        // An out-of-range label is refused by `check_label` before any step; here it would
        // index out of bounds, so it is checked once more with a clear message.
        assert!(
            c < N,
            "label {c} is out of range: the model has {N} classes"
        );
        let loss = lse - y[c];
        // Probabilities below the normal range are taken as zero: computing them would go
        // through exp's slow underflow path and seed the reverse pass with subnormals.
        let floor = T::MIN_NORMAL.ln();
        (
            loss,
            #[inline(always)]
            move |dl: T| {
                let mut d = y.map(|v| {
                    let e = v - lse;
                    if e < floor { T::zero() } else { e.exp() * dl }
                });
                d[c] -= dl;
                d
            },
        )
    }
}
