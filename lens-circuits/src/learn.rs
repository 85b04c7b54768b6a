//! Learning Boolean models by reverse derivative ascent.
//!
//! The learning lens is the smooth one with Z2 pieces: the loss is `e(y, y') = y ^ y'` (the
//! change that would make each output right), the learning rate is the identity (in Z2
//! ascent and descent coincide), and the update puts the parameter change on the parameters
//! by XOR. One step on `(x, y)`: `p <- p ^ R_P[f](p, x, f(p, x) ^ y)`.
//!
//! Bit-sliced, one step runs a whole batch (one example per lane) and the reverse
//! derivative gives, per parameter bit, one flip request per example. [`UpdateRule`] says
//! how to combine them.

use crate::Word;
use alloc::{boxed::Box, vec, vec::Vec};
use lens_core::{Flat, Para};

/// How the per-example flip requests of a batch decide a parameter bit.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum UpdateRule {
    /// The exact rule of reverse derivative ascent: the XOR (parity) of the requests. With
    /// one example per step this is `p ^= R_P[f](...)`; over a batch a bit that an even
    /// number of examples want flipped stays put.
    Xor,
    /// Flip where more than half of the batch's examples ask for it.
    Majority,
    /// Flip where at least this many examples ask for it.
    Threshold(u32),
    /// Flip only the `k` bits with the most requests (ties: the first), if they have any.
    TopK(usize),
    /// Flip where more than half of the examples the bit matters to ask for it: a bit's
    /// audience is the examples whose output it can change (its reverse derivative for an
    /// all-ones output change). For a lookup table this is the per-entry majority.
    LocalMajority,
    /// [`UpdateRule::LocalMajority`] only where it is clear: flip where the requests `c`
    /// outnumber the rest of the bit's audience `a` by more than `z` standard deviations of
    /// a vote of fair coins, `2c - a > z * sqrt(a)`. A step size for noisy batches: the
    /// larger `z`, the fewer bits flip, and a bit with a small audience needs a near
    /// unanimous one. `z = 0` is the local majority.
    LocalSignificant(f32),
}

impl UpdateRule {
    /// Whether the rule needs each bit's audience (the local majorities).
    #[must_use]
    pub fn is_local(self) -> bool {
        matches!(self, Self::LocalMajority | Self::LocalSignificant(_))
    }
}

/// What one step saw.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StepReport {
    /// Output bits that were wrong before the step (over the batch's valid lanes).
    pub wrong_bits: u32,
    /// Parameter bits flipped.
    pub flipped: usize,
}

/// A learner for a Boolean model `M: Para<X>` whose parameters, inputs and outputs are
/// words `W` (viewed through [`Flat<u64>`]); parameter words have every lane equal.
pub struct BoolLearner<M, X, W>
where
    M: Para<X>,
{
    model: M,
    params: M::Param,
    rule: UpdateRule,
    /// Flip requests per parameter bit (allocated once).
    counts: Vec<u32>,
    /// Scratch for choosing the top k, or the audiences of the local majority (allocated
    /// once).
    scratch: Vec<u32>,
    /// The parameter-change buffer the pullbacks XOR into (allocated once, boxed: a large
    /// netlist's parameters do not belong on the stack).
    change: Box<M::Param>,
    _x: core::marker::PhantomData<fn(X, W)>,
}

