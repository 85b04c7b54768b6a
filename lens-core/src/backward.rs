//! A differentiated loop's iterations in reverse order, for the reverse pass that runs each
//! iteration's body again (see `Tape` for the other kind of loop).
//!
//! A range that runs both ways (`0..N`, `1..=N`, `(0..N).rev()`, `(0..N).step_by(k)`) is run
//! backwards with `rev`: a plain counted loop, which the compiler unrolls and vectorises as
//! the hand-written one. A range that does not (`(0..=N).step_by(k)`: Rust has no reverse of
//! a stepped inclusive range of `usize`) finds the `k`-th counter again with `nth`, constant
//! time on ranges. The choice is made by the type, through method resolution: the first impl
//! applies where `rev` exists, the second, one reference further, everywhere else.

use core::iter::Rev;

/// The range of a loop that ran `n` times, to be run again last iteration first.
pub struct Backward<'a, R>(pub &'a R, pub usize);

/// The iterations in reverse by `rev`, where the range runs both ways.
pub trait ByRev {
    /// `Rev` of the range.
    type Iter;
    /// The iterations, last first.
    fn lens_backward(&self) -> Self::Iter;
}

impl<R: DoubleEndedIterator + Clone> ByRev for Backward<'_, R> {
    type Iter = Rev<R>;
    #[inline(always)]
    fn lens_backward(&self) -> Rev<R> {
        self.0.clone().rev()
    }
}

/// The iterations in reverse by `nth`, for any range.
pub trait ByNth {
    /// [`Nth`] of the range.
    type Iter;
    /// The iterations, last first.
    fn lens_backward(&self) -> Self::Iter;
}

impl<R: Iterator + Clone> ByNth for &Backward<'_, R> {
    type Iter = Nth<R>;
    #[inline(always)]
    fn lens_backward(&self) -> Nth<R> {
        Nth {
            range: self.0.clone(),
            left: self.1,
        }
    }
}

/// The first `left` items of `range`, last first, each found by `nth`.
pub struct Nth<R> {
    range: R,
    left: usize,
}

impl<R: Iterator + Clone> Iterator for Nth<R> {
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

    /// The range's items, last first, as `collect` and `reverse` give them.
    fn reversed<R: Iterator + Clone>(r: &R) -> Vec<R::Item> {
        let mut v: Vec<R::Item> = r.clone().collect();
        v.reverse();
        v
    }

    // Each call below is written at a concrete type, as in generated code, so that method
    // resolution picks the impl the macro's expansion would.
    #[test]
    fn ranges_that_run_both_ways_go_by_rev() {
        let r = 0..5usize;
        let back: Rev<_> = (&Backward(&r, 5)).lens_backward();
        assert_eq!(back.collect::<Vec<_>>(), reversed(&r));
        let r = 3..=9usize;
        let back: Rev<_> = (&Backward(&r, 7)).lens_backward();
        assert_eq!(back.collect::<Vec<_>>(), reversed(&r));
        let r = (0..10usize).step_by(3);
        let back: Rev<_> = (&Backward(&r, 4)).lens_backward();
        assert_eq!(back.collect::<Vec<_>>(), [9, 6, 3, 0]);
        let r = (0..10usize).rev().step_by(4);
        let back: Rev<_> = (&Backward(&r, 3)).lens_backward();
        assert_eq!(back.collect::<Vec<_>>(), reversed(&r));
        let r = 2..2usize;
        let back: Rev<_> = (&Backward(&r, 0)).lens_backward();
        assert_eq!(back.count(), 0);
    }

    #[test]
    fn stepped_inclusive_ranges_go_by_nth() {
        let r = (0..=10usize).step_by(3);
        let back: Nth<_> = (&Backward(&r, 4)).lens_backward();
        assert_eq!(back.collect::<Vec<_>>(), [9, 6, 3, 0]);
        let r = (1..=1usize).step_by(2);
        let back: Nth<_> = (&Backward(&r, 1)).lens_backward();
        assert_eq!(back.collect::<Vec<_>>(), reversed(&r));
    }
}
