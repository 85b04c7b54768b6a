//! The pseudo-linear model: a popcount threshold over a learned mask.

/// `y = [popcount(w & x) >= theta]` over `64 * K` feature bits (examples stored row-wise:
/// one `[u64; K]` per example).
///
/// It is a lens whose backward is chosen, not derived from a circuit: the request to flip
/// mask bit `i` is `x_i & d & !(w_i ^ y)`, the linear rule `x_i & d` of `XOR_i (w_i & x_i)`
/// restricted to the direction that moves the count towards the other side of the
/// threshold (a wrong 0 asks to switch bits on, a wrong 1 to switch them off). Learning
/// counts these requests over a batch and flips by a vote.
///
/// ```
/// use paralens::circuits::models::PseudoLinear;
/// let mut m = PseudoLinear::<1>::new(2);
/// m.mask = [0b1111];
/// assert!(m.predict(&[0b0011]));
/// assert!(!m.predict(&[0b1_0000]));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PseudoLinear<const K: usize> {
    /// The learned mask.
    pub mask: [u64; K],
    /// The threshold on the count of masked features.
    pub theta: u32,
}

impl<const K: usize> PseudoLinear<K> {
    /// An empty mask with threshold `theta`.
    #[must_use]
    pub fn new(theta: u32) -> Self {
        Self {
            mask: [0; K],
            theta,
        }
    }

    /// The count of masked features of `x`.
    #[inline]
    #[must_use]
    pub fn score(&self, x: &[u64; K]) -> u32 {
        self.mask
            .iter()
            .zip(x)
            .map(|(w, v)| (w & v).count_ones())
            .sum()
    }

    /// The output for one example.
    #[inline]
    #[must_use]
    pub fn predict(&self, x: &[u64; K]) -> bool {
        self.score(x) >= self.theta
    }

    /// One vote over a batch: every wrong example asks to flip the mask bits of its
    /// features in the helpful direction (a wrong 0 to switch them on, a wrong 1 to switch
    /// them off); requests in opposite directions cancel. At most `max_flips` bits flip,
    /// those with the largest net vote, and only bits with at least `min_votes`. Returns the
    /// number of wrong examples before the step. Nothing is allocated.
    ///
    /// # Panics
    /// If `xs` and `ys` differ in length.
    pub fn vote_step(
        &mut self,
        xs: &[[u64; K]],
        ys: &[bool],
        min_votes: u32,
        max_flips: usize,
    ) -> usize {
        assert_eq!(xs.len(), ys.len(), "one label per example");
        let mut votes = [[0i32; 64]; K];
        let mut wrong = 0;
        for (x, &y) in xs.iter().zip(ys) {
            if self.predict(x) == y {
                continue;
            }
            wrong += 1;
            let sign = if y { 1 } else { -1 };
            for (k, &v) in x.iter().enumerate() {
                let mut bits = v;
                while bits != 0 {
                    votes[k][bits.trailing_zeros() as usize] += sign;
                    bits &= bits - 1;
                }
            }
        }
        // The helpful vote of each bit: for an off bit the votes to switch on, for an on bit
        // the votes to switch off.
        for (k, row) in votes.iter_mut().enumerate() {
            for (b, v) in row.iter_mut().enumerate() {
                if (self.mask[k] >> b) & 1 == 1 {
                    *v = -*v;
                }
            }
        }
        let mut sorted = votes;
        let flat = sorted.as_flattened_mut();
        let k = max_flips.min(flat.len());
        if k == 0 {
            return wrong;
        }
        let (_, kth, _) = flat.select_nth_unstable_by(k - 1, |a, b| b.cmp(a));
        let bar = (*kth).max(min_votes.max(1) as i32);
        let above = votes.as_flattened().iter().filter(|&&v| v > bar).count();
        let mut ties = k.saturating_sub(above);
        for (k, row) in votes.iter().enumerate() {
            for (b, &v) in row.iter().enumerate() {
                let take = v > bar || (v == bar && ties > 0);
                if v == bar && take {
                    ties -= 1;
                }
                if take {
                    self.mask[k] ^= 1 << b;
                }
            }
        }
        wrong
    }
}