impl<M, X, W> BoolLearner<M, X, W>
where
    W: Word,
    X: Clone,
    M: Para<X>,
    M::Param: Flat<u64>,
    M::Out: Flat<u64>,
{
    /// A learner starting from `params` (all zero for the anchor protocol).
    pub fn new(model: M, params: M::Param, rule: UpdateRule) -> Self {
        let n = params.flat_len() / Self::words_per_value();
        let change = Box::new(params.clone());
        Self {
            model,
            params,
            rule,
            counts: vec![0; n],
            scratch: vec![0; n],
            change,
            _x: core::marker::PhantomData,
        }
    }

    fn words_per_value() -> usize {
        W::LANES / 64
    }

    /// The parameters.
    pub fn params(&self) -> &M::Param {
        &self.params
    }

    /// The model's outputs at the current parameters.
    pub fn predict(&self, x: &X) -> M::Out {
        self.model.forward(&self.params, x.clone())
    }

    /// One step on the examples in the lanes where `valid` is set (a batch of up to
    /// `W::LANES` examples, or one example with `valid` = lane 0). Allocates nothing.
    pub fn step(&mut self, x: &X, y: &M::Out, valid: W) -> StepReport {
        let wpv = Self::words_per_value();
        let mask = valid.words();
        let (out, pullback) = self.model.vjp(&self.params, x.clone());
        // The loss lens: e = f(p, x) ^ y on the valid lanes; the learning rate is the
        // identity, so e is the output change pulled back.
        let mut e = out;
        let mut wrong = 0;
        e.zip2_slices(y, &mut |a, b| {
            for (i, (ai, bi)) in a.iter_mut().zip(b).enumerate() {
                *ai = (*ai ^ bi) & mask[i % wpv];
                wrong += ai.count_ones();
            }
        });
        zero_words(&mut self.change);
        pullback(e, &mut self.change);
        let dp = &*self.change;
        // Count the flip requests of each parameter bit (one value = wpv words).
        let mut i = 0;
        let counts = &mut self.counts;
        dp.visit_slices(&mut |s| {
            for chunk in s.chunks(wpv) {
                counts[i] = chunk.iter().map(|w| w.count_ones()).sum();
                i += 1;
            }
        });
        if self.rule.is_local() {
            // The audience of each bit: its reverse derivative for an all-ones change.
            let mut ones = y.clone();
            for s in ones.slices_mut() {
                for (i, w) in s.iter_mut().enumerate() {
                    *w = mask[i % wpv];
                }
            }
            let (_, pullback) = self.model.vjp(&self.params, x.clone());
            zero_words(&mut self.change);
            pullback(ones, &mut self.change);
            let audience = &*self.change;
            let mut i = 0;
            let scratch = &mut self.scratch;
            audience.visit_slices(&mut |s| {
                for chunk in s.chunks(wpv) {
                    scratch[i] = chunk.iter().map(|w| w.count_ones()).sum();
                    i += 1;
                }
            });
        }
        let mut decision = Decision::new(self.rule, counts, &mut self.scratch, valid.popcount());
        let mut flipped = 0;
        let mut j = 0;
        let counts = &self.counts;
        let audience = &self.scratch;
        for s in self.params.slices_mut() {
            for chunk in s.chunks_mut(wpv) {
                if decision.flip(counts[j], audience[j]) {
                    chunk.iter_mut().for_each(|w| *w = !*w);
                    flipped += 1;
                }
                j += 1;
            }
        }
        StepReport {
            wrong_bits: wrong,
            flipped,
        }
    }
}

/// The flip decision of one vote: built from the request counts of a step, then asked for
/// each bit in order (top-k takes ties at the bar in that order).
pub(crate) struct Decision {
    rule: UpdateRule,
    bar: u32,
    ties_left: usize,
}

impl Decision {
    /// Computes the bar a count must reach (for top-k, the k-th largest count; `scratch`
    /// is overwritten then, and otherwise left alone, since it holds the audiences of the
    /// local majority).
    pub(crate) fn new(rule: UpdateRule, counts: &[u32], scratch: &mut [u32], n_valid: u32) -> Self {
        let (bar, ties_left) = match rule {
            UpdateRule::Xor | UpdateRule::LocalMajority | UpdateRule::LocalSignificant(_) => (0, 0),
            UpdateRule::Majority => (n_valid / 2 + 1, 0),
            UpdateRule::Threshold(t) => (t.max(1), 0),
            // No parameters to pick from: no flips.
            UpdateRule::TopK(_) if counts.is_empty() => (u32::MAX, 0),
            UpdateRule::TopK(0) => (u32::MAX, 0),
            UpdateRule::TopK(k) => {
                let k = k.min(counts.len());
                scratch.copy_from_slice(counts);
                let (_, kth, _) = scratch.select_nth_unstable_by(k - 1, |a, b| b.cmp(a));
                let kth = (*kth).max(1);
                let above = counts.iter().filter(|&&c| c > kth).count();
                (kth, k - above.min(k))
            }
        };
        Self {
            rule,
            bar,
            ties_left,
        }
    }

