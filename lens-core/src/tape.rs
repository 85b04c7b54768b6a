//! The fixed-size storage of a differentiated loop: one entry per iteration (the carried
//! values the reverse reads, when it runs the body again, or else the iteration's pullback),
//! kept in the order the forward pass ran them and handed back last first for the reverse.
//!
//! `#[lens]` and `para!` bound the trip count of every differentiated `for` loop by a
//! constant read from the range (`0..N`, `1..=N`, `0..N - 1`, `(0..8).rev()`), so the tape has
//! `N + 1` slots (the `N + 1` iterations of `0..=N`), allocated once. They live in a block of
//! the per-thread pool that `HeapMatrix` uses, not on the stack: the pullback that holds the
//! tape is moved out through the model's and the learner's frames, and an LSTM's 28 steps of
//! `(h, c)` at batch 32 are 900 KB. After the first step a block of that size is recycled, so
//! a training step still allocates nothing.
//!
//! That is with `std`. With `alloc` alone there are no per-thread pools: each tape's block is
//! allocated and freed. Without `alloc` the slots are inline, on the stack with the pullback
//! that holds them, so a loop's tape costs stack in proportion to `N` and its entries.

#[cfg(feature = "alloc")]
use crate::heap::{give, take};
#[cfg(feature = "alloc")]
use core::alloc::Layout;
use core::marker::PhantomData;
#[cfg(not(feature = "alloc"))]
use core::mem::MaybeUninit;
#[cfg(feature = "alloc")]
use core::ptr::NonNull;

/// Without `alloc`, the `N + 1` slots inline (on the stack, with the pullback that holds
/// them): `repr(C)` puts `last` right after the array, so the slots are consecutive.
#[cfg(not(feature = "alloc"))]
#[repr(C)]
struct Inline<F, const N: usize> {
    first: [MaybeUninit<F>; N],
    last: MaybeUninit<F>,
}

/// Pullbacks (or carried values) of up to `N + 1` loop iterations, popped in reverse order.
///
/// ```
/// use paralens::__private::Tape;
/// let mut tape = Tape::<u32, 3>::new();
/// for i in 0..=3 {
///     tape.push(i);
/// }
/// assert_eq!(tape.len(), 4);
/// assert_eq!(tape.pop(), Some(3));
/// assert_eq!(tape.pop(), Some(2));
/// ```
pub struct Tape<F, const N: usize> {
    /// `N + 1` slots, the first `len` of them written.
    #[cfg(feature = "alloc")]
    slots: NonNull<F>,
    /// `N + 1` slots, the first `len` of them written.
    #[cfg(not(feature = "alloc"))]
    slots: Inline<F, N>,
    len: usize,
    _owns: PhantomData<F>,
}

// SAFETY: the tape owns the values in its slots alone (as a `Box<[F]>` would); with `std`, a
// block dropped on another thread goes to that thread's pool, without it to the allocator,
// and inline slots move with the tape.
unsafe impl<F: Send, const N: usize> Send for Tape<F, N> {}
// SAFETY: `&Tape` gives no access to the values.
unsafe impl<F: Sync, const N: usize> Sync for Tape<F, N> {}

impl<F, const N: usize> Tape<F, N> {
    #[cfg(feature = "alloc")]
    fn layout() -> Layout {
        Layout::array::<F>(N + 1).expect("a differentiated loop's tape fits in memory")
    }

    /// An empty tape.
    #[inline]
    #[must_use]
    #[cfg(not(feature = "alloc"))]
    pub fn new() -> Self {
        Self {
            slots: Inline {
                first: [const { MaybeUninit::uninit() }; N],
                last: MaybeUninit::uninit(),
            },
            len: 0,
            _owns: PhantomData,
        }
    }

    /// The first slot; the others follow it.
    #[inline]
    fn base(&mut self) -> *mut F {
        #[cfg(feature = "alloc")]
        return self.slots.as_ptr();
        #[cfg(not(feature = "alloc"))]
        return (&raw mut self.slots).cast::<F>();
    }

    /// An empty tape.
    #[inline]
    #[must_use]
    #[cfg(feature = "alloc")]
    pub fn new() -> Self {
        let layout = Self::layout();
        let slots = if layout.size() == 0 {
            NonNull::dangling()
        } else {
            take(layout).cast()
        };
        Self {
            slots,
            len: 0,
            _owns: PhantomData,
        }
    }

    /// The number of values held.
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

    /// Keeps the value of the next iteration.
    ///
    /// # Panics
    /// When the loop runs more than `N + 1` times. The bound is read from the range's end,
    /// so this only happens for a range whose start is negative (`-3..N` over `i32`).
    #[inline]
    pub fn push(&mut self, f: F) {
        assert!(
            self.len <= N,
            "a differentiated loop ran more than {} iterations, the bound read from its range; start the range at 0 or later",
            N + 1
        );
        let base = self.base();
        // SAFETY: `len <= N`, so slot `len` is inside the `N + 1` slots (a block, or inline;
        // or `F` is zero-sized and the dangling pointer is valid for it); it holds no value
        // yet.
        unsafe { base.add(self.len).write(f) };
        self.len += 1;
    }

    /// The value of the last iteration not yet popped.
    #[inline]
    pub fn pop(&mut self) -> Option<F> {
        if self.len == 0 {
            return None;
        }
        self.len -= 1;
        let base = self.base();
        // SAFETY: slot `len` was written by `push` and is read once: `len` now excludes it.
        Some(unsafe { base.add(self.len).read() })
    }
}

impl<F, const N: usize> Drop for Tape<F, N> {
    fn drop(&mut self) {
        let base = self.base();
        // SAFETY: the first `len` slots hold values that nothing else owns.
        unsafe {
            core::ptr::drop_in_place(core::ptr::slice_from_raw_parts_mut(base, self.len));
        }
        #[cfg(feature = "alloc")]
        {
            let layout = Self::layout();
            if layout.size() != 0 {
                give(self.slots.cast(), layout);
            }
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

    /// Values left on a tape are dropped with it, once each.
    #[test]
    fn drops_what_it_still_holds() {
        let counted = std::rc::Rc::new(());
        let mut t = Tape::<std::rc::Rc<()>, 4>::new();
        for _ in 0..3 {
            t.push(counted.clone());
        }
        drop(t.pop());
        assert_eq!(std::rc::Rc::strong_count(&counted), 3);
        drop(t);
        assert_eq!(std::rc::Rc::strong_count(&counted), 1);
        // Zero-sized values take no block.
        let mut z = Tape::<(), 2>::new();
        z.push(());
        assert_eq!(z.pop(), Some(()));
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
