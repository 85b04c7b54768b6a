//! Binary cross-entropy from logits.

use super::Loss;
use crate::activation::Elementwise;
use crate::rules::activation::sigmoid_value;
use crate::{Flat, LabelError, Real};

/// Binary cross-entropy from logits, averaged over entries:
/// `1/n sum max(z, 0) - z t + ln(1 + e^-|z|)` (stable form); reverse `(sigma(z) - t) dl / n`.
/// Targets `t` are in `[0, 1]`, of the prediction's type.
///
/// ```
/// use paralens::{BinaryCrossEntropy, Loss};
/// let l: f64 = BinaryCrossEntropy.loss(&0.0, &1.0);
/// assert!((l - 2f64.ln()).abs() < 1e-15);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BinaryCrossEntropy;

impl<T, V> Loss<V> for BinaryCrossEntropy
where
    T: Real,
    V: Elementwise<Scalar = T> + Flat<T>,
{
    type Label = V;
    type Scalar = T;

    fn check_label(&self, t: &V) -> Result<(), LabelError> {
        let zero = T::zero();
        let one = T::one();
        match t
            .slices()
            .flatten()
            .find(|v| !(v.finite() && **v >= zero && **v <= one))
        {
            Some(v) => Err(LabelError::BadTarget {
                value: v.to_f64(),
                expected: "a probability in [0, 1]",
            }),
            None => Ok(()),
        }
    }

    fn vjp(&self, z: V, t: &V) -> (T, impl FnOnce(T) -> V) {
        let zero = T::zero();
        let n = T::cst(z.flat_len().max(1) as f64);
        let per = z
            .clone()
            .zip_entries(t, |z, t| z.max(zero) - z * t + (-z.abs()).exp().ln_1p());
        let loss = per.slices().flatten().fold(zero, |a, &v| a + v) / n;
        let t = t.clone();
        (
            loss,
            #[inline(always)]
            move |dl: T| {
                let k = dl / n;
                z.zip_entries(&t, |z, t| (sigmoid_value(z) - t) * k)
            },
        )
    }
}
