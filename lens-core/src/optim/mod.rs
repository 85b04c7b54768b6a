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

use crate::{BadSetting, Flat, LearningRate, Real};

/// An optimizer for parameters of type `P`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not an optimizer of parameters of type `{P}`",
    label = "not an optimizer of the model's parameters",
    note = "if the loss and the optimizer are in each other's place: a `Learner` takes the loss third and the optimizer last, `Learner::new(model, params, SoftmaxCrossEntropy, Adam::new(0.01))`"
)]
pub trait Optimizer<P> {
    /// The scalar type of the parameters.
    type Scalar: Real;
    /// The optimizer's state (velocities, running averages, step count).
    type State;

    /// The state before the first step.
    fn init_state(&self, p: &P) -> Self::State;

    /// A setting with which the optimizer cannot train (a NaN or negative learning rate, a
    /// decay outside `[0, 1)`, a zero `eps`), or `Ok`. The learner asks before every step
    /// and refuses the step ([`crate::StepError::Setting`]): an adaptive optimizer applies
    /// its step size inside [`Optimizer::update`], where a NaN one would turn every parameter
    /// NaN without showing in the change the learner checks. The default accepts everything.
    ///
    /// # Errors
    /// The first setting found out of its range.
    fn check(&self) -> Result<(), BadSetting> {
        Ok(())
    }

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

/// A step size or learning rate: a finite number, 0 or more.
pub(crate) fn step_size<T: Real>(name: &'static str, v: T) -> Result<(), BadSetting> {
    within(
        name,
        v,
        v.finite() && v >= T::zero(),
        "a finite number, 0 or more",
    )
}

/// A decay or momentum coefficient: in `[0, 1)`.
pub(crate) fn decay<T: Real>(name: &'static str, v: T) -> Result<(), BadSetting> {
    within(name, v, v >= T::zero() && v < T::one(), "in [0, 1)")
}

/// A term that keeps a denominator away from zero: a finite number above 0.
pub(crate) fn positive<T: Real>(name: &'static str, v: T) -> Result<(), BadSetting> {
    within(
        name,
        v,
        v.finite() && v > T::zero(),
        "a finite number above 0",
    )
}

fn within<T: Real>(
    name: &'static str,
    v: T,
    ok: bool,
    expected: &'static str,
) -> Result<(), BadSetting> {
    if ok {
        Ok(())
    } else {
        Err(BadSetting {
            name,
            value: v.to_f64(),
            expected,
        })
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
    #[cfg(target_arch = "x86_64")]
    if Isa::whole_in_avx2(dp) {
        // SAFETY: `whole_in_avx2` is true only on a CPU with AVX2 (it asks the CPU).
        unsafe { avx2_whole::zip3(p, dp, s, &mut f) };
        return;
    }
    p.zip3_slices(dp, s, &mut |sp, sd, ss| {
        let n = sp.len();
        let (sd, ss) = (&sd[..n], &mut ss[..n]);
        wide!(Isa::for_len(n), loop3(sp, sd, ss, &mut f));
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
    #[cfg(target_arch = "x86_64")]
    if Isa::whole_in_avx2(dp) {
        // SAFETY: `whole_in_avx2` is true only on a CPU with AVX2 (it asks the CPU).
        unsafe { avx2_whole::zip4(p, dp, m, v, &mut f) };
        return;
    }
    p.zip4_slices(dp, m, v, &mut |sp, sd, sm, sv| {
        // Equal lengths stated up front let the loop vectorise without bounds checks.
        let n = sp.len();
        let (sd, sm, sv) = (&sd[..n], &mut sm[..n], &mut sv[..n]);
        wide!(Isa::for_len(n), loop4(sp, sd, sm, sv, &mut f));
    });
}

/// `f` over corresponding scalars of `p` (mutable) and `dp`, setting every change to zero
/// once it is read (plain descent's `update_and_clear`: one pass instead of two).
#[inline(always)]
pub(crate) fn zip2_clear<T: Real, P: Flat<T>>(p: &mut P, dp: &mut P, mut f: impl FnMut(&mut T, T)) {
    #[cfg(target_arch = "x86_64")]
    if Isa::whole_in_avx2(dp) {
        // SAFETY: `whole_in_avx2` is true only on a CPU with AVX2 (it asks the CPU).
        unsafe { avx2_whole::zip2_clear(p, dp, &mut f) };
        return;
    }
    p.zip2_slices_mut(dp, &mut |sp, sd| {
        let n = sp.len();
        let sd = &mut sd[..n];
        wide!(Isa::for_len(n), loop2_clear(sp, sd, &mut f));
    });
}

/// [`zip4`] that also sets every change to zero once it is read (Adam's
/// `update_and_clear`: one pass over the changes instead of two).
#[inline(always)]
pub(crate) fn zip4_clear<T: Real, P: Flat<T>>(
    p: &mut P,
    dp: &mut P,
    m: &mut P,
    v: &mut P,
    mut f: impl FnMut(&mut T, T, &mut T, &mut T),
) {
    #[cfg(target_arch = "x86_64")]
    if Isa::whole_in_avx2(dp) {
        // SAFETY: `whole_in_avx2` is true only on a CPU with AVX2 (it asks the CPU).
        unsafe { avx2_whole::zip4_clear(p, dp, m, v, &mut f) };
        return;
    }
    p.zip4_slices_mut(dp, m, v, &mut |sp, sd, sm, sv| {
        let n = sp.len();
        let (sd, sm, sv) = (&mut sd[..n], &mut sm[..n], &mut sv[..n]);
        wide!(Isa::for_len(n), loop4_clear(sp, sd, sm, sv, &mut f));
    });
}

/// Whole updates and scans compiled for AVX2, for parameters whose slices are all shorter
/// than `WIDE` (see [`Isa::whole_in_avx2`]): the structure's slices are visited inside one
/// function with the feature, so each short slice's loop runs 8 wide (the division and
/// square root of Adam's update included) with no call of its own. Per slice, the call into
/// a wide copy cost more than it saved at the Iris step's sizes; once per update it does not
/// (docs/history/BENCHMARKS-2026-11-30-to-12-04.md, 2026-12-04).
///
/// # Safety
/// Each needs a CPU with AVX2.
#[cfg(target_arch = "x86_64")]
mod avx2_whole {
    use super::avx2;
    use crate::{Flat, Real};

    // Each slice's loop is `avx2`'s: called from a closure of a function with the feature,
    // which inherits it, so the loop is inlined rather than called per slice.

    /// [`super::zip3`] in one AVX2 call.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn zip3<T: Real, P: Flat<T>>(
        p: &mut P,
        dp: &P,
        s: &mut P,
        f: &mut impl FnMut(&mut T, T, &mut T),
    ) {
        p.zip3_slices(dp, s, &mut |sp, sd, ss| {
            // SAFETY: this function runs only on a CPU with AVX2.
            unsafe { avx2::loop3(sp, sd, ss, f) }
        });
    }

    /// [`super::zip4`] in one AVX2 call.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn zip4<T: Real, P: Flat<T>>(
        p: &mut P,
        dp: &P,
        m: &mut P,
        v: &mut P,
        f: &mut impl FnMut(&mut T, T, &mut T, &mut T),
    ) {
        p.zip4_slices(dp, m, v, &mut |sp, sd, sm, sv| {
            // SAFETY: this function runs only on a CPU with AVX2.
            unsafe { avx2::loop4(sp, sd, sm, sv, f) }
        });
    }

    /// [`super::zip2_clear`] in one AVX2 call.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn zip2_clear<T: Real, P: Flat<T>>(
        p: &mut P,
        dp: &mut P,
        f: &mut impl FnMut(&mut T, T),
    ) {
        p.zip2_slices_mut(dp, &mut |sp, sd| {
            // SAFETY: this function runs only on a CPU with AVX2.
            unsafe { avx2::loop2_clear(sp, sd, f) }
        });
    }

    /// [`super::zip4_clear`] in one AVX2 call.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn zip4_clear<T: Real, P: Flat<T>>(
        p: &mut P,
        dp: &mut P,
        m: &mut P,
        v: &mut P,
        f: &mut impl FnMut(&mut T, T, &mut T, &mut T),
    ) {
        p.zip4_slices_mut(dp, m, v, &mut |sp, sd, sm, sv| {
            // SAFETY: this function runs only on a CPU with AVX2.
            unsafe { avx2::loop4_clear(sp, sd, sm, sv, f) }
        });
    }

