//! Optimizers as lenses on the parameter port.
//!
//! An optimizer with state `S` is a lens `(S x P, S x P) -> (P, P)`: its forward shows the
//! model a parameter (the stored one, or Nesterov's look-ahead), its backward `update` takes
//! the parameter change that came back through model, loss and learning rate and puts the
//! new parameters and state. The change arrives already scaled by the learning-rate lens
//! ([`Optimizer::rate`]): `-eta` times the gradient for the plain methods, `-1` times the
//! gradient for the adaptive ones, which carry their own step size.
//!
//! Every optimizer walks the parameters through [`Flat`]: one loop over flat slices, whatever
//! the model's shape.

mod adagrad;
mod adam;
mod momentum;
mod riemannian;
mod rmsprop;
mod sgd;

pub use adagrad::AdaGrad;
pub use adam::{Adam, AdamState, AdamW};
pub use momentum::{Momentum, Nesterov};
pub use riemannian::{RiemannianAdam, RiemannianAdamState, RiemannianSgd};
pub use rmsprop::RmsProp;
pub use sgd::Sgd;

use crate::{Flat, LearningRate, Real};

/// An optimizer for parameters of type `P`.
pub trait Optimizer<P> {
    /// The scalar type of the parameters.
    type Scalar: Real;
    /// The optimizer's state (velocities, running averages, step count).
    type State;

    /// The state before the first step.
    fn init_state(&self, p: &P) -> Self::State;

    /// The learning-rate lens placed after the loss.
    fn rate(&self) -> LearningRate<Self::Scalar>;

    /// Whether [`Optimizer::view`] shows the model something other than `p` (and so needs a
    /// scratch copy of the parameters, allocated once by the learner).
    fn looks_ahead(&self) -> bool {
        false
    }

    /// The parameter the model runs with (the optimizer lens's forward). Most optimizers
    /// show `p` itself; Nesterov writes its look-ahead into `scratch` and shows that.
    fn view<'p>(&self, _state: &Self::State, p: &'p P, _scratch: &'p mut P) -> &'p P {
        p
    }

    /// Puts the change `dp` (already scaled by [`Optimizer::rate`]) onto `p` and the state.
    fn update(&self, state: &mut Self::State, p: &mut P, dp: &P);

    /// [`Optimizer::update`], then sets `dp` to zero, ready for the next step's pullbacks to
    /// add into. Optimizers that read each change once clear it as they read it: one pass
    /// over the change buffer instead of two (the learner's buffer is as large as the model).
    fn update_and_clear(&self, state: &mut Self::State, p: &mut P, dp: &mut P)
    where
        P: Flat<Self::Scalar>,
    {
        self.update(state, p, dp);
        for s in dp.slices_mut() {
            s.fill(Self::Scalar::cst(0.0));
        }
    }
}

/// Applies `f` to corresponding scalars of `a` (mutable) and `b`.
#[inline(always)]
pub(crate) fn zip2<T: Real, P: Flat<T>>(a: &mut P, b: &P, mut f: impl FnMut(&mut T, T)) {
    a.zip2_slices(b, &mut |sa, sb| {
        let n = sa.len();
        let sb = &sb[..n];
        for i in 0..n {
            f(&mut sa[i], sb[i]);
        }
    });
}

/// Applies `f` to corresponding scalars of `p` (mutable), `dp` and the state `s` (mutable).
#[inline(always)]
pub(crate) fn zip3<T: Real, P: Flat<T>>(
    p: &mut P,
    dp: &P,
    s: &mut P,
    mut f: impl FnMut(&mut T, T, &mut T),
) {
    p.zip3_slices(dp, s, &mut |sp, sd, ss| {
        let n = sp.len();
        let (sd, ss) = (&sd[..n], &mut ss[..n]);
        #[cfg(target_arch = "x86_64")]
        if n >= WIDE && std::arch::is_x86_feature_detected!("avx512f") {
            // SAFETY: AVX-512F was detected on this CPU just above.
            unsafe { zip3_avx512(sp, sd, ss, &mut f) };
            return;
        }
        for i in 0..n {
            f(&mut sp[i], sd[i], &mut ss[i]);
        }
    });
}

/// Applies `f` to corresponding scalars of `p`, `dp` and two states `m`, `v`.
#[inline(always)]
pub(crate) fn zip4<T: Real, P: Flat<T>>(
    p: &mut P,
    dp: &P,
    m: &mut P,
    v: &mut P,
    mut f: impl FnMut(&mut T, T, &mut T, &mut T),
) {
    p.zip4_slices(dp, m, v, &mut |sp, sd, sm, sv| {
        // Equal lengths stated up front let the loop vectorise without bounds checks.
        let n = sp.len();
        let (sd, sm, sv) = (&sd[..n], &mut sm[..n], &mut sv[..n]);
        #[cfg(target_arch = "x86_64")]
        if n >= WIDE && std::arch::is_x86_feature_detected!("avx512f") {
            // SAFETY: AVX-512F was detected on this CPU just above.
            unsafe { zip4_avx512(sp, sd, sm, sv, &mut f) };
            return;
        }
        for i in 0..n {
            f(&mut sp[i], sd[i], &mut sm[i], &mut sv[i]);
        }
    });
}

/// Slices at least this long take the AVX-512 copy of an update loop (shorter ones, as in
/// the Iris step, are not worth the check).
#[cfg(target_arch = "x86_64")]
const WIDE: usize = 256;

/// [`zip3`]'s loop compiled for AVX-512 (RMSprop's and AdaGrad's square root and division),
/// as [`zip4_avx512`].
///
/// # Safety
/// The CPU has AVX-512F.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn zip3_avx512<T: Real>(
    sp: &mut [T],
    sd: &[T],
    ss: &mut [T],
    f: &mut impl FnMut(&mut T, T, &mut T),
) {
    let n = sp.len();
    let (sd, ss) = (&sd[..n], &mut ss[..n]);
    for i in 0..n {
        f(&mut sp[i], sd[i], &mut ss[i]);
    }
}

/// [`zip4`]'s loop compiled for AVX-512: the update is the same code, vectorised 16 wide
/// instead of the baseline's 4 (Adam's square root and division included; measured: Adam
/// was most of the MNIST MLP step outside its matrix products). The results are the same:
/// the operations are the same IEEE operations, one lane at a time. (The update closure is
/// inlined into this copy; a loop taking a closure over indices instead was not, and ran
/// twice as slow.)
///
/// # Safety
/// The CPU has AVX-512F.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn zip4_avx512<T: Real>(
    sp: &mut [T],
    sd: &[T],
    sm: &mut [T],
    sv: &mut [T],
    f: &mut impl FnMut(&mut T, T, &mut T, &mut T),
) {
    let n = sp.len();
    let (sd, sm, sv) = (&sd[..n], &mut sm[..n], &mut sv[..n]);
    for i in 0..n {
        f(&mut sp[i], sd[i], &mut sm[i], &mut sv[i]);
    }
}
