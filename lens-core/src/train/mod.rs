//! The training loop every example used to write for itself: epochs of seeded, shuffled
//! batches, a held-out evaluation after each epoch, the best parameters on it kept, early
//! stopping, and the caller told of every epoch (and able to change the learner between
//! epochs: a step-size schedule, a checkpoint).
//!
//! Batches have the model's static shape, so an epoch runs `examples / batch` whole batches
//! and **drops the last, incomplete one**: a padded batch would need a mask through the loss.
//! The shuffle is a new permutation of the example indices per epoch, drawn from one
//! `StdRng` seeded by [`Fit::seed`], so a run is repeatable. With the `progress` feature (on by
//! default) a progress bar shows the steps of each epoch when [`Fit::progress`] is set and
//! standard error is a terminal; it is silent otherwise.
//!
//! ```
//! use paralens::train::{fit, Control, Eval, Fit};
//! use paralens::{optim::Adam, Dense, Init, Learner, Mse};
//! use paralens::nalgebra::SVector;
//! type V = SVector<f64, 1>;
//!
//! // y = 2x - 1 from 64 points; batches of one example.
//! let xs: Vec<f64> = (0..64).map(|i| i as f64 / 64.0).collect();
//! let model = Dense::<1, 1, f64>::new();
//! let mut learner = Learner::new(model, model.init(0), Mse, Adam::new(0.05));
//! let eval = |l: &Learner<_, _, _, _>| {
//!     let loss = xs
//!         .iter()
//!         .map(|&x| l.try_loss(&V::new(x), &V::new(2.0 * x - 1.0)).unwrap())
//!         .sum::<f64>()
//!         / 64.0;
//!     Eval { loss, accuracy: f64::NAN } // a regression: the loss alone
//! };
//! let history = fit(
//!     &mut learner,
//!     xs.len(),
//!     &Fit { epochs: 40, batch: 1, seed: 0, patience: Some(5), keep_best: true, progress: false },
//!     |idx| (V::new(xs[idx[0]]), V::new(2.0 * xs[idx[0]] - 1.0)),
//!     eval,
//!     |_, _| Control::Continue,
//! )
//! .unwrap();
//! assert!(history.best().unwrap().eval.loss < 1e-4);
//! ```

#[cfg(feature = "plot")]
mod plot;
#[cfg(feature = "plot")]
pub use plot::PlotError;

use crate::optim::Optimizer;
use crate::{Flat, Learner, Loss, Para, Real, ShardedLearner, StepError};
use rand::SeedableRng;
use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use std::time::Instant;

/// How to train.
///
/// The default is one epoch of single examples in seed 0's order, without early stopping,
/// keeping the best epoch's parameters (by the held-out evaluation: a run that reached 0.986
/// and ended at 0.975 returns the 0.986 parameters), silent: name what differs
/// (`keep_best: false` keeps the last parameters).
///
/// ```
/// use paralens::train::Fit;
/// let cfg = Fit { epochs: 40, patience: Some(5), ..Fit::default() };
/// assert_eq!((cfg.batch, cfg.seed, cfg.keep_best, cfg.progress), (1, 0, true, false));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fit {
    /// Passes over the training examples.
    pub epochs: usize,
    /// Examples per step (the model's batch shape, 1 or more); the last incomplete batch of
    /// an epoch is dropped.
    pub batch: usize,
    /// Seed of the shuffles.
    pub seed: u64,
    /// Stop after this many epochs in a row without a better evaluation (1 or more).
    pub patience: Option<usize>,
    /// At the end, put back the parameters of the epoch with the best evaluation.
    pub keep_best: bool,
    /// Show a progress bar (with the `progress` feature, and only on a terminal).
    pub progress: bool,
}

impl Default for Fit {
    fn default() -> Self {
        Self {
            epochs: 1,
            batch: 1,
            seed: 0,
            patience: None,
            keep_best: true,
            progress: false,
        }
    }
}