    /// Whether any scalar of `p` is NaN or infinite, in one AVX2 call.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn any_non_finite<T: Real, P: Flat<T>>(p: &P) -> bool {
        let mut bad = false;
        // SAFETY: this function runs only on a CPU with AVX2.
        p.visit_slices(&mut |s| bad |= unsafe { avx2::any_non_finite(s) });
        bad
    }
}

/// Whether any scalar of `p` is NaN or infinite (the learner's scan of a step's change).
#[inline]
pub(crate) fn any_non_finite_in<T: Real, P: Flat<T>>(p: &P) -> bool {
    #[cfg(target_arch = "x86_64")]
    if Isa::whole_in_avx2(p) {
        // SAFETY: `whole_in_avx2` is true only on a CPU with AVX2 (it asks the CPU).
        return unsafe { avx2_whole::any_non_finite(p) };
    }
    let mut bad = false;
    p.visit_slices(&mut |s| bad |= any_non_finite(s));
    bad
}

/// The instruction set a loop of this module runs in: made only here, from
/// [`crate::gemm::Kernel::current`] (the widest this CPU runs, unless `gemm::with_kernel`
/// forces a narrower one) or as the baseline, so it always names a copy this CPU runs.
#[derive(Clone, Copy)]
pub(crate) struct Isa(crate::gemm::Kernel);

