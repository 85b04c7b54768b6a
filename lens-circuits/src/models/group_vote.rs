//! Classes read off groups of output gates, and the targets that train them.
//!
//! A Boolean classifier of `classes` classes has `group` output gates per class; an
//! example's score for a class is how many of the class's gates are on, and the class with
//! the highest score wins. Training it gate by gate with one-hot targets (every gate of the
//! right class on, every other gate off) asks each gate to be a classifier by itself, and
//! the gates learn the same few easy features. [`GroupVote::softmax_targets`] asks instead
//! what the gradient of a softmax cross-entropy on the scores asks: it pushes the right
//! class up with weight `1 - p_right` and each wrong class down with weight `p_wrong`, so
//! the examples the scores already get right stop pulling, and the gates learn the hard
//! ones. A Boolean step cannot weight an example, so each example takes part in a class's
//! vote with its weight as a probability.

use crate::Word;
use crate::netlist::NetlistError;
use alloc::{vec, vec::Vec};
use rand::Rng;

/// Reads classes off groups of output gates: outputs `c * group .. (c + 1) * group` vote
/// for class `c`. Holds the per-example scores (allocated at construction, so reading and
/// choosing targets allocate nothing).
///
/// ```
/// use paralens::circuits::models::GroupVote;
/// use paralens::circuits::Word;
/// // 2 classes of 3 gates, 64 examples: in lane 0 two gates of class 1 are on.
/// let mut outputs = [0u64; 6];
/// outputs[3] = 1;
/// outputs[5] = 1;
/// let mut vote = GroupVote::<u64>::new(2, 3);
/// let mut classes = [0usize; 2];
/// vote.predict(&outputs, &mut classes).unwrap();
/// assert_eq!(classes, [1, 0]); // lane 1 has no gate on: the tie goes to class 0
/// assert_eq!(vote.scores(0).collect::<Vec<_>>(), [0, 2]);
/// ```
#[derive(Clone, Debug)]
pub struct GroupVote<W: Word> {
    classes: usize,
    group: usize,
    /// `scores[c * W::LANES + lane]`: class-major, so reading a word is a loop over lanes.
    scores: Vec<u32>,
    /// The bit planes of one class's counts: enough for a count of `group`.
    planes: Vec<W>,
    /// Per class, the lanes that take part in its vote this step.
    takes_part: Vec<W>,
    /// Per class, the lanes whose label it is.
    is_label: Vec<W>,
    /// Per class, one lane's unnormalised softmax weight.
    exps: Vec<f32>,
}

/// How [`GroupVote::softmax_targets`] chooses a step's targets.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Softmax {
    /// The softmax temperature, in gates: scores `s` give class probabilities
    /// `exp(s_c / t) / sum_k exp(s_k / t)`. About a thirtieth of the group size worked on
    /// MNIST. A temperature that is not positive (or NaN) is taken as the smallest positive
    /// one: the top score takes all the probability.
    pub temperature: f32,
    /// One output gate in `share`, chosen at random, takes part in a step (with the gates
    /// that feed it): a step size. With every gate moving at once, the whole group answers
    /// the same errors and the scores overshoot. A share of 0 is taken as 1 (every gate).
    pub share: u32,
}

impl<W: Word> GroupVote<W> {
    /// A reader for `classes` classes of `group` gates each.
    ///
    /// # Panics
    /// `classes` or `group` is zero.
    #[must_use]
    pub fn new(classes: usize, group: usize) -> Self {
        assert!(
            classes > 0 && group > 0,
            "a group vote needs at least one class and one gate per class (got {classes} \
             classes of {group})"
        );
        Self {
            classes,
            group,
            scores: vec![0; classes * W::LANES],
            planes: vec![W::ZERO; (usize::BITS - group.leading_zeros()) as usize],
            takes_part: vec![W::ZERO; classes],
            is_label: vec![W::ZERO; classes],
            exps: vec![0.0; classes],
        }
    }

    /// The number of output gates read: `classes * group`.
    #[must_use]
    pub fn outputs(&self) -> usize {
        self.classes * self.group
    }

    /// Counts, for every lane and class, the class's gates that are on in `outputs`.
    ///
    /// # Errors
    /// `outputs` is not `classes * group` long.
    pub fn count(&mut self, outputs: &[W]) -> Result<(), NetlistError> {
        NetlistError::check_width("group vote outputs", self.outputs(), outputs.len())?;
        let planes = &mut self.planes;
        for (c, gates) in outputs.chunks(self.group).enumerate() {
            // A bit-sliced counter per lane: plane k holds bit k of every lane's count, and
            // each gate is added with a ripple carry that stops when no lane carries (about
            // two planes a gate), where counting lane by lane costs a step per lane.
            planes.fill(W::ZERO);
            for &gate in gates {
                let mut carry = gate;
                for plane in planes.iter_mut() {
                    let next = *plane & carry;
                    *plane = *plane ^ carry;
                    carry = next;
                    if carry == W::ZERO {
                        break;
                    }
                }
            }
            let scores = &mut self.scores[c * W::LANES..(c + 1) * W::LANES];
            scores.fill(0);
            for (k, plane) in planes.iter().enumerate() {
                for (lanes, &word) in scores.chunks_exact_mut(64).zip(plane.words()) {
                    // Branch-free over the 64 lanes of a word: it vectorises.
                    for (b, s) in lanes.iter_mut().enumerate() {
                        *s |= (((word >> b) & 1) as u32) << k;
                    }
                }
            }
        }
        Ok(())
    }

