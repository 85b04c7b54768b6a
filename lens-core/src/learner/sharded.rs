//! The sharded learner: one step over several shards of a batch, each run forward and back
//! on a thread of a fixed pool into a change buffer of its own, the changes then summed in
//! shard order. It is the batch lens with its sum done as a reduction: the model is the
//! shard's (a `Dense` over 8 columns, say), the step's batch is `shards` of them.

use super::{Learner, put, seen, zero};
use crate::gemm::{Kernel, with_kernel};
use crate::held::{Held, held_zeros};
use crate::optim::Optimizer;
use crate::pool::Pool;
use crate::{Flat, LabelError, Lens, Loss, Para, Real, StepError};
use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

/// What one shard's task leaves behind: its change, its loss, or why it was refused.
struct Slot<P, T> {
    /// The shard's parameter change. Zero between steps, as the learner's own.
    change: Held<P>,
    loss: T,
    /// A label the loss cannot take: its place in the shard's label, and what is wrong.
    refused: Option<(usize, LabelError)>,
}

/// A [`Learner`] whose step runs the shards of a batch on several threads.
///
/// Each step splits its batch into `shards` shards (the model's input is one shard: a
/// matrix of 8 columns, say, for 32 examples over 4 shards). Shard `s` runs on thread
/// `s % threads` of a pool started once, forward and back into a change buffer of its own,
/// allocated once; the changes are then added in shard order, the loss is the mean of the
/// shards' losses, and the optimizer puts the sum as the plain learner does (a step with a
/// bad label, a non-finite loss or change is refused with nothing changed).
///
/// **Determinism.** The sum is taken in a fixed order, and each shard's arithmetic does not
/// depend on the thread that runs it (the caller's [`Kernel`] is used on every thread), so
/// the parameters after any number of steps are bit for bit the same whatever the number of
/// threads, for a given number of shards. A different number of shards adds the same terms
/// in another order: equal up to rounding.
///
/// **Cost.** A step allocates nothing after the first (each thread warms its own pool of
/// activation blocks then); the threads poll for about 100 microseconds between steps before
/// they sleep. The sum of the changes and the optimizer's update run on the calling thread:
/// a shard must carry enough work to pay for them (an MNIST batch does; Iris at batch 1 does
/// not, and stays on a [`Learner`]).
///
/// ```
/// use paralens::{optim::Sgd, Dense, Init, Learner, Mse, ShardedLearner};
/// use paralens::nalgebra::SVector;
/// type V = SVector<f64, 1>;
///
/// // y = 2x - 1, four examples per step, one per shard, on two threads.
/// let model = Dense::<1, 1, f64>::new();
/// let learner = Learner::new(model, model.init(0), Mse, Sgd::new(0.5));
/// let mut sharded = ShardedLearner::with_threads(learner, 4, 2);
/// let xs = [0.0, 0.25, 0.5, 1.0];
/// for _ in 0..300 {
///     sharded.step_with(|s| (V::new(xs[s]), V::new(2.0 * xs[s] - 1.0)));
/// }
/// let w = sharded.params();
/// assert!((w.w[(0, 0)] - 2.0).abs() < 1e-3 && (w.b[0] + 1.0).abs() < 1e-3);
/// ```
pub struct ShardedLearner<M, X, L, O>
where
    M: Para<X>,
    O: Optimizer<M::Param>,
{
    learner: Learner<M, X, L, O>,
    /// One per shard. A task locks only its own slot (never contended); the lock is what
    /// lets the pool's threads write into the slots through a shared borrow.
    slots: Vec<Mutex<Slot<M::Param, O::Scalar>>>,
    pool: Pool,
    /// The threads a step uses now (at most the pool's).
    width: usize,
    /// While the number of threads is being chosen by timing steps: what was measured.
    tuning: Option<Tuning>,
}

/// Steps of warm-up, then steps timed on all the threads, then on one.
const WARM: u32 = 2;
const TIMED: u32 = 8;

/// The first steps of a learner built by [`ShardedLearner::new`], timed to choose between
/// one thread and all of them: a step too small to pay for the threads' exchanges (the
/// parameters read on every thread, the changes summed on one) stays on one. Either way
/// the result is the same, bit for bit.
#[derive(Clone, Copy, Debug)]
struct Tuning {
    steps: u32,
    all: Duration,
    one: Duration,
}

impl Tuning {
    /// The threads step `self.steps` runs on, of `most`.
    fn width(&self, most: usize) -> usize {
        if self.steps < WARM + TIMED { most } else { 1 }
    }

