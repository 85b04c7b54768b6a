//! The sharded netlist learner: one step over several shards of a batch, each run forward and
//! pulled back on a thread of a fixed pool, in an evaluator of its own; the shards' flip
//! requests are then summed in shard order and one decision flips the parameters of all.
//! Evaluation over threads the same way: a run of many words split among the evaluators.

use super::learn::{Requests, count_requests, forward};
use super::{Evaluator, Netlist, NetlistError, NetlistLearner};
use crate::Word;
use crate::learn::{Decision, StepReport};
use alloc::{vec, vec::Vec};
use lens_core::__Pool as Pool;
use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::sync::{Mutex, PoisonError};

/// One shard's buffers, allocated once: its evaluator (with the parameters splatted in its
/// first input wires, as the plain learner keeps them), its outputs, targets and counts.
struct Shard<W: Word> {
    ev: Evaluator<W>,
    outputs: Vec<W>,
    changes: Vec<W>,
    /// The targets of a step by targets (zero, and `valid`, before the targets are chosen).
    wanted: Vec<W>,
    audience: Vec<W>,
    /// Each parameter's flip requests in this shard.
    counts: Vec<u32>,
    /// Each parameter's audience in this shard (local rules only).
    reach: Vec<u32>,
    wrong: u32,
    /// Why this shard's part of the step failed (the targets' error).
    failed: Option<NetlistError>,
}

/// A [`NetlistLearner`] whose steps run the shards of a batch on several threads.
///
/// A step takes `shards` shards of data, one word `W` of examples each: the data words
/// shard after shard (`shards * d` words for a netlist of `d` data inputs), and one valid
/// mask per shard. Shard `s` runs on thread `s % threads` of a pool started once, forward and
/// back in an evaluator of its own, into flip-request counts of its own (all allocated at
/// construction). The caller then adds the counts (and the audiences of a local rule, and the
/// valid lanes) in shard order, and makes one decision for all, as [`NetlistLearner`] does
/// for one batch; a flipped bit is rewritten in every shard's evaluator.
///
/// **Determinism.** A shard's counts do not depend on the thread that computes them, and
/// they are added as integers: the parameters and reports after any number of steps are bit
/// for bit the same whatever the number of threads, for a given number of shards.
///
/// **The same as one wide word.** Every [`crate::UpdateRule`] decides from the summed
/// counts, the summed audiences and the number of valid lanes only (`Xor` from the parity of
/// the sum, `TopK` from the sorted sums, the majorities from sums compared with sums), and
/// a lane's counts do not depend on the other lanes: a step on shards is the step of
/// [`NetlistLearner`] on the word that holds the shards' lanes side by side (`4` shards of
/// `u64` and one `Lanes<4>`, say), provided the targets are the same. They are for
/// [`ShardedNetlistLearner::step`] and [`ShardedNetlistLearner::step_masked`], and for
/// [`ShardedNetlistLearner::step_by`] when the targets of a lane depend on that lane alone.
/// Targets drawn at random (a random share of the output gates taking part, as
/// [`crate::models::GroupVote::softmax_targets`] draws) depend on the order of the draws:
/// drawn per shard, they are a function of the shard count (and the same whatever the
/// threads, since the targets closure gets the shard, not the thread); drawn once for the
/// whole batch by [`ShardedNetlistLearner::step_by_batch`], they can be the plain learner's.
///
/// **Cost.** A step allocates nothing. The sum of the counts (one `u32` per parameter and
/// shard, two for a local rule) and the decision run on the calling thread.
///
/// ```
/// use paralens::circuits::netlist::{NetlistLearner, ShardedNetlistLearner};
/// use paralens::circuits::{NetlistBuilder, UpdateRule};
/// // y = p ^ x: learn p so that y = !x, over 2 shards of 64 examples on 2 threads.
/// let mut b = NetlistBuilder::new(2);
/// let y = b.xor(0, 1);
/// b.output(y);
/// let l = NetlistLearner::<u64>::new(b.build().unwrap(), 1, UpdateRule::Majority).unwrap();
/// let mut sharded = ShardedNetlistLearner::with_threads(l, 2, 2).unwrap();
/// let x = [0x00ff_00ff_u64, 0x0f0f_0f0f];
/// let report = sharded.step(&x, &[!x[0], !x[1]], &[u64::MAX; 2]).unwrap();
/// assert_eq!((report.wrong_bits, sharded.params()), (128, &[true][..]));
/// ```
pub struct ShardedNetlistLearner<W: Word> {
    /// The parameters, rule, frozen prefix and the buffers of the sum (its `counts` and
    /// `scratch`); its evaluator is shard 0's while it is sharded.
    learner: NetlistLearner<W>,
    /// One per shard. A task locks only its own (never contended): the lock is what lets the
    /// pool's threads write into them through a shared borrow.
    slots: Vec<Mutex<Shard<W>>>,
    pool: Pool,
}

