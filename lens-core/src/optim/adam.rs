//! Adam and AdamW.

use super::{Optimizer, zip2, zip4, zip4_clear};
use crate::{Flat, LearningRate, Real};

/// Adam: with `dp = -grad`, `m <- b1 m + (1 - b1) dp`, `v <- b2 v + (1 - b2) dp^2`, and
/// `p <- p + lr m^ / (sqrt(v^) + eps)` where `m^`, `v^` are the bias-corrected averages.
///
/// ```
/// use paralens::optim::{Adam, Optimizer};
/// let adam = Adam::new(0.1_f64);
/// let mut p = 1.0_f64;
/// let mut s = adam.init_state(&p);
/// adam.update(&mut s, &mut p, &-2.0); // gradient 2 at p = 1
/// assert!((p - 0.9).abs() < 1e-9);  // the first Adam step has length lr
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Adam<T> {
    /// The step size.
    pub lr: T,
    /// Decay of the first moment (0.9).
    pub beta1: T,
    /// Decay of the second moment (0.999).
    pub beta2: T,
    /// Added to the denominator (1e-8).
    pub eps: T,
}

impl<T: Real> Adam<T> {
    /// Adam with step size `lr` and the usual `beta1 = 0.9`, `beta2 = 0.999`, `eps = 1e-8`.
    #[must_use]
    pub fn new(lr: T) -> Self {
        Self {
            lr,
            beta1: T::cst(0.9),
            beta2: T::cst(0.999),
            eps: T::cst(1e-8),
        }
    }
}

/// Adam with the step size of its paper, `lr = 0.001` (see [`Adam::new`]).
///
/// ```
/// use paralens::optim::Adam;
/// assert_eq!(Adam::<f32>::default(), Adam::new(0.001));
/// ```
impl<T: Real> Default for Adam<T> {
    fn default() -> Self {
        Self::new(T::cst(0.001))
    }
}

/// The state of [`Adam`] and [`AdamW`]: both running averages and the step count.
#[derive(Clone, Debug, PartialEq)]
pub struct AdamState<P, T> {
    /// The first moment (running average of changes).
    pub m: P,
    /// The second moment (running average of squared changes).
    pub v: P,
    /// `beta1^t` after `t` steps.
    pub beta1_t: T,
    /// `beta2^t` after `t` steps.
    pub beta2_t: T,
}

impl<T: Real> Adam<T> {
    /// [`Optimizer::check`] of Adam's settings (AdamW's and the Riemannian Adam's too).
    pub(crate) fn settings(&self) -> Result<(), crate::BadSetting> {
        super::step_size("lr", self.lr)?;
        super::decay("beta1", self.beta1)?;
        super::decay("beta2", self.beta2)?;
        super::positive("eps", self.eps)
    }

    fn state<P: Flat<T>>(&self) -> AdamState<P, T> {
        AdamState {
            m: P::zeros(),
            v: P::zeros(),
            beta1_t: T::one(),
            beta2_t: T::one(),
        }
    }

    /// [`Adam::adam_update`] that sets each change to zero as it reads it.
    #[inline]
    fn adam_update_clear<P: Flat<T>>(&self, s: &mut AdamState<P, T>, p: &mut P, dp: &mut P) {
        let k = self.constants(s);
        zip4_clear(p, dp, &mut s.m, &mut s.v, |x, d, m, v| k.apply(x, d, m, v));
    }

    /// Advances the step count and returns the step's constants.
    fn constants<P>(&self, s: &mut AdamState<P, T>) -> AdamStep<T> {
        let Self {
            lr,
            beta1,
            beta2,
            eps,
        } = *self;
        s.beta1_t *= beta1;
        s.beta2_t *= beta2;
        // Fold both bias corrections into the step and epsilon: one division per entry.
        let c2 = (T::one() - s.beta2_t).sqrt();
        let (k1, k2) = (T::one() - beta1, T::one() - beta2);
        // Below this, (1 - b2) d^2 is subnormal.
        let tiny_change = if k2 > T::zero() {
            (T::MIN_NORMAL / k2).sqrt()
        } else {
            T::MIN_NORMAL.sqrt()
        };
        AdamStep {
            beta1,
            beta2,
            k1,
            k2,
            step: lr * c2 / (T::one() - s.beta1_t),
            eps_hat: eps * c2,
            tiny_change,
            tiny_square: tiny_change * tiny_change,
        }
    }