impl Isa {
    /// The baseline copy, which every CPU runs.
    const BASELINE: Self = Self(crate::gemm::Kernel::Portable);

    /// The kernel the products on this thread use.
    #[cfg(target_arch = "x86_64")]
    #[inline]
    fn current() -> Self {
        Self(crate::gemm::Kernel::current())
    }

    /// Whether an update or scan of all of `p` runs in one AVX2 call (`avx2_whole`): where
    /// each slice would run in the baseline copy (all shorter than `WIDE`), in a build
    /// without AVX2 (one with it has it inline already), when the kernel of this thread is
    /// AVX2 or AVX-512 and the CPU has AVX2 (`gemm::with_kernel` forcing the portable kernel
    /// forces the baseline here too). The lengths are constants for static shapes.
    #[cfg(target_arch = "x86_64")]
    #[inline]
    fn whole_in_avx2<T: Real, P: Flat<T>>(p: &P) -> bool {
        if cfg!(target_feature = "avx2") {
            return false;
        }
        let mut short = true;
        p.visit_slices(&mut |s| short &= s.len() < WIDE);
        short && Self::current().0 != crate::gemm::Kernel::Portable && crate::__cpu_has!("avx2")
    }

    /// [`Isa::current`] for an update loop over `n` values, the baseline below `WIDE` (the
    /// Iris step's short slices: the dispatch would cost more than it saves).
    #[inline]
    fn for_len(n: usize) -> Self {
        #[cfg(target_arch = "x86_64")]
        if n >= WIDE {
            return Self::current();
        }
        let _ = n;
        Self::BASELINE
    }
}