/// The shards and threads.
impl<W: Word> core::fmt::Debug for ShardedNetlistLearner<W> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("ShardedNetlistLearner")
            .field("params", &self.learner.n_params)
            .field("rule", &self.learner.rule)
            .field("shards", &self.slots.len())
            .field("threads", &self.pool.threads())
            .finish_non_exhaustive()
    }
}

/// All the shards' outputs and targets of a step, handed to the targets of
/// [`ShardedNetlistLearner::step_by_batch`] between the forward passes and the pullbacks.
/// Shard `s`'s wanted outputs start all zero and its audiences all its valid lanes.
///
/// # Panics
/// Each method panics on a shard `s` not below [`ShardTargets::shards`].
pub struct ShardTargets<'a, W: Word> {
    slots: &'a mut [Mutex<Shard<W>>],
    valid: &'a [W],
}

impl<W: Word> ShardTargets<'_, W> {
    /// The number of shards.
    ///
    /// ```
    /// use paralens::circuits::netlist::{NetlistLearner, ShardedNetlistLearner};
    /// use paralens::circuits::{NetlistBuilder, UpdateRule};
    /// let mut b = NetlistBuilder::new(2);
    /// let y = b.xor(0, 1);
    /// b.output(y);
    /// let l = NetlistLearner::<u64>::new(b.build().unwrap(), 1, UpdateRule::Majority).unwrap();
    /// let mut sharded = ShardedNetlistLearner::with_threads(l, 3, 1).unwrap();
    /// sharded
    ///     .step_by_batch(&[0; 3], &[u64::MAX; 3], |t| {
    ///         assert_eq!(t.shards(), 3);
    ///         Ok(())
    ///     })
    ///     .unwrap();
    /// ```
    #[must_use]
    pub fn shards(&self) -> usize {
        self.slots.len()
    }

    /// Shard `s`'s valid lanes.
    ///
    /// ```
    /// use paralens::circuits::netlist::{NetlistLearner, ShardedNetlistLearner};
    /// use paralens::circuits::{NetlistBuilder, UpdateRule};
    /// let mut b = NetlistBuilder::new(2);
    /// let y = b.xor(0, 1);
    /// b.output(y);
    /// let l = NetlistLearner::<u64>::new(b.build().unwrap(), 1, UpdateRule::Majority).unwrap();
    /// let mut sharded = ShardedNetlistLearner::with_threads(l, 2, 2).unwrap();
    /// sharded
    ///     .step_by_batch(&[0; 2], &[u64::MAX, 0xff], |t| {
    ///         assert_eq!((t.valid(0), t.valid(1)), (u64::MAX, 0xff));
    ///         Ok(())
    ///     })
    ///     .unwrap();
    /// ```
    #[must_use]
    pub fn valid(&self, s: usize) -> W {
        self.valid[s]
    }

    /// Shard `s`'s outputs (one word per output of the netlist).
    ///
    /// ```
    /// use paralens::circuits::netlist::{NetlistLearner, ShardedNetlistLearner};
    /// use paralens::circuits::{NetlistBuilder, UpdateRule};
    /// // y = p ^ x with p = 0: the outputs are the data.
    /// let mut b = NetlistBuilder::new(2);
    /// let y = b.xor(0, 1);
    /// b.output(y);
    /// let l = NetlistLearner::<u64>::new(b.build().unwrap(), 1, UpdateRule::Majority).unwrap();
    /// let mut sharded = ShardedNetlistLearner::with_threads(l, 2, 2).unwrap();
    /// sharded
    ///     .step_by_batch(&[5, 7], &[u64::MAX; 2], |t| {
    ///         assert_eq!(t.outputs(0), [5]);
    ///         assert_eq!(t.outputs(1), [7]);
    ///         Ok(())
    ///     })
    ///     .unwrap();
    /// ```
    #[must_use]
    pub fn outputs(&mut self, s: usize) -> &[W] {
        self.targets_mut(s).0
    }

    /// Shard `s`'s outputs, and its wanted outputs and audiences to fill (one word per
    /// output each).
    ///
    /// ```
    /// use paralens::circuits::netlist::{NetlistLearner, ShardedNetlistLearner};
    /// use paralens::circuits::{NetlistBuilder, UpdateRule};
    /// // y = p ^ x: every output wanted on, in the first shard only.
    /// let mut b = NetlistBuilder::new(2);
    /// let y = b.xor(0, 1);
    /// b.output(y);
    /// let l = NetlistLearner::<u64>::new(b.build().unwrap(), 1, UpdateRule::Majority).unwrap();
    /// let mut sharded = ShardedNetlistLearner::with_threads(l, 2, 2).unwrap();
    /// let report = sharded
    ///     .step_by_batch(&[0, 0], &[u64::MAX; 2], |t| {
    ///         let (_outputs, wanted, _audience) = t.targets_mut(0);
    ///         wanted[0] = u64::MAX;
    ///         let (_, _, audience) = t.targets_mut(1);
    ///         audience[0] = 0;
    ///         Ok(())
    ///     })
    ///     .unwrap();
    /// // 64 requests out of 128 valid lanes: no majority.
    /// assert_eq!((report.wrong_bits, sharded.params()), (64, &[false][..]));
    /// ```
    pub fn targets_mut(&mut self, s: usize) -> (&[W], &mut [W], &mut [W]) {
        let slot = self.slots[s]
            .get_mut()
            .unwrap_or_else(PoisonError::into_inner);
        (&slot.outputs, &mut slot.wanted, &mut slot.audience)
    }
}

