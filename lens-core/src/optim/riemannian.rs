//! Optimizers for parameters on a manifold (see [`crate::manifold`]): the change that comes
//! back through the model is in the ambient space; it is projected onto the tangent space at
//! the point, the step is taken there, and a retraction brings the point back.

use super::{Optimizer, zip2, zip3};
use crate::manifold::Manifold;
use crate::{LearningRate, Real};

/// Riemannian gradient descent: `p <- R_p(P_p(dp))`, where `dp` is `-lr` times the gradient
/// (from the learning-rate lens), `P_p` the projection onto the tangent space and `R_p` the
/// retraction.
///
/// ```
/// use paralens::manifold::{Manifold, Sphere};
/// use paralens::optim::{Optimizer, RiemannianSgd};
/// use paralens::nalgebra::SVector;
/// let opt = RiemannianSgd::new(0.5_f64);
/// let mut p = Sphere::new(SVector::<f64, 2>::new(1.0, 1.0));
/// let mut s = opt.init_state(&p);
/// // Descend f(p) = -p_x, whose gradient is (-1, 0): the point turns towards (1, 0).
/// for _ in 0..50 {
///     opt.update(&mut s, &mut p, &Sphere(SVector::<f64, 2>::new(0.5, 0.0)));
/// }
/// assert!((p.0[0] - 1.0).abs() < 1e-6 && p.off_manifold() < 1e-12);
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RiemannianSgd<T> {
    /// The learning rate.
    pub lr: T,
}

impl<T> RiemannianSgd<T> {
    /// Riemannian gradient descent with learning rate `lr`.
    #[must_use]
    pub const fn new(lr: T) -> Self {
        Self { lr }
    }
}

impl<T: Real, P: Manifold<T>> Optimizer<P> for RiemannianSgd<T> {
    type Scalar = T;
    type State = ();

    fn check(&self) -> Result<(), crate::BadSetting> {
        super::step_size("lr", self.lr)
    }

    fn init_state(&self, _p: &P) {}

    fn rate(&self) -> LearningRate<T> {
        LearningRate(self.lr)
    }

    fn update(&self, _state: &mut (), p: &mut P, dp: &P) {
        let mut v = dp.clone();
        p.project(&mut v);
        p.retract(&v);
    }
}

/// Riemannian Adam: Adam's moments of the projected change, the step (scaled entry by entry
/// as Adam scales it) projected onto the tangent space again and retracted. After the step
/// the first moment is *transported by projection* onto the new point's tangent space (the
/// usual vector transport of embedded manifolds); the second moment is a per-coordinate
/// scale and is kept as it is.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RiemannianAdam<T> {
    /// The step size.
    pub lr: T,
    /// Decay of the first moment.
    pub beta1: T,
    /// Decay of the second moment.
    pub beta2: T,
    /// Added to the root of the second moment.
    pub eps: T,
}

impl<T: Real> RiemannianAdam<T> {
    /// Riemannian Adam with step size `lr` and Adam's usual constants.
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

/// The moments and step count of [`RiemannianAdam`].
#[derive(Clone, Debug, PartialEq)]
pub struct RiemannianAdamState<P, T> {
    /// The first moment, a tangent vector at the current point.
    pub m: P,
    /// The second moment, entry by entry.
    pub v: P,
    /// `beta1^t` after `t` steps.
    pub beta1_t: T,
    /// `beta2^t` after `t` steps.
    pub beta2_t: T,
}

impl<T: Real, P: Manifold<T> + crate::Tangent> Optimizer<P> for RiemannianAdam<T> {
    type Scalar = T;
    type State = RiemannianAdamState<P, T>;

    fn check(&self) -> Result<(), crate::BadSetting> {
        super::step_size("lr", self.lr)?;
        super::decay("beta1", self.beta1)?;
        super::decay("beta2", self.beta2)?;
        super::positive("eps", self.eps)
    }

    fn init_state(&self, _p: &P) -> Self::State {
        RiemannianAdamState {
            m: P::zeros(),
            v: P::zeros(),
            beta1_t: T::one(),
            beta2_t: T::one(),
        }
    }

    /// Adaptive: the change arrives as minus the gradient, and `lr` is the step size.
    fn rate(&self) -> LearningRate<T> {
        LearningRate(T::one())
    }

    fn update(&self, s: &mut Self::State, p: &mut P, dp: &P) {
        let (b1, b2) = (self.beta1, self.beta2);
        let mut g = dp.clone();
        p.project(&mut g);
        zip3(&mut s.m, &g, &mut s.v, |m, gi, v| {
            *m = b1 * *m + (T::one() - b1) * gi;
            *v = b2 * *v + (T::one() - b2) * gi * gi;
        });
        s.beta1_t *= b1;
        s.beta2_t *= b2;
        let (c1, c2) = (T::one() - s.beta1_t, T::one() - s.beta2_t);
        let mut step = s.m.clone();
        zip2(&mut step, &s.v, |st, v| {
            *st = self.lr * (*st / c1) / ((v / c2).sqrt() + self.eps);
        });
        p.project(&mut step);
        p.retract(&step);
        let moved = p.clone();
        moved.project(&mut s.m);
    }
}
