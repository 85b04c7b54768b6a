//! Momentum and Nesterov momentum.

use super::{Optimizer, zip2, zip3};
use crate::{Flat, LearningRate, Real};

/// Momentum: `v <- gamma v + dp`, `p <- p + v`, with `dp = -lr grad`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Momentum<T> {
    /// The learning rate.
    pub lr: T,
    /// The momentum coefficient (typically 0.9).
    pub gamma: T,
}

impl<T> Momentum<T> {
    /// Momentum with learning rate `lr` and coefficient `gamma`.
    #[must_use]
    pub const fn new(lr: T, gamma: T) -> Self {
        Self { lr, gamma }
    }
}

impl<T: Real, P: Flat<T>> Optimizer<P> for Momentum<T> {
    type Scalar = T;
    type State = P;

    fn check(&self) -> Result<(), crate::BadSetting> {
        super::step_size("lr", self.lr)?;
        super::decay("gamma", self.gamma)
    }

    fn init_state(&self, _p: &P) -> P {
        P::zeros()
    }

    fn rate(&self) -> LearningRate<T> {
        LearningRate(self.lr)
    }

    #[inline]
    fn update(&self, v: &mut P, p: &mut P, dp: &P) {
        let g = self.gamma;
        zip3(p, dp, v, |x, d, vel| {
            *vel = g * *vel + d;
            *x += *vel;
        });
    }
}

/// Nesterov momentum: the model runs at the look-ahead `p + gamma v` (the optimizer lens's
/// forward), then `v <- gamma v + dp`, `p <- p + v` with the change taken at the look-ahead.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Nesterov<T> {
    /// The learning rate.
    pub lr: T,
    /// The momentum coefficient (typically 0.9).
    pub gamma: T,
}

impl<T> Nesterov<T> {
    /// Nesterov momentum with learning rate `lr` and coefficient `gamma`.
    #[must_use]
    pub const fn new(lr: T, gamma: T) -> Self {
        Self { lr, gamma }
    }
}

impl<T: Real, P: Flat<T>> Optimizer<P> for Nesterov<T> {
    type Scalar = T;
    type State = P;

    fn check(&self) -> Result<(), crate::BadSetting> {
        super::step_size("lr", self.lr)?;
        super::decay("gamma", self.gamma)
    }

    fn init_state(&self, _p: &P) -> P {
        P::zeros()
    }

    fn rate(&self) -> LearningRate<T> {
        LearningRate(self.lr)
    }

    fn looks_ahead(&self) -> bool {
        true
    }

    fn view<'p>(&self, v: &P, p: &'p P, scratch: &'p mut P) -> &'p P {
        // Copied slice by slice: `clone_from` of a boxed matrix passes through the stack.
        scratch.zip2_slices(p, &mut |s, q| s.copy_from_slice(q));
        let g = self.gamma;
        zip2(scratch, v, |x, vel| *x += g * vel);
        scratch
    }

    #[inline]
    fn update(&self, v: &mut P, p: &mut P, dp: &P) {
        let g = self.gamma;
        zip3(p, dp, v, |x, d, vel| {
            *vel = g * *vel + d;
            *x += *vel;
        });
    }
}
