//! Generative adversarial networks as one composite lens.
//!
//! The generator `G: Z -> X` is a parametric lens. The critic `D: X -> R` is a loss whose
//! parameters are learned: [`Critic`] is the Wasserstein loss
//! `W = mean D(real) - mean D(G(z))`, with `D`'s parameters on its parameter port. The whole
//! step is the lens
//!
//! ```text
//! (z, real) --G x id--> (fake, real) --Critic(D)--> W
//! ```
//!
//! built from the library's combinators: `generator.par(Identity).then(Critic::new(d))`. Its
//! parameter is `((P_G, ()), P_D)`. One reverse pass from `dW = 1` gives both parameter
//! changes. The learning-rate lens then differs by port: negative on the generator's port,
//! which descends `W` (its samples score higher), and positive on the critic's port, which
//! ascends `W` (it separates real from fake). [`Adversarial`] runs that step.
//!
//! **Why weight clipping.** The Wasserstein loss needs a critic that is 1-Lipschitz (up to a
//! constant). Weight clipping gets that from a projection: after each update, every critic
//! parameter is clamped into `[-c, c]`. That is a retraction onto a box, the same shape as the
//! manifold optimizers' retraction, so the learner stays "optimizer lens, then projection".
//! Spectral normalisation would be a reparametrisation lens (`W / sigma(W)`, through
//! [`crate::Reparam`]). But it needs a power iteration whose state lives outside the
//! parameters, and its reverse passes through the top singular vectors. A gradient penalty
//! would need second derivatives. Clipping is the one that is exact in this framework. Its
//! known cost is a critic of limited capacity, hence RMSProp and several critic steps per
//! generator step ([`Adversarial::step_critic`]).

use crate::held::{Held, held, held_zeros};
use crate::optim::Optimizer;
use crate::{Flat, Init, Lens, Par, Para, ParaExt, Real, StepError, Tangent, Then};
use nalgebra::SMatrix;
use rand::Rng;

/// The identity lens: its value is its input, its reverse the change. It stands beside the
/// generator so that the real samples reach the critic unchanged.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Identity;

impl<X> Lens<X> for Identity {
    type Out = X;
    #[inline]
    fn apply(&self, x: X) -> X {
        x
    }
    #[inline]
    fn apply_vjp(&self, x: X) -> (X, impl FnOnce(X) -> X) {
        (x, |d: X| d)
    }
}

crate::lens::lens_is_para!([] Identity);

/// The Wasserstein loss with a learned critic `d`, on a pair `(fake, real)` of batches (the
/// examples are the `B` columns of a matrix; `d` scores each column):
/// `W = mean d(real) - mean d(fake)`. The parameter is `d`'s. Reverse: `-dW / B` per fake
/// column through `d` to the fake batch, `+dW / B` per real column, and both add their
/// parameter changes (one critic, used twice). The real batch is data: its change is zero.
#[derive(Clone, Copy, Debug, Default)]
pub struct Critic<D> {
    /// The critic.
    pub d: D,
}

impl<D> Critic<D> {
    /// The Wasserstein loss with critic `d`.
    #[must_use]
    pub const fn new(d: D) -> Self {
        Self { d }
    }
}

impl<X, D, T, const B: usize> Para<(X, X)> for Critic<D>
where
    T: Real,
    X: Tangent,
    D: Para<X, Out = SMatrix<T, 1, B>>,
{
    type Param = D::Param;
    type Out = T;

    #[inline]
    fn forward(&self, p: &D::Param, (fake, real): (X, X)) -> T {
        let n = T::cst(B as f64);
        (self.d.forward(p, real).sum() - self.d.forward(p, fake).sum()) / n
    }

    #[inline]
    fn vjp(
        &self,
        p: &D::Param,
        (fake, real): (X, X),
    ) -> (T, impl FnOnce(T, &mut D::Param) -> (X, X)) {
        let n = T::cst(B as f64);
        let (yf, pull_fake) = self.d.vjp(p, fake);
        let (yr, pull_real) = self.d.vjp_params(p, real);
        (
            (yr.sum() - yf.sum()) / n,
            move |dw: T, dp: &mut D::Param| {
                pull_real(SMatrix::from_element(dw / n), dp);
                let dfake = pull_fake(SMatrix::from_element(-dw / n), dp);
                (dfake, X::zeros())
            },
        )
    }
}