    /// The scores of `lane` after the last [`GroupVote::count`] (or prediction, or
    /// targets): one per class.
    ///
    /// # Panics
    /// `lane` is not below `W::LANES`.
    pub fn scores(&self, lane: usize) -> impl Iterator<Item = u32> + '_ {
        assert!(
            lane < W::LANES,
            "lane {lane} out of range (0..{})",
            W::LANES
        );
        (0..self.classes).map(move |c| self.scores[c * W::LANES + lane])
    }

    fn winner(&self, lane: usize) -> usize {
        // The highest score, ties to the lower class.
        let mut best = 0;
        for c in 1..self.classes {
            if self.scores[c * W::LANES + lane] > self.scores[best * W::LANES + lane] {
                best = c;
            }
        }
        best
    }

    /// The winning class of the first `classes.len()` lanes of `outputs` (ties go to the
    /// lower class).
    ///
    /// # Errors
    /// `outputs` is not `classes * group` long, or more classes asked for than lanes.
    pub fn predict(&mut self, outputs: &[W], classes: &mut [usize]) -> Result<(), NetlistError> {
        if classes.len() > W::LANES {
            NetlistError::check_width(
                "predicted lanes (at most the word's lanes)",
                W::LANES,
                classes.len(),
            )?;
        }
        self.count(outputs)?;
        for (lane, c) in classes.iter_mut().enumerate() {
            *c = self.winner(lane);
        }
        Ok(())
    }

    /// Fills a step's targets (see the module doc) for the examples in the first
    /// `labels.len()` lanes: `wanted` is one-hot (the label's gates on), and `audience[o]`
    /// holds the lanes whose vote gate `o` takes part in, sampled with the softmax weights;
    /// a gate not among the step's share has none. Lanes past the labels take no part. Fit
    /// for [`crate::netlist::NetlistLearner::step_by`].
    ///
    /// # Errors
    /// Slices of the wrong length, more labels than lanes, or a label that is not a class.
    pub fn softmax_targets(
        &mut self,
        outputs: &[W],
        labels: &[u8],
        how: Softmax,
        rng: &mut impl Rng,
        wanted: &mut [W],
        audience: &mut [W],
    ) -> Result<(), NetlistError> {
        NetlistError::check_width("wanted outputs", self.outputs(), wanted.len())?;
        NetlistError::check_width("output audiences", self.outputs(), audience.len())?;
        if labels.len() > W::LANES {
            NetlistError::check_width("labels (at most the word's lanes)", W::LANES, labels.len())?;
        }
        if let Some((example, &label)) = labels
            .iter()
            .enumerate()
            .find(|&(_, &l)| usize::from(l) >= self.classes)
        {
            return Err(NetlistError::Label {
                example,
                label: label.into(),
                classes: self.classes,
            });
        }
        self.count(outputs)?;
        self.takes_part.fill(W::ZERO);
        self.is_label.fill(W::ZERO);
        let lanes = W::LANES;
        let inv_t = 1.0 / how.temperature.max(f32::MIN_POSITIVE);
        for (lane, &label) in labels.iter().enumerate() {
            let label = usize::from(label);
            self.is_label[label].set_lane(lane, true);
            let top = (0..self.classes)
                .map(|c| self.scores[c * lanes + lane])
                .max()
                .unwrap_or(0);
            for (c, e) in self.exps.iter_mut().enumerate() {
                *e = nalgebra::ComplexField::exp(
                    -((top - self.scores[c * lanes + lane]) as f32) * inv_t,
                );
            }
            let total: f32 = self.exps.iter().sum();
            for (c, &e) in self.exps.iter().enumerate() {
                let p = e / total;
                let w = if c == label { 1.0 - p } else { p };
                if rng.random::<f32>() < w {
                    self.takes_part[c].set_lane(lane, true);
                }
            }
        }
        let share = how.share.max(1);
        for (o, (want, aud)) in wanted.iter_mut().zip(audience.iter_mut()).enumerate() {
            let c = o / self.group;
            *want = self.is_label[c];
            *aud = if rng.random_ratio(1, share) {
                self.takes_part[c]
            } else {
                W::ZERO
            };
        }
        Ok(())
    }
}