/// A held-out evaluation: better is higher accuracy, then lower loss.
///
/// Either may be left out as NaN, at every epoch (mixing measured and not measured
/// accuracies makes the comparison circular): an evaluation of the loss alone (a regression)
/// compares by the loss, one of the accuracy alone by the accuracy.
///
/// ```
/// use paralens::train::Eval;
///
/// let e = |loss, accuracy| Eval { loss, accuracy };
/// assert!(e(0.5, 0.9).better_than(&e(0.1, 0.8)));
/// assert!(e(0.1, 0.9).better_than(&e(0.5, 0.9)));
/// // A regression: no accuracy, the lower loss is better.
/// assert!(e(0.1, f64::NAN).better_than(&e(0.5, f64::NAN)));
/// assert!(!e(0.5, f64::NAN).better_than(&e(0.1, f64::NAN)));
/// // A loss after a NaN one (a first epoch that diverged) is better.
/// assert!(e(0.5, f64::NAN).better_than(&e(f64::NAN, f64::NAN)));
/// // Accuracy alone: the higher is better, ties are not.
/// assert!(e(f64::NAN, 0.9).better_than(&e(f64::NAN, 0.8)));
/// assert!(!e(f64::NAN, 0.9).better_than(&e(f64::NAN, 0.9)));
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Eval {
    /// The mean loss (NaN when not measured).
    pub loss: f64,
    /// The share classified right, or any score where higher is better (NaN when not
    /// measured).
    pub accuracy: f64,
}

impl Eval {
    /// Whether `self` is better than `other`: a higher accuracy, or at the same accuracy (or
    /// with an accuracy not measured) a lower loss, a loss being better than a NaN one. A
    /// NaN is never better: it was not measured, not a score (compared as a number it made
    /// every later epoch look worse, which stopped [`Fit::patience`] and [`Fit::keep_best`]
    /// at the first).
    #[must_use]
    pub fn better_than(&self, other: &Eval) -> bool {
        let measured = !self.accuracy.is_nan() && !other.accuracy.is_nan();
        if measured && self.accuracy != other.accuracy {
            return self.accuracy > other.accuracy;
        }
        self.loss < other.loss || (other.loss.is_nan() && !self.loss.is_nan())
    }
}

/// What happened in one epoch.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EpochReport {
    /// The epoch, from 1.
    pub epoch: usize,
    /// The mean training loss over its steps (each taken before its step).
    pub train_loss: f64,
    /// The evaluation after it.
    pub eval: Eval,
    /// Whether this is the best evaluation so far.
    pub best: bool,
    /// Its training time in seconds (without the evaluation).
    pub seconds: f64,
}

/// What the caller answers after each epoch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Control {
    /// Go on.
    Continue,
    /// Stop now.
    Stop,
}

/// Every epoch's report, and why the loop ended.
#[derive(Clone, Debug, PartialEq)]
pub struct History {
    /// One report per epoch run.
    pub epochs: Vec<EpochReport>,
    /// The loop stopped on [`Fit::patience`].
    pub stopped_early: bool,
}

impl History {
    /// The report of the best epoch.
    #[must_use]
    pub fn best(&self) -> Option<&EpochReport> {
        self.epochs.iter().rev().find(|e| e.best)
    }
}

/// Trains `learner` on `examples` examples for [`Fit::epochs`] epochs.
///
/// `batch` builds one step's input and label from the indices of its examples (always
/// [`Fit::batch`] of them); `evaluate` scores the learner on held-out data after each epoch;
/// `on_epoch` sees the learner and the epoch's report and may stop the loop or change the
/// learner (its step size, say) before the next epoch.
///
/// # Errors
/// The first step the learner refuses (a label out of range, a non-finite loss); the
/// learner keeps the parameters it had before that step. A refused label is named by its
/// example's index (in `0..examples`) where the loss names its place in the step's batch (a
/// loss of one example, or [`crate::PerColumn`] over a batch of examples). [`StepError::BatchSize`] before
/// anything runs when there are fewer examples than one batch (no epoch could take a step,
/// and its training loss would be a made-up zero). [`StepError::FitSetting`] before anything
/// runs for a [`Fit::batch`] of 0 or a [`Fit::patience`] of `Some(0)`.
pub fn fit<M, X, L, O, T>(
    learner: &mut Learner<M, X, L, O>,
    examples: usize,
    cfg: &Fit,
    mut batch: impl FnMut(&[usize]) -> (X, L::Label),
    evaluate: impl FnMut(&Learner<M, X, L, O>) -> Eval,
    on_epoch: impl FnMut(&mut Learner<M, X, L, O>, &EpochReport) -> Control,
) -> Result<History, StepError>
where
    T: Real,
    X: Clone,
    M: Para<X>,
    M::Out: Clone,
    M::Param: Flat<T> + Clone,
    L: Loss<M::Out, Scalar = T>,
    O: Optimizer<M::Param, Scalar = T>,
{
    let step = |learner: &mut Learner<M, X, L, O>, chosen: &[usize]| {
        let (x, label) = batch(chosen);
        learner
            .try_step_owned(x, &label)
            .map(|loss| loss.to_f64())
            .map_err(|e| match e {
                // The example's own index, not its place in the shuffled batch.
                StepError::Label { index, error } => StepError::Label {
                    index: chosen.get(index).copied().unwrap_or(index),
                    error,
                },
                e => e,
            })
    };
    epochs(
        learner,
        examples,
        cfg,
        step,
        Learner::params_mut,
        evaluate,
        on_epoch,
    )
}