impl<D: Init> Init for Critic<D> {
    type Param = D::Param;
    fn init_with<R: Rng + ?Sized>(&self, rng: &mut R) -> D::Param {
        self.d.init_with(rng)
    }
    #[cfg(feature = "std")]
    fn layout(&self, path: &str, layout: &mut crate::checkpoint::Layout) {
        self.d.layout(path, layout);
    }
}

/// The composite of a GAN step: `(z, real) -> W`.
pub type GanLens<G, D> = Then<Par<G, Identity>, Critic<D>>;

/// A GAN trained by its composite lens: the generator descends the Wasserstein loss, the
/// critic ascends it, each with its own optimizer, and the critic's parameters are clipped
/// into `[-clip, clip]` after every update. Storage is allocated once, in [`Adversarial::new`];
/// a step allocates nothing.
///
/// ```
/// use paralens::gan::Adversarial;
/// use paralens::optim::RmsProp;
/// use paralens::{Dense, ParaExt, Relu};
/// use paralens::nalgebra::SMatrix;
///
/// // A generator that learns to move noise to around 3, against a small critic.
/// let g = Dense::<1, 1, f64>::new();
/// let d = Dense::<1, 8, f64>::new().then(Relu).then(Dense::<8, 1, f64>::new());
/// let mut gan = Adversarial::new(g, d, RmsProp::new(0.01), RmsProp::new(0.01), 0.5, 0);
/// let noise = SMatrix::<f64, 1, 16>::from_fn(|_, j| (j as f64 - 7.5) / 7.5);
/// let real = noise.map(|z| 3.0 + 0.1 * z);
/// for _ in 0..1500 {
///     for _ in 0..3 {
///         gan.step_critic(noise, real).unwrap();
///     }
///     gan.step(noise, real).unwrap();
/// }
/// let mean = gan.generate(noise).mean();
/// assert!((mean - 3.0).abs() < 0.3, "the generated mean is {mean}");
/// ```
pub struct Adversarial<G: Init, D: Init, OG: Optimizer<G::Param>, OD: Optimizer<D::Param>> {
    model: GanLens<G, D>,
    params: Held<((G::Param, ()), D::Param)>,
    change: Held<((G::Param, ()), D::Param)>,
    og: OG,
    od: OD,
    sg: OG::State,
    sd: OD::State,
    clip: OD::Scalar,
}

