//! AdaGrad.

use super::{Optimizer, zip3};
use crate::{Flat, LearningRate, Real};

/// AdaGrad: `G <- G + dp^2`, `p <- p + lr dp / (sqrt(G) + eps)`, with `dp = -grad`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AdaGrad<T> {
    /// The step size.
    pub lr: T,
    /// Added to the denominator for stability.
    pub eps: T,
}

impl<T: Real> AdaGrad<T> {
    /// AdaGrad with step size `lr` and `eps = 1e-10`.
    #[must_use]
    pub fn new(lr: T) -> Self {
        Self {
            lr,
            eps: T::cst(1e-10),
        }
    }
}

impl<T: Real, P: Flat<T>> Optimizer<P> for AdaGrad<T> {
    type Scalar = T;
    type State = P;

    fn check(&self) -> Result<(), crate::BadSetting> {
        super::step_size("lr", self.lr)?;
        super::positive("eps", self.eps)
    }

    fn init_state(&self, _p: &P) -> P {
        P::zeros()
    }

    fn rate(&self) -> LearningRate<T> {
        LearningRate(T::one())
    }

    #[inline]
    fn update(&self, g2: &mut P, p: &mut P, dp: &P) {
        let (lr, eps) = (self.lr, self.eps);
        zip3(p, dp, g2, |x, d, s| {
            *s += d * d;
            *x += lr * d / (s.sqrt() + eps);
        });
    }
}