    /// Records a step's time; the chosen width once all are timed.
    fn record(&mut self, took: Duration, most: usize) -> Option<usize> {
        if self.steps >= WARM + TIMED {
            self.one += took;
        } else if self.steps >= WARM {
            self.all += took;
        }
        self.steps += 1;
        // All the threads only if they are clearly faster: timing noise keeps it on one.
        let faster = self.all.as_secs_f64() < 0.9 * self.one.as_secs_f64();
        (self.steps == WARM + 2 * TIMED).then_some(if faster { most } else { 1 })
    }
}

/// The learner and the pool's size.
impl<M, X, L, O> core::fmt::Debug for ShardedLearner<M, X, L, O>
where
    M: Para<X> + core::fmt::Debug,
    L: core::fmt::Debug,
    O: Optimizer<M::Param> + core::fmt::Debug,
{
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("ShardedLearner")
            .field("learner", &self.learner)
            .field("shards", &self.slots.len())
            .field("threads", &self.width)
            .field("choosing", &self.tuning.is_some())
            .finish()
    }
}

impl<M, X, L, O, T> ShardedLearner<M, X, L, O>
where
    T: Real + Send,
    X: Clone,
    M: Para<X> + Sync,
    M::Param: Flat<T> + Send + Sync,
    L: Loss<M::Out, Scalar = T> + Sync,
    M::Out: Clone,
    O: Optimizer<M::Param, Scalar = T>,
{
    /// `learner`'s steps split into `shards` shards, on one thread or on as many as the
    /// machine has cores (`std::thread::available_parallelism`, at most one per shard),
    /// whichever is faster: the first steps are timed both ways (8 on all the threads after
    /// 2 of warm-up, then 8 on one), and all the threads are kept only if they took less
    /// than 0.9 of the time. The choice never changes the result, only its speed;
    /// [`ShardedLearner::threads`] says what was chosen.
    ///
    /// # Panics
    /// If `shards` is 0, or the operating system refuses to start a thread.
    pub fn new(learner: Learner<M, X, L, O>, shards: usize) -> Self {
        let cores = std::thread::available_parallelism().map_or(1, usize::from);
        let mut s = Self::with_threads(learner, shards, cores);
        if s.width > 1 {
            s.tuning = Some(Tuning {
                steps: 0,
                all: Duration::ZERO,
                one: Duration::ZERO,
            });
        }
        s
    }

    /// `learner`'s steps split into `shards` shards on `threads` threads (the caller's
    /// included; at most one per shard, and at least one), whether or not that is faster.
    ///
    /// # Panics
    /// If `shards` is 0, or the operating system refuses to start a thread.
    pub fn with_threads(learner: Learner<M, X, L, O>, shards: usize, threads: usize) -> Self {
        assert!(
            shards > 0,
            "a sharded learner needs 1 or more shards, not 0"
        );
        let slots = (0..shards)
            .map(|_| {
                Mutex::new(Slot {
                    change: held_zeros::<M::Param>(),
                    loss: T::zero(),
                    refused: None,
                })
            })
            .collect();
        let pool = Pool::new(threads.clamp(1, shards));
        Self {
            learner,
            slots,
            width: pool.threads(),
            pool,
            tuning: None,
        }
    }

    /// The number of shards of a step.
    pub fn shards(&self) -> usize {
        self.slots.len()
    }

    /// The number of threads that run them, the caller's included (for a learner built by
    /// [`ShardedLearner::new`], the number chosen once its first steps are timed).
    pub fn threads(&self) -> usize {
        self.width
    }

    /// The learner: its model, parameters, optimizer and predictions.
    pub fn learner(&self) -> &Learner<M, X, L, O> {
        &self.learner
    }

    /// The learner, mutably (to lower the step size, load parameters, ...).
    pub fn learner_mut(&mut self) -> &mut Learner<M, X, L, O> {
        &mut self.learner
    }

    /// Gives back the learner (the threads stop).
    pub fn into_learner(self) -> Learner<M, X, L, O> {
        self.learner
    }

    /// The current parameters.
    pub fn params(&self) -> &M::Param {
        self.learner.params()
    }

    /// One step on a batch whose shard `s` is `shard(s)`: an input of the model and its
    /// label. `shard` runs on the thread of the shard (building the input is part of the
    /// parallel work). Returns the mean of the shards' losses before the step.
    ///
    /// # Errors
    /// A label the loss cannot take ([`StepError::ShardLabel`], the first shard's in shard
    /// order), a non-finite loss or parameter change, an optimizer setting out of range.
    /// On error the parameters and the optimizer's state are unchanged.
    pub fn try_step_with<F>(&mut self, shard: F) -> Result<T, StepError>
    where
        F: Fn(usize) -> (X, L::Label) + Sync,
    {
        let Some(mut tuning) = self.tuning else {
            return self.step_on(self.width, &shard);
        };
        let start = Instant::now();
        let result = self.step_on(tuning.width(self.width), &shard);
        if let Some(width) = tuning.record(start.elapsed(), self.width) {
            self.width = width;
            self.tuning = None;
        } else {
            self.tuning = Some(tuning);
        }
        result
    }

    /// [`ShardedLearner::try_step_with`] on `width` threads.
    fn step_on<F>(&mut self, width: usize, shard: &F) -> Result<T, StepError>
    where
        F: Fn(usize) -> (X, L::Label) + Sync,
    {
        let l = &mut self.learner;
        let p = seen(&l.optimizer, &l.state, &l.params, &mut l.scratch);
        let rate = l.optimizer.rate();
        let ((), pull_rate) = rate.apply_vjp(T::zero());
        let count = self.slots.len();
        // The step's loss is the mean over shards: each shard's change is weighted by 1/S.
        let seed = pull_rate(()) * (T::one() / T::cst(count as f64));
        let (model, loss, slots) = (&l.model, &l.loss, &self.slots);
        // Every thread computes with the kernel the caller's products use.
        let kernel = Kernel::current();
        let task = |s: usize| {
            let mut slot = slots[s].lock().unwrap_or_else(PoisonError::into_inner);
            let slot = &mut *slot;
            let run = || {
                let (x, label) = shard(s);
                if let Err(bad) = loss.check_labels(&label) {
                    slot.refused = Some(bad);
                    return;
                }
                let (y, pull_model) = model.vjp_params(p, x);
                let (value, pull_loss) = loss.vjp(y, &label);
                pull_model(pull_loss(seed), &mut slot.change);
                slot.loss = value;
            };
            // The caller's kernel is one this CPU runs, so `with_kernel` runs `run`.
            let _ = with_kernel(kernel, run);
        };
        if let Err(panic) = catch_unwind(AssertUnwindSafe(|| self.pool.run(width, count, &task))) {
            // A shard stopped half way: clear every buffer so the next step starts at zero.
            for slot in &mut self.slots {
                let slot = slot.get_mut().unwrap_or_else(PoisonError::into_inner);
                zero(&mut *slot.change, &self.learner.params);
                slot.refused = None;
            }
            resume_unwind(panic);
        }
        self.reduce()
    }

    /// Adds the shards' changes into shard 0's in shard order (leaving the others at zero),
    /// then lets the optimizer put the sum, or refuses the step.
    fn reduce(&mut self) -> Result<T, StepError> {
        let l = &mut self.learner;
        let count = self.slots.len();
        let (first, rest) = self.slots.split_at_mut(1);
        let sum = first[0].get_mut().unwrap_or_else(PoisonError::into_inner);
        let mut refused = sum.refused.take().map(|(i, e)| (0, i, e));
        let mut total = sum.loss;
        for (s, slot) in rest.iter_mut().enumerate() {
            let slot = slot.get_mut().unwrap_or_else(PoisonError::into_inner);
            if let Some((i, e)) = slot.refused.take() {
                refused.get_or_insert((s + 1, i, e));
            }
            total += slot.loss;
            // One pass: add into the sum and clear, so the buffer is zero for the next step.
            sum.change
                .zip3_slices(&l.params, &mut slot.change, &mut |acc, _, c| {
                    for (a, c) in acc.iter_mut().zip(c.iter_mut()) {
                        *a += *c;
                        *c = T::zero();
                    }
                });
        }
        if let Some((shard, index, error)) = refused {
            zero(&mut *sum.change, &l.params);
            return Err(StepError::ShardLabel {
                shard,
                index,
                error,
            });
        }
        let mean = total * (T::one() / T::cst(count as f64));
        put(
            &l.optimizer,
            &mut l.state,
            &mut l.params,
            &mut sum.change,
            mean,
        )?;
        Ok(mean)
    }

    /// One step on a batch whose shard `s` is `shard(s)` (see
    /// [`ShardedLearner::try_step_with`]).
    ///
    /// # Panics
    /// With the message of [`ShardedLearner::try_step_with`]'s error.
    pub fn step_with<F>(&mut self, shard: F) -> T
    where
        F: Fn(usize) -> (X, L::Label) + Sync,
    {
        self.try_step_with(shard).unwrap_or_else(|e| panic!("{e}"))
    }

    /// One step on `xs[s]`, `labels[s]` as shard `s` (each cloned on its shard's thread).
    ///
    /// # Errors
    /// [`StepError::BatchSize`] unless there are as many inputs and labels as shards; then
    /// as [`ShardedLearner::try_step_with`].
    pub fn try_step(&mut self, xs: &[X], labels: &[L::Label]) -> Result<T, StepError>
    where
        X: Sync,
        L::Label: Clone + Sync,
    {
        let count = self.slots.len();
        if xs.len() != count || labels.len() != count {
            return Err(StepError::BatchSize {
                expected: count,
                inputs: xs.len(),
                labels: labels.len(),
            });
        }
        self.try_step_with(|s| (xs[s].clone(), labels[s].clone()))
    }
}
