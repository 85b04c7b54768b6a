//! The iterations of a differentiated loop over a stepped range (`(0..N).step_by(k)`,
//! `(0..=N).step_by(k)`) in reverse order, for the reverse pass that runs each iteration's
//! body again (see `Tape` for the other kind of loop). Other ranges run backwards with
//! `rev()`; a stepped one is double-ended only where the range under it has an exact size
//! (not `a..=b`, nor `a..b` of `i64`), so its counters are found again by `nth`, constant
//! time on ranges.

/// The first `n` items of `range`, last first, each found by `nth`.
///
/// ```
/// use paralens::__private::Backward;
/// let r = (0..=10usize).step_by(3);
/// assert_eq!(Backward::new(r, 4).collect::<Vec<_>>(), [9, 6, 3, 0]);
/// ```
pub struct Backward<R> {
    range: R,
    left: usize,
}

impl<R> Backward<R> {
    /// The first `n` items of `range`, last first.
    #[inline(always)]
    pub fn new(range: R, n: usize) -> Self {
        Backward { range, left: n }
    }
}

impl<R: Iterator + Clone> Iterator for Backward<R> {
    type Item = R::Item;
    #[inline]
    fn next(&mut self) -> Option<R::Item> {
        self.left = self.left.checked_sub(1)?;
        self.range.clone().nth(self.left)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    extern crate std;
    use std::vec::Vec;

    /// The first `n` items of `r`, last first, as `take`, `collect` and `reverse` give them.
    fn reversed<R: Iterator + Clone>(r: &R, n: usize) -> Vec<R::Item> {
        let mut v: Vec<R::Item> = r.clone().take(n).collect();
        v.reverse();
        v
    }

    #[test]
    fn stepped_ranges_backwards() {
        let r = (0..=10usize).step_by(3);
        assert_eq!(
            Backward::new(r.clone(), 4).collect::<Vec<_>>(),
            [9, 6, 3, 0]
        );
        let r = (0..=4).rev().step_by(2);
        assert_eq!(
            Backward::new(r.clone(), 3).collect::<Vec<_>>(),
            reversed(&r, 3)
        );
        let r = (0i64..7).step_by(2);
        assert_eq!(
            Backward::new(r.clone(), 4).collect::<Vec<_>>(),
            [6, 4, 2, 0]
        );
        let r = (1..=1u8).step_by(5);
        assert_eq!(
            Backward::new(r.clone(), 1).collect::<Vec<_>>(),
            reversed(&r, 1)
        );
        assert_eq!(Backward::new(0..0usize, 0).count(), 0);
    }
}
