//! Plain gradient descent.

use super::{Optimizer, zip2};
use crate::{Flat, LearningRate, Real};

/// Gradient descent: the learning-rate lens emits `-lr`, and `put(p, dp) = p + dp`.
///
/// ```
/// use paralens::optim::{Optimizer, Sgd};
/// let sgd = Sgd::new(0.1_f64);
/// let mut p = 1.0_f64;
/// let mut s = sgd.init_state(&p);
/// sgd.update(&mut s, &mut p, &(-0.1 * 2.0));
/// assert_eq!(p, 0.8);
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sgd<T> {
    /// The learning rate.
    pub lr: T,
}

impl<T> Sgd<T> {
    /// Gradient descent with learning rate `lr`.
    #[must_use]
    pub const fn new(lr: T) -> Self {
        Self { lr }
    }
}

impl<T: Real, P: Flat<T>> Optimizer<P> for Sgd<T> {
    type Scalar = T;
    type State = ();

    fn check(&self) -> Result<(), crate::BadSetting> {
        super::step_size("lr", self.lr)
    }

    fn init_state(&self, _p: &P) {}

    fn rate(&self) -> LearningRate<T> {
        LearningRate(self.lr)
    }

    #[inline]
    fn update(&self, _state: &mut (), p: &mut P, dp: &P) {
        zip2(p, dp, |x, d| *x += d);
    }

    /// The update and the clearing of the change in one pass.
    #[inline]
    fn update_and_clear(&self, _state: &mut (), p: &mut P, dp: &mut P) {
        super::zip2_clear(p, dp, |x, d| *x += d);
    }
}