/// Runs `$loop` (a function of this module, with copies compiled for AVX-512 and for AVX2
/// by [`wide_copies`]) in the copy of the instruction set `$isa` (an [`Isa`]).
macro_rules! wide {
    ($isa:expr, $loop:ident($($arg:expr),*)) => {{
        #[cfg(target_arch = "x86_64")]
        {
            use crate::gemm::Kernel;
            let Isa(kernel) = $isa;
            if kernel == Kernel::Avx512 {
                // SAFETY: an `Isa` is AVX-512 only when `Kernel::current` was, which is only on
                // a CPU with AVX-512F.
                unsafe { avx512::$loop($($arg),*) }
            } else if kernel == Kernel::Avx2Fma {
                // SAFETY: as above, AVX2 with FMA only on a CPU with both.
                unsafe { avx2::$loop($($arg),*) }
            } else {
                baseline::$loop($($arg),*)
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            let _ = $isa;
            baseline::$loop($($arg),*)
        }
    }};
}
use wide;

/// Whether any entry of `s` is NaN or infinite. The learner scans every change before a
/// step touches the parameters. A slice of `WIDE` values or more is scanned in the copy of
/// [`crate::gemm::Kernel::current`]; a shorter one inline in the baseline's, like the update
/// loops: at the Iris step's size (slices of 64, 16, 48 and 3 values) the calls into the
/// AVX-512 copy cost more on an Intel Xeon than the scan they shortened. A build for AVX-512
/// (`-C target-cpu=native` on such a CPU) has the widest copy inline already.
#[inline]
pub(crate) fn any_non_finite<T: Real>(s: &[T]) -> bool {
    let isa = if cfg!(target_feature = "avx512f") {
        Isa::BASELINE
    } else {
        Isa::for_len(s.len())
    };
    wide!(isa, any_non_finite(s))
}

/// Slices at least this long take a wide copy of an update loop.
#[cfg(target_arch = "x86_64")]
const WIDE: usize = 256;

/// The update loops, once per instruction set: the same code, vectorised 16 wide (AVX-512)
/// or 8 wide (AVX2) instead of the baseline's 4 (Adam's square root and division included;
/// measured: Adam was most of the MNIST MLP step outside its matrix products). The results
/// are the same bit for bit: the operations are the same IEEE operations, one lane at a
/// time (no FMA is enabled, so nothing is contracted). The update closure is inlined into
/// each copy; a loop taking a closure over indices instead was not, and ran twice as slow.
macro_rules! wide_copies {
    ([$($attr:meta),*] $($unsafe:ident)?) => {
        /// Applies `f` entry by entry to `p`, `d` and `s`.
        $(#[$attr])* pub(super) $($unsafe)? fn loop3<T: Real>(
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

        /// Applies `f` entry by entry to `p`, `d`, `m` and `v`.
        $(#[$attr])* pub(super) $($unsafe)? fn loop4<T: Real>(
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

        /// Whether any entry is NaN or infinite (no early exit: the common case reads them
        /// all, and a branch-free scan vectorises).
        $(#[$attr])* pub(super) $($unsafe)? fn any_non_finite<T: Real>(s: &[T]) -> bool {
            s.iter().fold(false, |b, v| b | v.non_finite())
        }

        /// Applies `f` entry by entry to `p` and `d`, setting each change to zero once read.
        $(#[$attr])* pub(super) $($unsafe)? fn loop2_clear<T: Real>(
            sp: &mut [T],
            sd: &mut [T],
            f: &mut impl FnMut(&mut T, T),
        ) {
            let n = sp.len();
            let sd = &mut sd[..n];
            for i in 0..n {
                let d = core::mem::replace(&mut sd[i], T::zero());
                f(&mut sp[i], d);
            }
        }

        /// [`loop4`], setting each change to zero once read.
        $(#[$attr])* pub(super) $($unsafe)? fn loop4_clear<T: Real>(
            sp: &mut [T],
            sd: &mut [T],
            sm: &mut [T],
            sv: &mut [T],
            f: &mut impl FnMut(&mut T, T, &mut T, &mut T),
        ) {
            let n = sp.len();
            let (sd, sm, sv) = (&mut sd[..n], &mut sm[..n], &mut sv[..n]);
            for i in 0..n {
                let d = core::mem::replace(&mut sd[i], T::zero());
                f(&mut sp[i], d, &mut sm[i], &mut sv[i]);
            }
        }
    };
}

/// The loops for the build's baseline target.
mod baseline {
    use crate::Real;
    wide_copies!([inline(always)]);
}

/// The loops compiled for AVX-512F.
///
/// # Safety
/// Each needs a CPU with AVX-512F.
#[cfg(target_arch = "x86_64")]
mod avx512 {
    use crate::Real;
    wide_copies!([target_feature(enable = "avx512f")] unsafe);
}

/// The loops compiled for AVX2.
///
/// # Safety
/// Each needs a CPU with AVX2.
#[cfg(target_arch = "x86_64")]
mod avx2 {
    use crate::Real;
    wide_copies!([target_feature(enable = "avx2")] unsafe);
}