impl<W: Word + Send + Sync> ShardedNetlistLearner<W> {
    /// `learner`'s steps split into `shards` shards, on as many threads as the machine has
    /// cores (`std::thread::available_parallelism`, at most one per shard). The number of
    /// threads never changes the result, only its speed.
    ///
    /// ```
    /// use paralens::circuits::netlist::{NetlistLearner, ShardedNetlistLearner};
    /// use paralens::circuits::{NetlistBuilder, UpdateRule};
    /// let mut b = NetlistBuilder::new(2);
    /// let y = b.xor(0, 1);
    /// b.output(y);
    /// let l = NetlistLearner::<u64>::new(b.build().unwrap(), 1, UpdateRule::Majority).unwrap();
    /// let sharded = ShardedNetlistLearner::new(l, 4).unwrap();
    /// assert_eq!(sharded.shards(), 4);
    /// assert!((1..=4).contains(&sharded.threads()));
    /// ```
    ///
    /// # Errors
    /// `shards` is 0.
    ///
    /// # Panics
    /// If the operating system refuses to start a thread.
    pub fn new(learner: NetlistLearner<W>, shards: usize) -> Result<Self, NetlistError> {
        let cores = std::thread::available_parallelism().map_or(1, usize::from);
        Self::with_threads(learner, shards, cores)
    }

    /// `learner`'s steps split into `shards` shards on `threads` threads (the caller's
    /// included; at most one per shard, and at least one). Each shard gets an evaluator
    /// holding the learner's parameters (shard 0 takes the learner's own).
    ///
    /// ```
    /// use paralens::circuits::netlist::{NetlistLearner, ShardedNetlistLearner};
    /// use paralens::circuits::{NetlistBuilder, UpdateRule};
    /// let mut b = NetlistBuilder::new(2);
    /// let y = b.xor(0, 1);
    /// b.output(y);
    /// let l = NetlistLearner::<u64>::new(b.build().unwrap(), 1, UpdateRule::Majority).unwrap();
    /// let sharded = ShardedNetlistLearner::with_threads(l, 4, 8).unwrap();
    /// assert_eq!((sharded.shards(), sharded.threads()), (4, 4));
    /// ```
    ///
    /// # Errors
    /// `shards` is 0.
    ///
    /// # Panics
    /// If the operating system refuses to start a thread.
    pub fn with_threads(
        mut learner: NetlistLearner<W>,
        shards: usize,
        threads: usize,
    ) -> Result<Self, NetlistError> {
        if shards == 0 {
            return Err(NetlistError::Width {
                what: "shards (at least one)",
                expected: 1,
                got: 0,
            });
        }
        let (outputs, params) = (learner.net.outputs(), learner.n_params);
        let reach = if learner.rule.is_local() { params } else { 0 };
        let first = core::mem::replace(&mut learner.ev, Evaluator::empty());
        let slots = (0..shards)
            .map(|s| {
                Mutex::new(Shard {
                    // Clones of shard 0's evaluator hold the same parameter words.
                    ev: if s == 0 {
                        Evaluator::empty()
                    } else {
                        first.clone()
                    },
                    outputs: vec![W::ZERO; outputs],
                    changes: vec![W::ZERO; outputs],
                    wanted: vec![W::ZERO; outputs],
                    audience: vec![W::ZERO; outputs],
                    counts: vec![0; params],
                    reach: vec![0; reach],
                    wrong: 0,
                    failed: None,
                })
            })
            .collect::<Vec<_>>();
        let mut s = Self {
            learner,
            slots,
            pool: Pool::new(threads.clamp(1, shards)),
        };
        s.slot(0).ev = first;
        Ok(s)
    }

