//! Mean squared error.

use super::Loss;
use crate::activation::Elementwise;
use crate::{Flat, LabelError, Real};

/// Mean squared error `1/n sum (y - t)^2` against a target `t` of the prediction's type;
/// reverse `2/n (y - t) dl`.
///
/// ```
/// use paralens::{Loss, Mse};
/// use paralens::nalgebra::SVector;
/// let y = SVector::<f64, 2>::new(1.0, 3.0);
/// let t = SVector::<f64, 2>::new(0.0, 1.0);
/// assert_eq!(Mse.loss(&y, &t), 2.5);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Mse;

impl<T: Real, Y: Elementwise<Scalar = T> + Flat<T>> Loss<Y> for Mse {
    type Label = Y;
    type Scalar = T;

    fn check_label(&self, label: &Y) -> Result<(), LabelError> {
        match label.slices().flatten().find(|v| !v.finite()) {
            Some(v) => Err(LabelError::BadTarget {
                value: v.to_f64(),
                expected: "a finite number",
            }),
            None => Ok(()),
        }
    }

    fn vjp(&self, y: Y, t: &Y) -> (T, impl FnOnce(T) -> Y) {
        let mut diff = y;
        let mut n = 0usize;
        for (a, b) in diff.slices_mut().zip(t.slices()) {
            for (v, w) in a.iter_mut().zip(b) {
                *v -= *w;
            }
            n += a.len();
        }
        let inv_n = T::one() / T::cst(n.max(1) as f64);
        let loss = diff.dot_flat(&diff) * inv_n;
        (
            loss,
            #[inline(always)]
            move |dl: T| {
                let mut d = diff;
                d.scale((inv_n + inv_n) * dl);
                d
            },
        )
    }
}