/// [`fit`] with a [`ShardedLearner`]: each step's [`Fit::batch`] examples are split into the
/// learner's shards in order ([`Fit::batch`] / shards each), and `shard` builds one shard's
/// input and label from the indices of its examples, on the shard's thread.
///
/// # Errors
/// As [`fit`]; a refused label is named by its example's index (in `0..examples`), and a
/// [`Fit::batch`] that is not a multiple of the number of shards is a
/// [`StepError::FitSetting`] before anything runs.
///
/// ```
/// use paralens::train::{fit_sharded, Control, Eval, Fit};
/// use paralens::{optim::Adam, Dense, Init, Learner, Mse, ShardedLearner};
/// use paralens::nalgebra::SVector;
/// type V = SVector<f64, 1>;
///
/// // y = 2x - 1 from 64 points; 4 examples a step, one per shard, on 2 threads.
/// let xs: Vec<f64> = (0..64).map(|i| i as f64 / 64.0).collect();
/// let model = Dense::<1, 1, f64>::new();
/// let learner = Learner::new(model, model.init(0), Mse, Adam::new(0.05));
/// let mut sharded = ShardedLearner::with_threads(learner, 4, 2);
/// let history = fit_sharded(
///     &mut sharded,
///     xs.len(),
///     &Fit { epochs: 60, batch: 4, ..Fit::default() },
///     |idx| (V::new(xs[idx[0]]), V::new(2.0 * xs[idx[0]] - 1.0)),
///     |l| Eval {
///         loss: xs.iter().map(|&x| l.try_loss(&V::new(x), &V::new(2.0 * x - 1.0)).unwrap()).sum(),
///         accuracy: f64::NAN,
///     },
///     |_, _| Control::Continue,
/// )
/// .unwrap();
/// assert!(history.best().unwrap().eval.loss < 1e-3);
/// ```
pub fn fit_sharded<M, X, L, O, T>(
    learner: &mut ShardedLearner<M, X, L, O>,
    examples: usize,
    cfg: &Fit,
    shard: impl Fn(&[usize]) -> (X, L::Label) + Sync,
    mut evaluate: impl FnMut(&Learner<M, X, L, O>) -> Eval,
    mut on_epoch: impl FnMut(&mut Learner<M, X, L, O>, &EpochReport) -> Control,
) -> Result<History, StepError>
where
    T: Real + Send,
    X: Clone,
    M: Para<X> + Sync,
    M::Out: Clone,
    M::Param: Flat<T> + Clone + Send + Sync,
    L: Loss<M::Out, Scalar = T> + Sync,
    O: Optimizer<M::Param, Scalar = T>,
{
    let shards = learner.shards();
    if !cfg.batch.is_multiple_of(shards) {
        return Err(StepError::FitSetting {
            name: "batch",
            value: cfg.batch,
            expected: "a multiple of the learner's number of shards",
        });
    }
    let per = cfg.batch / shards;
    let step = |learner: &mut ShardedLearner<M, X, L, O>, chosen: &[usize]| {
        learner
            .try_step_with(|s| shard(&chosen[s * per..(s + 1) * per]))
            .map(|loss| loss.to_f64())
            .map_err(|e| match e {
                StepError::ShardLabel {
                    shard,
                    index,
                    error,
                } => StepError::Label {
                    index: chosen.get(shard * per + index).copied().unwrap_or(index),
                    error,
                },
                e => e,
            })
    };
    epochs(
        learner,
        examples,
        cfg,
        step,
        |l| l.learner_mut().params_mut(),
        |l| evaluate(l.learner()),
        |l, e| on_epoch(l.learner_mut(), e),
    )
}

