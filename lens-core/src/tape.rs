//! The fixed-size storage of a differentiated loop: one entry per iteration (the carried
//! values the reverse reads, when it runs the body again, or else the iteration's pullback),
//! kept in the order the forward pass ran them and handed back last first for the reverse.
//!
//! `#[lens]` and `para!` bound the trip count of every differentiated `for` loop by a
//! constant read from the range (`0..N`, `1..=N`, `0..N - 1`, `(0..8).rev()`), so the tape is
//! an array on the stack, never a heap allocation: `N` slots and one spare, which covers the
//! `N + 1` iterations of `0..=N`.

/// Pullbacks of up to `N + 1` loop iterations, popped in reverse order.
///
/// ```
/// use lens_core::__private::Tape;
/// let mut tape = Tape::<u32, 3>::new();
/// for i in 0..=3 {
///     tape.push(i);
/// }
/// assert_eq!(tape.len(), 4);
/// assert_eq!(tape.pop(), Some(3));
/// assert_eq!(tape.pop(), Some(2));
/// ```
pub struct Tape<F, const N: usize> {
    slots: [Option<F>; N],
    spare: Option<F>,
    len: usize,
}

impl<F, const N: usize> Tape<F, N> {
    /// An empty tape.
    #[inline]
    #[must_use]
    pub fn new() -> Self {
        Self {
            slots: core::array::from_fn(|_| None),
            spare: None,
            len: 0,
        }
    }

    /// The number of pullbacks held.
    #[inline]
    #[must_use]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the tape holds nothing.
    #[inline]
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Keeps the pullback of the next iteration.
    ///
    /// # Panics
    /// When the loop runs more than `N + 1` times. The bound is read from the range's end,
    /// so this only happens for a range whose start is negative (`-3..N` over `i32`).
    #[inline]
    pub fn push(&mut self, f: F) {
        let slot = match self.slots.get_mut(self.len) {
            Some(slot) => slot,
            None if self.len == N => &mut self.spare,
            None => panic!(
                "a differentiated loop ran more than {} iterations, the bound read from its range; start the range at 0 or later",
                N + 1
            ),
        };
        *slot = Some(f);
        self.len += 1;
    }

    /// The pullback of the last iteration not yet popped.
    #[inline]
    pub fn pop(&mut self) -> Option<F> {
        if self.len == 0 {
            return None;
        }
        self.len -= 1;
        match self.slots.get_mut(self.len) {
            Some(slot) => slot.take(),
            None => self.spare.take(),
        }
    }
}

impl<F, const N: usize> Default for Tape<F, N> {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use super::Tape;

    #[test]
    fn pops_last_first_through_the_spare_slot() {
        let mut t = Tape::<usize, 2>::new();
        for i in 0..3 {
            t.push(i);
        }
        assert_eq!(
            [t.pop(), t.pop(), t.pop(), t.pop()],
            [Some(2), Some(1), Some(0), None]
        );
        assert!(t.is_empty());
    }

    #[test]
    #[should_panic(expected = "more than 3 iterations")]
    fn refuses_more_than_its_bound() {
        let mut t = Tape::<usize, 2>::new();
        for i in 0..4 {
            t.push(i);
        }
    }
}