    /// Calls `flip(j)` for every bit `j >= start` that flips, in order. One loop per rule,
    /// with the rule's test alone inside it (so the compiler vectorises the scan: a step
    /// flips few bits and tests tens of thousands).
    pub(crate) fn each_flip(
        &mut self,
        counts: &[u32],
        audience: &[u32],
        start: usize,
        mut flip: impl FnMut(usize),
    ) {
        fn scan(
            range: core::ops::Range<usize>,
            test: impl Fn(usize) -> bool,
            flip: &mut impl FnMut(usize),
        ) {
            for j in range {
                if test(j) {
                    flip(j);
                }
            }
        }
        let (bar, all) = (self.bar, start..counts.len());
        match self.rule {
            UpdateRule::Xor => scan(all, |j| counts[j] & 1 == 1, &mut flip),
            UpdateRule::LocalMajority => scan(all, |j| 2 * counts[j] > audience[j], &mut flip),
            UpdateRule::LocalSignificant(z) => {
                let z2 = z * z;
                scan(all, |j| significant(counts[j], audience[j], z2), &mut flip);
            }
            UpdateRule::Majority | UpdateRule::Threshold(_) => {
                scan(all, |j| counts[j] >= bar, &mut flip);
            }
            UpdateRule::TopK(_) => {
                // Ties at the bar are taken in order, over all bits (frozen ones count).
                for (j, &c) in counts.iter().enumerate() {
                    if self.flip(c, 0) && j >= start {
                        flip(j);
                    }
                }
            }
        }
    }

    /// Whether the next bit, with `count` requests and `audience` examples it matters to,
    /// flips.
    pub(crate) fn flip(&mut self, count: u32, audience: u32) -> bool {
        match self.rule {
            UpdateRule::Xor => count & 1 == 1,
            UpdateRule::LocalMajority => 2 * count > audience,
            UpdateRule::LocalSignificant(z) => significant(count, audience, z * z),
            UpdateRule::TopK(_) if count == self.bar => {
                let take = self.ties_left > 0;
                self.ties_left = self.ties_left.saturating_sub(1);
                take
            }
            _ => count >= self.bar,
        }
    }
}

/// Whether `count` requests out of an audience of `audience` are a majority by more than
/// `sqrt(z2 * audience)` (compared squared: no square root in the scan).
#[inline]
fn significant(count: u32, audience: u32, z2: f32) -> bool {
    let lead = 2 * i64::from(count) - i64::from(audience);
    lead > 0 && (lead * lead) as f32 > z2 * audience as f32
}

/// The Boolean learner's step: the target is the wanted output bits and the lanes that hold
/// examples; a step cannot fail.
impl<M, X, W> lens_core::Learn<X> for BoolLearner<M, X, W>
where
    W: Word,
    X: Clone,
    M: Para<X>,
    M::Param: Flat<u64>,
    M::Out: Flat<u64>,
{
    type Target = (M::Out, W);
    type Out = M::Out;
    type Report = StepReport;
    type Error = core::convert::Infallible;

    fn learn(&mut self, x: &X, (y, valid): &(M::Out, W)) -> Result<StepReport, Self::Error> {
        Ok(self.step(x, y, *valid))
    }

    fn output(&mut self, x: &X) -> M::Out {
        self.predict(x)
    }
}

/// Sets every word of a parameter change to zero.
fn zero_words<P: Flat<u64>>(p: &mut P) {
    for s in p.slices_mut() {
        s.fill(0);
    }
}