/// The loop of [`fit`] and [`fit_sharded`]: `step` takes one step on the examples it is
/// given, `params` reaches the parameters (to keep the best epoch's).
fn epochs<Lr, P: Clone>(
    learner: &mut Lr,
    examples: usize,
    cfg: &Fit,
    mut step: impl FnMut(&mut Lr, &[usize]) -> Result<f64, StepError>,
    params: impl Fn(&mut Lr) -> &mut P,
    mut evaluate: impl FnMut(&Lr) -> Eval,
    mut on_epoch: impl FnMut(&mut Lr, &EpochReport) -> Control,
) -> Result<History, StepError> {
    // Both were read as something else: a batch of 0 as 1, a patience of 0 as "stop after
    // the first epoch" (which is always the best so far).
    if cfg.batch == 0 {
        return Err(StepError::FitSetting {
            name: "batch",
            value: 0,
            expected: "1 or more (the examples of one step)",
        });
    }
    if cfg.patience == Some(0) {
        return Err(StepError::FitSetting {
            name: "patience",
            value: 0,
            expected: "1 or more epochs without a better evaluation (`None` never stops early)",
        });
    }
    let size = cfg.batch;
    let steps = examples / size;
    if steps == 0 && cfg.epochs > 0 {
        return Err(StepError::BatchSize {
            expected: size,
            inputs: examples,
            labels: examples,
        });
    }
    let mut order: Vec<usize> = (0..examples).collect();
    let mut rng = StdRng::seed_from_u64(cfg.seed);
    let mut history = History {
        // Not more up front than a run could fill: `--epochs 18446744073709551615` (until
        // stopped) overflowed the capacity before the first step.
        epochs: Vec::with_capacity(cfg.epochs.min(1 << 12)),
        stopped_early: false,
    };
    let mut best: Option<Eval> = None;
    // The best epoch's parameters, when they are to be put back (allocated once).
    let mut kept: Option<Box<P>> = None;
    let mut since_best = 0;
    for epoch in 1..=cfg.epochs {
        order.shuffle(&mut rng);
        let bar = progress::Bar::new(cfg.progress, steps as u64, epoch, cfg.epochs);
        let start = Instant::now();
        let mut total = 0.0;
        for k in 0..steps {
            total += step(learner, &order[k * size..(k + 1) * size])?;
            bar.step();
        }
        let seconds = start.elapsed().as_secs_f64();
        bar.finish();
        let eval = evaluate(learner);
        let improved = best.is_none_or(|b| eval.better_than(&b));
        if improved {
            best = Some(eval);
            since_best = 0;
            if cfg.keep_best {
                let now = params(learner);
                match &mut kept {
                    Some(p) => p.as_mut().clone_from(now),
                    None => kept = Some(Box::new(now.clone())),
                }
            }
        } else {
            since_best += 1;
        }
        let report = EpochReport {
            epoch,
            train_loss: total / steps.max(1) as f64,
            eval,
            best: improved,
            seconds,
        };
        history.epochs.push(report);
        if on_epoch(learner, &report) == Control::Stop {
            break;
        }
        if cfg.patience.is_some_and(|p| since_best >= p) {
            history.stopped_early = true;
            break;
        }
    }
    if let Some(p) = kept {
        params(learner).clone_from(&p);
    }
    Ok(history)
}

/// The progress bar: `indicatif`'s with the `progress` feature, nothing without it.
mod progress {
    /// One epoch's bar (hidden when not asked for or not on a terminal).
    pub struct Bar {
        #[cfg(feature = "progress")]
        bar: Option<indicatif::ProgressBar>,
    }

    impl Bar {
        #[cfg_attr(not(feature = "progress"), allow(unused_variables))]
        pub fn new(show: bool, steps: u64, epoch: usize, epochs: usize) -> Self {
            #[cfg(feature = "progress")]
            {
                use std::io::IsTerminal;
                let bar = (show && std::io::stderr().is_terminal()).then(|| {
                    let bar = indicatif::ProgressBar::new(steps);
                    if let Ok(style) = indicatif::ProgressStyle::with_template(
                        "epoch {msg} [{bar:30}] {pos}/{len} steps, {eta} left",
                    ) {
                        bar.set_style(style.progress_chars("=> "));
                    }
                    bar.set_message(format!("{epoch}/{epochs}"));
                    bar
                });
                Self { bar }
            }
            #[cfg(not(feature = "progress"))]
            Self {}
        }

        #[inline]
        pub fn step(&self) {
            #[cfg(feature = "progress")]
            if let Some(b) = &self.bar {
                b.inc(1);
            }
        }

        pub fn finish(&self) {
            #[cfg(feature = "progress")]
            if let Some(b) = &self.bar {
                b.finish_and_clear();
            }
        }
    }
}
