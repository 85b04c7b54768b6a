//! The multi-class hinge loss of Crammer and Singer.

use super::Loss;
use crate::{LabelError, Real};
use nalgebra::SVector;

/// The multi-class hinge loss of Crammer and Singer (a linear SVM's loss):
/// `max(0, 1 + max_{j != c} y_j - y_c)` for class `c`. One loss per example, not one per
/// class (one-vs-rest would sum `N` binary hinges).
///
/// Reverse, a subgradient: when the margin is violated (the loss is positive), `+dl` to the
/// strongest wrong class `j*` (the first of equal ones) and `-dl` to `c`; otherwise zero. At
/// the kink (a margin of exactly 1, loss 0) the change is zero, the subgradient from the side
/// where the loss is flat.
///
/// ```
/// use paralens::{Hinge, Loss};
/// use paralens::nalgebra::SVector;
/// let y = SVector::<f64, 3>::new(2.0, 1.5, -1.0);
/// assert_eq!(Hinge.loss(&y, &0), 0.5); // 1 + 1.5 - 2.0
/// assert_eq!(Hinge.loss(&y, &2), 4.0); // 1 + 2.0 - (-1.0)
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Hinge;

impl<T: Real, const N: usize> Loss<SVector<T, N>> for Hinge {
    type Label = usize;
    type Scalar = T;

    fn check_label(&self, &label: &usize) -> Result<(), LabelError> {
        super::check_class::<N>(label)
    }

    fn vjp(&self, y: SVector<T, N>, &c: &usize) -> (T, impl FnOnce(T) -> SVector<T, N>) {
        assert!(
            c < N,
            "label {c} is out of range: the model has {N} classes"
        );
        // The strongest wrong class.
        let mut wrong = if c == 0 { 1.min(N - 1) } else { 0 };
        for j in 0..N {
            if j != c && y[j] > y[wrong] {
                wrong = j;
            }
        }
        let margin = if N > 1 {
            T::one() + y[wrong] - y[c]
        } else {
            T::zero()
        };
        let active = margin > T::zero();
        (
            if active { margin } else { T::zero() },
            #[inline(always)]
            move |dl: T| {
                let mut d = SVector::<T, N>::zeros();
                if active {
                    d[wrong] += dl;
                    d[c] -= dl;
                }
                d
            },
        )
    }
}
