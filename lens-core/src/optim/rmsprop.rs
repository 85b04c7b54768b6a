//! RMSProp.

use super::{Optimizer, zip3};
use crate::{Flat, LearningRate, Real};

/// RMSProp: `s <- rho s + (1 - rho) dp^2`, `p <- p + lr dp / (sqrt(s) + eps)`, `dp = -grad`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RmsProp<T> {
    /// The step size.
    pub lr: T,
    /// The decay of the running average of squares (typically 0.9).
    pub rho: T,
    /// Added to the denominator for stability.
    pub eps: T,
}

impl<T: Real> RmsProp<T> {
    /// RMSProp with step size `lr`, `rho = 0.9`, `eps = 1e-8`.
    #[must_use]
    pub fn new(lr: T) -> Self {
        Self {
            lr,
            rho: T::cst(0.9),
            eps: T::cst(1e-8),
        }
    }
}

impl<T: Real, P: Flat<T>> Optimizer<P> for RmsProp<T> {
    type Scalar = T;
    type State = P;

    fn check(&self) -> Result<(), crate::BadSetting> {
        super::step_size("lr", self.lr)?;
        super::decay("rho", self.rho)?;
        super::positive("eps", self.eps)
    }

    fn init_state(&self, _p: &P) -> P {
        P::zeros()
    }

    fn rate(&self) -> LearningRate<T> {
        LearningRate(T::one())
    }

    #[inline]
    fn update(&self, s: &mut P, p: &mut P, dp: &P) {
        let (lr, rho, eps) = (self.lr, self.rho, self.eps);
        let keep = T::one() - rho;
        zip3(p, dp, s, |x, d, s| {
            *s = rho * *s + keep * d * d;
            *x += lr * d / (s.sqrt() + eps);
        });
    }
}