    fn slot(&mut self, s: usize) -> &mut Shard<W> {
        self.slots[s]
            .get_mut()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// The number of shards of a step.
    ///
    /// ```
    /// use paralens::circuits::netlist::{NetlistLearner, ShardedNetlistLearner};
    /// use paralens::circuits::{NetlistBuilder, UpdateRule};
    /// let mut b = NetlistBuilder::new(2);
    /// let y = b.xor(0, 1);
    /// b.output(y);
    /// let l = NetlistLearner::<u64>::new(b.build().unwrap(), 1, UpdateRule::Xor).unwrap();
    /// assert_eq!(ShardedNetlistLearner::with_threads(l, 3, 2).unwrap().shards(), 3);
    /// ```
    #[must_use]
    pub fn shards(&self) -> usize {
        self.slots.len()
    }

    /// The number of threads that run them, the caller's included.
    ///
    /// ```
    /// use paralens::circuits::netlist::{NetlistLearner, ShardedNetlistLearner};
    /// use paralens::circuits::{NetlistBuilder, UpdateRule};
    /// let mut b = NetlistBuilder::new(2);
    /// let y = b.xor(0, 1);
    /// b.output(y);
    /// let l = NetlistLearner::<u64>::new(b.build().unwrap(), 1, UpdateRule::Xor).unwrap();
    /// assert_eq!(ShardedNetlistLearner::with_threads(l, 3, 2).unwrap().threads(), 2);
    /// ```
    #[must_use]
    pub fn threads(&self) -> usize {
        self.pool.threads()
    }

    /// The parameter bits.
    ///
    /// ```
    /// use paralens::circuits::netlist::{NetlistLearner, ShardedNetlistLearner};
    /// use paralens::circuits::{NetlistBuilder, UpdateRule};
    /// let mut b = NetlistBuilder::new(2);
    /// let y = b.xor(0, 1);
    /// b.output(y);
    /// let l = NetlistLearner::<u64>::new(b.build().unwrap(), 1, UpdateRule::Xor).unwrap();
    /// assert_eq!(ShardedNetlistLearner::with_threads(l, 2, 2).unwrap().params(), [false]);
    /// ```
    #[must_use]
    pub fn params(&self) -> &[bool] {
        &self.learner.params
    }

    /// Sets the parameter bits (in every shard's evaluator).
    ///
    /// ```
    /// use paralens::circuits::netlist::{NetlistLearner, ShardedNetlistLearner};
    /// use paralens::circuits::{NetlistBuilder, UpdateRule};
    /// let mut b = NetlistBuilder::new(2);
    /// let y = b.xor(0, 1);
    /// b.output(y);
    /// let l = NetlistLearner::<u64>::new(b.build().unwrap(), 1, UpdateRule::Xor).unwrap();
    /// let mut sharded = ShardedNetlistLearner::with_threads(l, 2, 2).unwrap();
    /// sharded.set_params(&[true]).unwrap();
    /// let mut out = [0u64; 3];
    /// sharded.predict(&[1, 2, 3], &mut out).unwrap();
    /// assert_eq!(out, [!1, !2, !3]);
    /// assert!(sharded.set_params(&[true, false]).is_err());
    /// ```
    ///
    /// # Errors
    /// A slice of the wrong length.
    pub fn set_params(&mut self, p: &[bool]) -> Result<(), NetlistError> {
        let n = self.learner.n_params;
        NetlistError::check_width("parameters", n, p.len())?;
        self.learner.params.copy_from_slice(p);
        for slot in &mut self.slots {
            let slot = slot.get_mut().unwrap_or_else(PoisonError::into_inner);
            for (w, &b) in slot.ev.inputs_mut(n).iter_mut().zip(p) {
                *w = W::splat(b);
            }
        }
        Ok(())
    }

    /// Keeps the first `n` parameters fixed (see [`NetlistLearner::freeze_first`]).
    ///
    /// ```
    /// use paralens::circuits::netlist::{NetlistLearner, ShardedNetlistLearner};
    /// use paralens::circuits::{NetlistBuilder, UpdateRule};
    /// let mut b = NetlistBuilder::new(2);
    /// let y = b.xor(0, 1);
    /// b.output(y);
    /// let l = NetlistLearner::<u64>::new(b.build().unwrap(), 1, UpdateRule::Majority).unwrap();
    /// let mut sharded = ShardedNetlistLearner::with_threads(l, 2, 2).unwrap();
    /// sharded.freeze_first(1);
    /// sharded.step(&[0, 0], &[u64::MAX; 2], &[u64::MAX; 2]).unwrap();
    /// assert_eq!(sharded.params(), [false]);
    /// ```
    pub fn freeze_first(&mut self, n: usize) {
        self.learner.freeze_first(n);
    }

    /// The netlist.
    ///
    /// ```
    /// use paralens::circuits::netlist::{NetlistLearner, ShardedNetlistLearner};
    /// use paralens::circuits::{NetlistBuilder, UpdateRule};
    /// let mut b = NetlistBuilder::new(2);
    /// let y = b.xor(0, 1);
    /// b.output(y);
    /// let l = NetlistLearner::<u64>::new(b.build().unwrap(), 1, UpdateRule::Xor).unwrap();
    /// let sharded = ShardedNetlistLearner::with_threads(l, 2, 2).unwrap();
    /// assert_eq!(sharded.netlist().inputs(), 2);
    /// ```
    #[must_use]
    pub fn netlist(&self) -> &Netlist {
        &self.learner.net
    }

    /// Gives back the learner, with the parameters learned (the threads stop).
    ///
    /// ```
    /// use paralens::circuits::netlist::{NetlistLearner, ShardedNetlistLearner};
    /// use paralens::circuits::{NetlistBuilder, UpdateRule};
    /// let mut b = NetlistBuilder::new(2);
    /// let y = b.xor(0, 1);
    /// b.output(y);
    /// let l = NetlistLearner::<u64>::new(b.build().unwrap(), 1, UpdateRule::Majority).unwrap();
    /// let mut sharded = ShardedNetlistLearner::with_threads(l, 2, 2).unwrap();
    /// sharded.step(&[1, 2], &[!1, !2], &[u64::MAX; 2]).unwrap();
    /// let mut l = sharded.into_learner();
    /// let mut out = [0u64];
    /// l.predict(&[5], &mut out).unwrap();
    /// assert_eq!((l.params(), out), (&[true][..], [!5]));
    /// ```
    #[must_use]
    pub fn into_learner(mut self) -> NetlistLearner<W> {
        self.learner.ev = core::mem::replace(&mut self.slot(0).ev, Evaluator::empty());
        self.learner
    }

    /// The outputs of many words of examples, split among the threads (each with a
    /// shard's evaluator; the words in consecutive runs, one run per shard): `data` holds
    /// the data words of word after word (`words * d` for a netlist of `d` data inputs),
    /// `out` receives the outputs in the same order (`words * o`). The outputs are those of
    /// [`NetlistLearner::predict`] word by word, whatever the threads. Allocates one small
    /// vector (a handle per run).
    ///
    /// ```
    /// use paralens::circuits::netlist::{NetlistLearner, ShardedNetlistLearner};
    /// use paralens::circuits::{NetlistBuilder, UpdateRule};
    /// // y = p ^ x with p = 0, on 5 words over 2 threads.
    /// let mut b = NetlistBuilder::new(2);
    /// let y = b.xor(0, 1);
    /// b.output(y);
    /// let l = NetlistLearner::<u64>::new(b.build().unwrap(), 1, UpdateRule::Xor).unwrap();
    /// let mut sharded = ShardedNetlistLearner::with_threads(l, 2, 2).unwrap();
    /// let mut out = [0u64; 5];
    /// sharded.predict(&[1, 2, 3, 4, 5], &mut out).unwrap();
    /// assert_eq!(out, [1, 2, 3, 4, 5]);
    /// ```
    ///
    /// # Errors
    /// `data` not a whole number of words, or `out` not as many words of outputs.
    pub fn predict(&mut self, data: &[W], out: &mut [W]) -> Result<(), NetlistError> {
        let net = &self.learner.net;
        let n_params = self.learner.n_params;
        let (d, o) = (net.inputs() - n_params, net.outputs());
        let words = if d > 0 {
            if !data.len().is_multiple_of(d) {
                return Err(NetlistError::Width {
                    what: "data words (a whole number of words of data inputs)",
                    expected: data.len() / d * d,
                    got: data.len(),
                });
            }
            data.len() / d
        } else {
            out.len() / o.max(1)
        };
        NetlistError::check_width("outputs (words of outputs)", words * o, out.len())?;
        if words == 0 || o == 0 {
            return Ok(());
        }
        let per = words.div_ceil(self.slots.len());
        let runs: Vec<Mutex<&mut [W]>> = out.chunks_mut(per * o).map(Mutex::new).collect();
        let slots = &self.slots;
        let task = |s: usize| {
            let mut slot = slots[s].lock().unwrap_or_else(PoisonError::into_inner);
            let mut run = runs[s].lock().unwrap_or_else(PoisonError::into_inner);
            for (k, y) in run.chunks_mut(o).enumerate() {
                let w = s * per + k;
                if let Err(e) = forward(net, &mut slot.ev, n_params, &data[w * d..(w + 1) * d], y) {
                    slot.failed.get_or_insert(e);
                }
            }
        };
        self.pool.run(self.pool.threads(), runs.len(), &task);
        drop(runs);
        first_failure(&mut self.slots)
    }

    /// Checks a step's data and valid masks: `shards * d` data words, one mask per shard.
    fn check_step(&self, data: &[W], valid: &[W]) -> Result<(), NetlistError> {
        let d = self.learner.net.inputs() - self.learner.n_params;
        NetlistError::check_width("valid masks (one per shard)", self.slots.len(), valid.len())?;
        NetlistError::check_width(
            "data inputs (the shards' data words, shard after shard)",
            self.slots.len() * d,
            data.len(),
        )
    }

    /// One step on the examples in the valid lanes of each shard: shard `s`'s data words are
    /// `data[s * d..(s + 1) * d]` (for `d` data inputs), its wanted outputs
    /// `labels[s * o..(s + 1) * o]` (for `o` outputs), its valid lanes `valid[s]`.
    ///
    /// ```
    /// use paralens::circuits::netlist::{NetlistLearner, ShardedNetlistLearner};
    /// use paralens::circuits::{NetlistBuilder, UpdateRule};
    /// // y = p ^ x: learn p so that y = !x.
    /// let mut b = NetlistBuilder::new(2);
    /// let y = b.xor(0, 1);
    /// b.output(y);
    /// let l = NetlistLearner::<u64>::new(b.build().unwrap(), 1, UpdateRule::Majority).unwrap();
    /// let mut sharded = ShardedNetlistLearner::with_threads(l, 2, 2).unwrap();
    /// sharded.step(&[3, 4], &[!3, !4], &[u64::MAX; 2]).unwrap();
    /// assert_eq!(sharded.params(), [true]);
    /// // Three shards' worth of data for two shards: refused.
    /// assert!(sharded.step(&[3, 4, 5], &[!3, !4], &[u64::MAX; 2]).is_err());
    /// ```
    ///
    /// # Errors
    /// Slices of the wrong length (nothing changes then).
    pub fn step(
        &mut self,
        data: &[W],
        labels: &[W],
        valid: &[W],
    ) -> Result<StepReport, NetlistError> {
        self.step_masked(data, labels, valid, None)
    }

    /// One step where output `j` of shard `s` takes part only in the lanes of
    /// `masks[s * o + j]` (within the shard's valid lanes): see
    /// [`NetlistLearner::step_masked`] and [`ShardedNetlistLearner::step`].
    ///
    /// ```
    /// use paralens::circuits::netlist::{NetlistLearner, ShardedNetlistLearner};
    /// use paralens::circuits::{NetlistBuilder, UpdateRule};
    /// let mut b = NetlistBuilder::new(2);
    /// let y = b.xor(0, 1);
    /// b.output(y);
    /// let rule = UpdateRule::LocalMajority;
    /// let l = NetlistLearner::<u64>::new(b.build().unwrap(), 1, rule).unwrap();
    /// let mut sharded = ShardedNetlistLearner::with_threads(l, 2, 2).unwrap();
    /// // Only shard 1's output takes part: its labels ask for p = 1.
    /// let report = sharded
    ///     .step_masked(&[0, 0], &[0, u64::MAX], &[u64::MAX; 2], Some(&[0, u64::MAX]))
    ///     .unwrap();
    /// assert_eq!((report.wrong_bits, sharded.params()), (64, &[true][..]));
    /// ```
    ///
    /// # Errors
    /// Slices of the wrong length (nothing changes then).
    pub fn step_masked(
        &mut self,
        data: &[W],
        labels: &[W],
        valid: &[W],
        masks: Option<&[W]>,
    ) -> Result<StepReport, NetlistError> {
        self.check_step(data, valid)?;
        let o = self.learner.net.outputs();
        NetlistError::check_width(
            "labels (the shards' outputs)",
            self.slots.len() * o,
            labels.len(),
        )?;
        if let Some(m) = masks {
            NetlistError::check_width(
                "output masks (the shards' outputs)",
                self.slots.len() * o,
                m.len(),
            )?;
        }
        let d = self.learner.net.inputs() - self.learner.n_params;
        let (net, n_params, local) = (
            &self.learner.net,
            self.learner.n_params,
            self.learner.rule.is_local(),
        );
        round(&self.pool, &mut self.slots, &|s, slot: &mut Shard<W>| {
            let Shard {
                ev,
                outputs,
                changes,
                counts,
                reach,
                ..
            } = slot;
            forward(net, ev, n_params, &data[s * d..(s + 1) * d], outputs)?;
            count_requests(
                net,
                ev,
                Requests {
                    outputs,
                    labels: &labels[s * o..(s + 1) * o],
                    valid: valid[s],
                    masks: masks.map(|m| &m[s * o..(s + 1) * o]),
                },
                changes,
                counts,
                local.then_some(&mut reach[..]),
            )
        })?;
        Ok(self.decide(valid))
    }

    /// One step whose targets each shard chooses from its own outputs, on its own thread:
    /// `targets(s, outputs, wanted, audience)` for shard `s` (with `wanted` all zero and
    /// `audience` all `valid[s]`), then the step learns as
    /// [`ShardedNetlistLearner::step_masked`] from `wanted` with `audience` as the masks (see
    /// [`NetlistLearner::step_by`]). Targets that draw at random should draw from a stream
    /// of their shard's (seeded by `s` and the step, say): the result then does not depend
    /// on the threads.
    ///
    /// ```
    /// use paralens::circuits::netlist::{NetlistLearner, ShardedNetlistLearner};
    /// use paralens::circuits::{NetlistBuilder, UpdateRule};
    /// // y = p ^ x, and the target is to turn every output on.
    /// let mut b = NetlistBuilder::new(2);
    /// let y = b.xor(0, 1);
    /// b.output(y);
    /// let l = NetlistLearner::<u64>::new(b.build().unwrap(), 1, UpdateRule::Majority).unwrap();
    /// let mut sharded = ShardedNetlistLearner::with_threads(l, 2, 2).unwrap();
    /// let report = sharded
    ///     .step_by(&[0, 0], &[u64::MAX; 2], |_s, outputs, wanted, _audience| {
    ///         assert_eq!(outputs, [0]);
    ///         wanted[0] = u64::MAX;
    ///         Ok(())
    ///     })
    ///     .unwrap();
    /// assert_eq!((report.wrong_bits, sharded.params()), (128, &[true][..]));
    /// ```
    ///
    /// # Errors
    /// Slices of the wrong length, or the error a shard's `targets` returns (the first in
    /// shard order); nothing changes then.
    pub fn step_by<F>(
        &mut self,
        data: &[W],
        valid: &[W],
        targets: F,
    ) -> Result<StepReport, NetlistError>
    where
        F: Fn(usize, &[W], &mut [W], &mut [W]) -> Result<(), NetlistError> + Sync,
    {
        self.check_step(data, valid)?;
        let d = self.learner.net.inputs() - self.learner.n_params;
        let (net, n_params, local) = (
            &self.learner.net,
            self.learner.n_params,
            self.learner.rule.is_local(),
        );
        round(&self.pool, &mut self.slots, &|s, slot: &mut Shard<W>| {
            let Shard {
                ev,
                outputs,
                changes,
                wanted,
                audience,
                counts,
                reach,
                ..
            } = slot;
            forward(net, ev, n_params, &data[s * d..(s + 1) * d], outputs)?;
            wanted.fill(W::ZERO);
            audience.fill(valid[s]);
            targets(s, outputs, wanted, audience)?;
            count_requests(
                net,
                ev,
                Requests {
                    outputs,
                    labels: wanted,
                    valid: valid[s],
                    masks: Some(audience),
                },
                changes,
                counts,
                local.then_some(&mut reach[..]),
            )
        })?;
        Ok(self.decide(valid))
    }

    /// One step whose targets are chosen for the whole batch at once, on the calling thread:
    /// the shards run forward on their threads, then `targets` sees all their outputs and
    /// fills all their targets ([`ShardTargets`]), then the shards are pulled back on their
    /// threads and the step learns as [`ShardedNetlistLearner::step_masked`] does. Targets
    /// drawn at random from one stream, in the order the plain learner draws them for the
    /// word that holds the shards side by side, give that learner's step exactly.
    ///
    /// ```
    /// use paralens::circuits::netlist::{NetlistLearner, ShardedNetlistLearner};
    /// use paralens::circuits::{NetlistBuilder, UpdateRule};
    /// // y = p ^ x, and the target is to turn every output on, in every shard.
    /// let mut b = NetlistBuilder::new(2);
    /// let y = b.xor(0, 1);
    /// b.output(y);
    /// let l = NetlistLearner::<u64>::new(b.build().unwrap(), 1, UpdateRule::Majority).unwrap();
    /// let mut sharded = ShardedNetlistLearner::with_threads(l, 2, 2).unwrap();
    /// let report = sharded
    ///     .step_by_batch(&[0, 0], &[u64::MAX; 2], |t| {
    ///         for s in 0..t.shards() {
    ///             t.targets_mut(s).1[0] = u64::MAX;
    ///         }
    ///         Ok(())
    ///     })
    ///     .unwrap();
    /// assert_eq!((report.wrong_bits, sharded.params()), (128, &[true][..]));
    /// ```
    ///
    /// # Errors
    /// Slices of the wrong length, or the error `targets` returns; nothing changes then.
    pub fn step_by_batch(
        &mut self,
        data: &[W],
        valid: &[W],
        targets: impl FnOnce(&mut ShardTargets<'_, W>) -> Result<(), NetlistError>,
    ) -> Result<StepReport, NetlistError> {
        self.check_step(data, valid)?;
        let d = self.learner.net.inputs() - self.learner.n_params;
        let (net, n_params, local) = (
            &self.learner.net,
            self.learner.n_params,
            self.learner.rule.is_local(),
        );
        round(&self.pool, &mut self.slots, &|s, slot: &mut Shard<W>| {
            forward(
                net,
                &mut slot.ev,
                n_params,
                &data[s * d..(s + 1) * d],
                &mut slot.outputs,
            )?;
            slot.wanted.fill(W::ZERO);
            slot.audience.fill(valid[s]);
            Ok(0)
        })?;
        targets(&mut ShardTargets {
            slots: &mut self.slots,
            valid,
        })?;
        let (net, local) = (&self.learner.net, local);
        round(&self.pool, &mut self.slots, &|s, slot: &mut Shard<W>| {
            let Shard {
                ev,
                outputs,
                changes,
                wanted,
                audience,
                counts,
                reach,
                ..
            } = slot;
            count_requests(
                net,
                ev,
                Requests {
                    outputs,
                    labels: wanted,
                    valid: valid[s],
                    masks: Some(audience),
                },
                changes,
                counts,
                local.then_some(&mut reach[..]),
            )
        })?;
        Ok(self.decide(valid))
    }

    /// Adds the shards' counts (and audiences) in shard order and flips the parameters the
    /// rule decides on, in the learner and in every shard's evaluator.
    fn decide(&mut self, valid: &[W]) -> StepReport {
        let l = &mut self.learner;
        let local = l.rule.is_local();
        let (first, rest) = self.slots.split_at_mut(1);
        let first = first[0].get_mut().unwrap_or_else(PoisonError::into_inner);
        l.counts.copy_from_slice(&first.counts);
        if local {
            l.scratch.copy_from_slice(&first.reach);
        }
        let mut wrong = first.wrong;
        for slot in rest {
            let slot = slot.get_mut().unwrap_or_else(PoisonError::into_inner);
            wrong += slot.wrong;
            for (a, &c) in l.counts.iter_mut().zip(&slot.counts) {
                *a += c;
            }
            if local {
                for (a, &c) in l.scratch.iter_mut().zip(&slot.reach) {
                    *a += c;
                }
            }
        }
        let n_valid = valid.iter().map(Word::popcount).sum();
        let mut decision = Decision::new(l.rule, &l.counts, &mut l.scratch, n_valid);
        let mut flipped = 0;
        let (params, slots, n) = (&mut l.params, &mut self.slots, l.n_params);
        decision.each_flip(&l.counts, &l.scratch, l.frozen, |j| {
            params[j] = !params[j];
            let word = W::splat(params[j]);
            for slot in slots.iter_mut() {
                let slot = slot.get_mut().unwrap_or_else(PoisonError::into_inner);
                slot.ev.inputs_mut(n)[j] = word;
            }
            flipped += 1;
        });
        StepReport {
            wrong_bits: wrong,
            flipped,
        }
    }
}

/// Runs `task(s, shard)` for every shard on the pool, keeping each shard's wrong bits
/// (or its error); returns the first error in shard order. A panic in a task clears
/// every evaluator's changes (a pullback may have stopped half way) and is raised again.
fn round<W, F>(pool: &Pool, slots: &mut [Mutex<Shard<W>>], task: &F) -> Result<(), NetlistError>
where
    W: Word + Send + Sync,
    F: Fn(usize, &mut Shard<W>) -> Result<u32, NetlistError> + Sync,
{
    let all = &*slots;
    let run = |s: usize| {
        let mut slot = all[s].lock().unwrap_or_else(PoisonError::into_inner);
        match task(s, &mut slot) {
            Ok(wrong) => slot.wrong = wrong,
            Err(e) => slot.failed = Some(e),
        }
    };
    let (threads, shards) = (pool.threads(), all.len());
    if let Err(panic) = catch_unwind(AssertUnwindSafe(|| pool.run(threads, shards, &run))) {
        for slot in slots.iter_mut() {
            let slot = slot.get_mut().unwrap_or_else(PoisonError::into_inner);
            slot.ev.clear_changes();
            slot.failed = None;
        }
        resume_unwind(panic);
    }
    first_failure(slots)
}

/// The first shard's failure, in shard order (clearing them all).
fn first_failure<W: Word>(slots: &mut [Mutex<Shard<W>>]) -> Result<(), NetlistError> {
    let mut first = None;
    for slot in slots.iter_mut() {
        let slot = slot.get_mut().unwrap_or_else(PoisonError::into_inner);
        if let Some(e) = slot.failed.take() {
            first.get_or_insert(e);
        }
    }
    first.map_or(Ok(()), Err)
}
