//! The dot-product loss: `-<y, t>` against a target vector.

use super::Loss;
use crate::{LabelError, Real};
use nalgebra::SVector;

/// The papers' dot-product loss `-<y, t>`: smaller the more the prediction points along the
/// target `t` (the label, on the closed parameter port). Reverse: `-t dl`. With a one-hot
/// target it asks for more of one output, which is what deep dreaming ascends; it is
/// unbounded below, so it suits a positive rate on an input, or a model whose output is
/// bounded, not plain training of weights.
///
/// ```
/// use paralens::{DotProduct, Loss};
/// use paralens::nalgebra::SVector;
/// let t = SVector::<f64, 3>::new(0.0, 1.0, 0.0);
/// assert_eq!(DotProduct.loss(&SVector::<f64, 3>::new(0.2, 0.7, 0.1), &t), -0.7);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DotProduct;

impl<T: Real, const N: usize> Loss<SVector<T, N>> for DotProduct {
    type Label = SVector<T, N>;
    type Scalar = T;

    fn check_label(&self, t: &SVector<T, N>) -> Result<(), LabelError> {
        match t.iter().find(|v| !v.finite()) {
            Some(v) => Err(LabelError::BadTarget {
                value: v.to_f64(),
                expected: "a finite target vector",
            }),
            None => Ok(()),
        }
    }

    fn vjp(&self, y: SVector<T, N>, t: &SVector<T, N>) -> (T, impl FnOnce(T) -> SVector<T, N>) {
        let t = *t;
        (
            -y.dot(&t),
            #[inline(always)]
            move |dl: T| t * -dl,
        )
    }
}