    #[inline]
    fn adam_update<P: Flat<T>>(&self, s: &mut AdamState<P, T>, p: &mut P, dp: &P) {
        let k = self.constants(s);
        zip4(p, dp, &mut s.m, &mut s.v, |x, d, m, v| k.apply(x, d, m, v));
    }
}

impl<T: Real, P: Flat<T>> Optimizer<P> for Adam<T> {
    type Scalar = T;
    type State = AdamState<P, T>;

    fn check(&self) -> Result<(), crate::BadSetting> {
        self.settings()
    }

    fn init_state(&self, _p: &P) -> Self::State {
        self.state()
    }

    fn rate(&self) -> LearningRate<T> {
        LearningRate(T::one())
    }

    #[inline]
    fn update(&self, s: &mut Self::State, p: &mut P, dp: &P) {
        self.adam_update(s, p, dp);
    }

    /// One pass: each change is read, used and set to zero.
    #[inline]
    fn update_and_clear(&self, s: &mut Self::State, p: &mut P, dp: &mut P) {
        self.adam_update_clear(s, p, dp);
    }
}

/// AdamW: Adam with decoupled weight decay, `p <- p - lr wd p` before the Adam step.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AdamW<T> {
    /// The Adam part.
    pub adam: Adam<T>,
    /// The weight decay coefficient (e.g. 0.01).
    pub weight_decay: T,
}

impl<T: Real> AdamW<T> {
    /// AdamW with step size `lr`, weight decay `weight_decay` and Adam's usual constants.
    #[must_use]
    pub fn new(lr: T, weight_decay: T) -> Self {
        Self {
            adam: Adam::new(lr),
            weight_decay,
        }
    }
}

impl<T: Real, P: Flat<T>> Optimizer<P> for AdamW<T> {
    type Scalar = T;
    type State = AdamState<P, T>;

    fn check(&self) -> Result<(), crate::BadSetting> {
        self.adam.settings()?;
        // `p <- p (1 - lr wd)`: a factor in (0, 1], or the decay grows or flips the weights.
        let ok = self.weight_decay.finite()
            && self.weight_decay >= T::zero()
            && self.adam.lr * self.weight_decay <= T::one();
        if ok {
            Ok(())
        } else {
            Err(crate::BadSetting {
                name: "weight_decay",
                value: self.weight_decay.to_f64(),
                expected: "a finite number, 0 or more, at most 1 / lr",
            })
        }
    }

    fn init_state(&self, _p: &P) -> Self::State {
        self.adam.state()
    }

    fn rate(&self) -> LearningRate<T> {
        LearningRate(T::one())
    }

    #[inline]
    fn update(&self, s: &mut Self::State, p: &mut P, dp: &P) {
        let keep = T::one() - self.adam.lr * self.weight_decay;
        zip2(p, dp, |x, _| *x *= keep);
        self.adam.adam_update(s, p, dp);
    }

    #[inline]
    fn update_and_clear(&self, s: &mut Self::State, p: &mut P, dp: &mut P) {
        let keep = T::one() - self.adam.lr * self.weight_decay;
        zip2(p, dp, |x, _| *x *= keep);
        self.adam.adam_update_clear(s, p, dp);
    }
}

/// The constants of one Adam step, and its update of one entry.
#[derive(Clone, Copy)]
struct AdamStep<T> {
    beta1: T,
    beta2: T,
    k1: T,
    k2: T,
    step: T,
    eps_hat: T,
    tiny_change: T,
    tiny_square: T,
}

impl<T: Real> AdamStep<T> {
    #[inline(always)]
    fn apply(&self, x: &mut T, d: T, m: &mut T, v: &mut T) {
        // Subnormal arithmetic is slow (a confident model's changes square into it, and
        // averages of zero changes decay into it). A change below sqrt(MIN_NORMAL / (1 - b2))
        // (3e-18 in f32) moves p by at most lr * change / eps, far below rounding, so it is
        // taken as zero; so are averages whose update (at most lr m / eps) or denominator
        // term (sqrt v, against eps) is as small.
        let d = if d.abs() < self.tiny_change {
            T::zero()
        } else {
            d
        };
        let m1 = self.beta1 * *m + self.k1 * d;
        let v1 = self.beta2 * *v + self.k2 * d * d;
        *m = if m1.abs() < self.tiny_change {
            T::zero()
        } else {
            m1
        };
        *v = if v1 < self.tiny_square { T::zero() } else { v1 };
        *x += self.step * *m / (v.sqrt() + self.eps_hat);
    }
}