impl<G, D, OG, OD, T> Adversarial<G, D, OG, OD>
where
    T: Real,
    G: Init,
    D: Init,
    G::Param: Flat<T>,
    D::Param: Flat<T>,
    OG: Optimizer<G::Param, Scalar = T>,
    OD: Optimizer<D::Param, Scalar = T>,
{
    /// A GAN with generator `g`, critic `d`, their optimizers, the clipping bound of the
    /// critic's parameters, and the seed of their initialisation.
    pub fn new(g: G, d: D, og: OG, od: OD, clip: T, seed: u64) -> Self {
        let model = g.par(Identity).then(Critic::new(d));
        let mut params = held(model.init(seed));
        clamp(&mut params.1, clip);
        let sg = og.init_state(&params.0.0);
        let sd = od.init_state(&params.1);
        Self {
            model,
            change: held_zeros(),
            params,
            og,
            od,
            sg,
            sd,
            clip,
        }
    }

    /// The composite lens `(z, real) -> W`.
    pub fn lens(&self) -> &GanLens<G, D> {
        &self.model
    }

    /// The two optimizers, for a schedule of their step sizes.
    pub fn optimizers_mut(&mut self) -> (&mut OG, &mut OD) {
        (&mut self.og, &mut self.od)
    }

    /// The generator's parameters.
    pub fn generator_params(&self) -> &G::Param {
        &self.params.0.0
    }

    /// The critic's parameters.
    pub fn critic_params(&self) -> &D::Param {
        &self.params.1
    }

    /// The generator's samples from the noise batch `z`.
    pub fn generate<Z>(&self, z: Z) -> G::Out
    where
        G: Para<Z, Param = <G as Init>::Param>,
    {
        self.model.a.a.forward(&self.params.0.0, z)
    }

    /// One step of the composite: the critic ascends `W`, the generator descends it.
    /// Returns `W` before the step.
    ///
    /// # Errors
    /// A non-finite `W` or parameter change; nothing is changed then.
    pub fn step<Z, X, const B: usize>(&mut self, z: Z, real: X) -> Result<T, StepError>
    where
        G: Para<Z, Out = X, Param = <G as Init>::Param>,
        D: Para<X, Out = SMatrix<T, 1, B>, Param = <D as Init>::Param>,
        X: Tangent,
    {
        self.run(z, real, true)
    }

    /// A step of the critic alone (the generator's change is dropped): WGAN trains the
    /// critic several times per generator step.
    ///
    /// # Errors
    /// As [`Adversarial::step`].
    pub fn step_critic<Z, X, const B: usize>(&mut self, z: Z, real: X) -> Result<T, StepError>
    where
        G: Para<Z, Out = X, Param = <G as Init>::Param>,
        D: Para<X, Out = SMatrix<T, 1, B>, Param = <D as Init>::Param>,
        X: Tangent,
    {
        self.run(z, real, false)
    }

    fn run<Z, X, const B: usize>(&mut self, z: Z, real: X, generator: bool) -> Result<T, StepError>
    where
        G: Para<Z, Out = X, Param = <G as Init>::Param>,
        D: Para<X, Out = SMatrix<T, 1, B>, Param = <D as Init>::Param>,
        X: Tangent,
    {
        // Forward through G x id ; Critic, then back from dW = 1: the change buffer holds
        // the gradient of W for both parameters.
        let (w, pull) = self.model.vjp(&self.params, (z, real));
        pull(T::cst(1.0), &mut self.change);
        let refused = if let Err(bad) = self.og.check().and_then(|()| self.od.check()) {
            Some(StepError::Setting(bad))
        } else if !w.finite() {
            Some(StepError::NonFiniteLoss { loss: w.to_f64() })
        } else if !self.change.0.0.all_finite() || !self.change.1.all_finite() {
            Some(StepError::NonFiniteGradient)
        } else {
            None
        };
        if let Some(e) = refused {
            clear(&mut self.change.0.0);
            clear(&mut self.change.1);
            return Err(e);
        }
        // The learning-rate lenses: `rate()` is `-eta` (descent) for both optimizers; the
        // critic's port takes the opposite sign, so it ascends.
        let (rg, rd) = (rate_of(&self.og), rate_of(&self.od));
        if generator {
            self.change.0.0.scale(rg);
            self.og
                .update_and_clear(&mut self.sg, &mut self.params.0.0, &mut self.change.0.0);
        } else {
            clear(&mut self.change.0.0);
        }
        self.change.1.scale(-rd);
        self.od
            .update_and_clear(&mut self.sd, &mut self.params.1, &mut self.change.1);
        clamp(&mut self.params.1, self.clip);
        Ok(w)
    }
}

/// The change the learning-rate lens of `o` emits for a loss change of one: `-eta`.
fn rate_of<P, O: Optimizer<P>>(o: &O) -> O::Scalar {
    let rate = o.rate();
    let ((), pull) = rate.apply_vjp(O::Scalar::cst(1.0));
    pull(())
}

fn clear<T: Real, P: Flat<T>>(p: &mut P) {
    for s in p.slices_mut() {
        s.fill(T::zero());
    }
}

/// The projection of weight clipping: every scalar into `[-c, c]`.
fn clamp<T: Real, P: Flat<T>>(p: &mut P, c: T) {
    for s in p.slices_mut() {
        for v in s {
            *v = v.max(-c).min(c);
        }
    }
}
