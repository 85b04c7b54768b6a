//! Large matrices on the heap, their storage recycled: where the activations of a model of
//! real size live.
//!
//! A [`HeapMatrix`] is a static matrix (shape in the type, as `SMatrix`) whose values live in
//! a heap block. Moving it moves a pointer, so a layer's output, a pullback's capture and a
//! change travel through composition without copies and without using the stack (one
//! activation of the MNIST CNN is 1.2 MB: by value it cannot fit a 2 MiB thread at all).
//! Blocks come from a per-thread pool and go back to it when the matrix is dropped: the first
//! training step allocates what a step holds at once, every later step reuses those blocks
//! and allocates nothing. (Without `std` there is no per-thread storage: each block is
//! allocated and freed by the program's allocator.)

use crate::gemm::{View, ViewMut, gemm};
use crate::{Flat, Real, Tangent};
use alloc::alloc::Layout;
use core::fmt;
use core::ops::{Deref, DerefMut};
use core::ptr::NonNull;
use nalgebra::SMatrix;
#[cfg(feature = "std")]
use std::cell::RefCell;

/// Freed blocks by layout, per thread (a step's blocks come and go on one thread).
#[cfg(feature = "std")]
struct Pool(Vec<(Layout, Vec<NonNull<u8>>)>);

#[cfg(feature = "std")]
impl Drop for Pool {
    fn drop(&mut self) {
        for (layout, blocks) in self.0.drain(..) {
            for b in blocks {
                // SAFETY: every block in the pool was allocated by `alloc::alloc::alloc` with
                // this layout (`take`) and is owned by the pool alone once given back.
                unsafe { alloc::alloc::dealloc(b.as_ptr(), layout) };
            }
        }
    }
}

#[cfg(feature = "std")]
thread_local! {
    static POOL: RefCell<Pool> = const { RefCell::new(Pool(Vec::new())) };
}

/// A new block for `layout` (of non-zero size).
fn fresh(layout: Layout) -> NonNull<u8> {
    // SAFETY: `layout` has a non-zero size (`HeapMatrix` is only made for `R * C > 0`
    // entries of a non-zero-sized scalar, checked in `HeapMatrix::block`; `Tape` takes
    // no block for a zero-sized layout).
    let p = unsafe { alloc::alloc::alloc(layout) };
    NonNull::new(p).unwrap_or_else(|| alloc::alloc::handle_alloc_error(layout))
}

/// A block for `layout` (of non-zero size): a recycled one, or a new allocation.
#[cfg(feature = "std")]
pub(crate) fn take(layout: Layout) -> NonNull<u8> {
    let recycled = POOL
        .try_with(|p| {
            p.borrow_mut()
                .0
                .iter_mut()
                .find(|(l, _)| *l == layout)
                .and_then(|(_, blocks)| blocks.pop())
        })
        .ok()
        .flatten();
    recycled.unwrap_or_else(|| fresh(layout))
}

/// Gives a block back to this thread's pool (or frees it while the thread shuts down).
#[cfg(feature = "std")]
pub(crate) fn give(block: NonNull<u8>, layout: Layout) {
    let kept = POOL.try_with(|p| {
        let mut pool = p.borrow_mut();
        match pool.0.iter_mut().find(|(l, _)| *l == layout) {
            Some((_, blocks)) => blocks.push(block),
            None => pool.0.push((layout, vec![block])),
        }
    });
    if kept.is_err() {
        // SAFETY: `block` was allocated with `layout` and nothing else refers to it.
        unsafe { alloc::alloc::dealloc(block.as_ptr(), layout) };
    }
}

/// A new block for `layout` (of non-zero size). Without `std` there are no per-thread pools:
/// every block is allocated and freed (the allocator of a `no_std` program is its own, and
/// may well keep a free list of its own).
#[cfg(not(feature = "std"))]
pub(crate) fn take(layout: Layout) -> NonNull<u8> {
    fresh(layout)
}

/// Frees a block (see the `no_std` `take`).
#[cfg(not(feature = "std"))]
pub(crate) fn give(block: NonNull<u8>, layout: Layout) {
    // SAFETY: `block` was allocated with `layout` (`fresh`) and nothing else refers to it.
    unsafe { alloc::alloc::dealloc(block.as_ptr(), layout) };
}

/// A static `R x C` matrix of `T` on the heap, its block recycled through a per-thread pool.
///
/// It dereferences to `SMatrix<T, R, C>`, so every nalgebra operation that reads or writes a
/// matrix in place works on it; the layers ([`crate::Dense`], the span layers, pooling, the
/// activations) and [`crate::PerColumn`] losses take it as input and give it as output, so a
/// model declared on `HeapMatrix` batches keeps every large value off the stack.
///
/// ```
/// use paralens::{Dense, HeapMatrix, Init, Para};
///
/// let layer = Dense::<784, 128>::new();
/// let p = layer.init(0);
/// let x = HeapMatrix::<f32, 784, 32>::from_fn(|i, j| ((i + j) % 7) as f32 / 7.0);
/// let y: HeapMatrix<f32, 128, 32> = layer.forward(&p, x);
/// assert_eq!(y.ncols(), 32);
/// ```
pub struct HeapMatrix<T: Real, const R: usize, const C: usize> {
    ptr: NonNull<SMatrix<T, R, C>>,
}

// SAFETY: a `HeapMatrix` owns its block exclusively, like a `Box<SMatrix<T, R, C>>`; the pool
// it returns to is the dropping thread's, so no block is shared between threads.
unsafe impl<T: Real + Send, const R: usize, const C: usize> Send for HeapMatrix<T, R, C> {}
// SAFETY: shared access only reads the matrix, as for `&Box<SMatrix<T, R, C>>`.
unsafe impl<T: Real + Sync, const R: usize, const C: usize> Sync for HeapMatrix<T, R, C> {}

impl<T: Real, const R: usize, const C: usize> HeapMatrix<T, R, C> {
    const LAYOUT: Layout = Layout::new::<SMatrix<T, R, C>>();

    /// A block whose entries are the values of `values` in order (exactly `R * C` of them),
    /// each written once.
    ///
    /// # Panics
    /// If `values` yields fewer than `R * C` entries (the block is then freed, never read).
    #[inline]
    pub(crate) fn from_entries(values: impl IntoIterator<Item = T>) -> Self {
        let block = Self::block();
        let mut written = 0;
        for v in values.into_iter().take(R * C) {
            // SAFETY: the block holds `R * C` consecutive `T`s (see `build`) and
            // `written < R * C` here, so the write stays inside it.
            unsafe { block.add(written).write(v) };
            written += 1;
        }
        if written < R * C {
            give(block.cast::<u8>(), Self::LAYOUT);
            panic!("HeapMatrix::from_entries: {written} entries for {R}x{C}");
        }
        // Every entry was written exactly once above.
        Self {
            ptr: block.cast::<SMatrix<T, R, C>>(),
        }
    }

    /// An uninitialised block for the matrix, viewed as its first entry.
    #[inline]
    fn block() -> NonNull<T> {
        assert!(
            Self::LAYOUT.size() > 0,
            "HeapMatrix holds at least one entry of a sized scalar"
        );
        take(Self::LAYOUT).cast::<T>()
    }

    /// A block whose entries are then all written by `fill`.
    #[inline]
    fn build(fill: impl FnOnce(&mut [T])) -> Self {
        let block = Self::block();
        // SAFETY: `SMatrix<T, R, C>` is `Matrix` (`repr(C)`, its storage first and only
        // zero-sized fields after it) over `ArrayStorage` (`repr(transparent)` over
        // `[[T; R]; C]`): the block holds exactly `R * C` consecutive `T`s. They are written
        // with `T::zero()` before the slice is made, so the slice never shows uninitialised
        // memory, and `fill` may then overwrite them.
        let entries = unsafe {
            for i in 0..R * C {
                block.add(i).write(T::zero());
            }
            core::slice::from_raw_parts_mut(block.as_ptr(), R * C)
        };
        fill(entries);
        Self {
            ptr: block.cast::<SMatrix<T, R, C>>(),
        }
    }

    /// The zero matrix.
    #[must_use]
    #[inline]
    pub fn zeros() -> Self {
        Self::build(|_| {})
    }

    /// Entry `(i, j)` is `f(i, j)`.
    #[must_use]
    pub fn from_fn(mut f: impl FnMut(usize, usize) -> T) -> Self {
        Self::from_entries((0..R * C).map(|k| f(k % R, k / R)))
    }

    /// A copy of `m` on the heap.
    #[must_use]
    #[inline]
    pub fn from_matrix(m: &SMatrix<T, R, C>) -> Self {
        Self::copied(m.as_slice())
    }

    /// `self ∘ o`, entry by entry, in a new block. It shadows nalgebra's `component_mul`,
    /// reached through `Deref`, which would return a static matrix on the stack. `o` is a
    /// heap matrix (through `Deref`) or a static one.
    #[must_use]
    #[inline]
    pub fn component_mul(&self, o: &SMatrix<T, R, C>) -> Self {
        Self::from_entries(
            self.as_slice()
                .iter()
                .zip(o.as_slice())
                .map(|(&a, &b)| a * b),
        )
    }

    /// `self ⊘ o`, entry by entry, in a new block. It shadows nalgebra's `component_div`,
    /// reached through `Deref`, which would return a static matrix on the stack. `o` is a
    /// heap matrix (through `Deref`) or a static one.
    #[must_use]
    #[inline]
    pub fn component_div(&self, o: &SMatrix<T, R, C>) -> Self {
        Self::from_entries(
            self.as_slice()
                .iter()
                .zip(o.as_slice())
                .map(|(&a, &b)| a / b),
        )
    }

    /// `self^T` in a new block. It shadows nalgebra's `transpose`, reached through `Deref`,
    /// which would return a static matrix on the stack.
    #[must_use]
    pub fn transpose(&self) -> HeapMatrix<T, C, R> {
        HeapMatrix::from_fn(|i, j| self[(j, i)])
    }

    /// `f` of every entry, in a new block. It shadows nalgebra's `map`, reached through
    /// `Deref`, which would return a static matrix on the stack: forward-only code in a
    /// `#[lens]` body maps a heap matrix to a heap matrix, as the rule of `map` does.
    /// (`(*h).map(f)` is nalgebra's, for entries of another type.)
    #[must_use]
    pub fn map(&self, mut f: impl FnMut(T) -> T) -> Self {
        Self::from_entries(self.as_slice().iter().map(|&x| f(x)))
    }

    /// The sum of the entries, in eight interleaved partial sums. It shadows nalgebra's
    /// `sum`, reached through `Deref`, which adds one entry after the other: on a 128x784
    /// matrix one chain of 100,352 additions, 14x slower (docs/history/BENCHMARKS-2026-11-30-to-12-04.md, "Eighth session").
    #[must_use]
    pub fn sum(&self) -> T {
        let entries = self.as_slice();
        let chunks = entries.chunks_exact(8);
        let rest = chunks.remainder();
        let mut acc = [T::zero(); 8];
        for c in chunks {
            for (a, &x) in acc.iter_mut().zip(c) {
                *a += x;
            }
        }
        let mut s =
            ((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7]));
        for &x in rest {
            s += x;
        }
        s
    }

    /// The mean of the entries ([`Self::sum`] over their count).
    #[must_use]
    pub fn mean(&self) -> T {
        self.sum() / T::cst((R * C) as f64)
    }

    /// Sets every entry to `v`, as a slice. It shadows nalgebra's `fill`, which goes entry by
    /// entry (14x slower on a 128x784 matrix).
    pub fn fill(&mut self, v: T) {
        self.as_mut_slice().fill(v);
    }

    /// Every entry `v`.
    #[must_use]
    pub fn repeat(v: T) -> Self {
        Self::from_entries(core::iter::repeat_n(v, R * C))
    }

    /// A copy of the values, column-major (`R * C` of them).
    ///
    /// # Panics
    /// If `values` does not hold `R * C` entries.
    #[must_use]
    pub fn from_column_slice(values: &[T]) -> Self {
        assert_eq!(
            values.len(),
            R * C,
            "HeapMatrix::from_column_slice: wrong length"
        );
        Self::copied(values)
    }

    /// A block holding a copy of `values` (exactly `R * C` of them), copied once and not
    /// zeroed first (a clone is a step's input: 100 KB for an MNIST batch).
    #[inline]
    fn copied(values: &[T]) -> Self {
        assert_eq!(values.len(), R * C, "HeapMatrix: wrong number of entries");
        let block = Self::block();
        // SAFETY: the block holds `R * C` consecutive `T`s (see `build`), `values` holds as
        // many (checked above), and a fresh block cannot overlap a borrowed slice. Every
        // entry is written, so the matrix is initialised.
        unsafe { core::ptr::copy_nonoverlapping(values.as_ptr(), block.as_ptr(), R * C) };
        Self {
            ptr: block.cast::<SMatrix<T, R, C>>(),
        }
    }
}

impl<T: Real, const R: usize, const C: usize> Drop for HeapMatrix<T, R, C> {
    #[inline]
    fn drop(&mut self) {
        // The entries are plain floats: nothing to drop but the block.
        give(self.ptr.cast::<u8>(), Self::LAYOUT);
    }
}

impl<T: Real, const R: usize, const C: usize> Deref for HeapMatrix<T, R, C> {
    type Target = SMatrix<T, R, C>;
    #[inline]
    fn deref(&self) -> &SMatrix<T, R, C> {
        // SAFETY: the block is initialised (`build`) and owned by `self`.
        unsafe { self.ptr.as_ref() }
    }
}

impl<T: Real, const R: usize, const C: usize> DerefMut for HeapMatrix<T, R, C> {
    #[inline]
    fn deref_mut(&mut self) -> &mut SMatrix<T, R, C> {
        // SAFETY: the block is initialised and owned by `self`, borrowed mutably here.
        unsafe { self.ptr.as_mut() }
    }
}

impl<T: Real, const R: usize, const C: usize> Clone for HeapMatrix<T, R, C> {
    #[inline]
    fn clone(&self) -> Self {
        Self::from_matrix(self)
    }
}

/// `a + b` entry by entry, in the block of `a` (the forward of a model on heap
/// activations, as `para!` writes it, adds them so).
impl<T: Real, const R: usize, const C: usize> core::ops::Add for HeapMatrix<T, R, C> {
    type Output = Self;
    #[inline]
    fn add(mut self, o: Self) -> Self {
        *self += &*o;
        self
    }
}

/// `a - b` entry by entry, in the block of `a`.
impl<T: Real, const R: usize, const C: usize> core::ops::Sub for HeapMatrix<T, R, C> {
    type Output = Self;
    #[inline]
    fn sub(mut self, o: Self) -> Self {
        *self -= &*o;
        self
    }
}

/// `-a` entry by entry, in its own block.
impl<T: Real, const R: usize, const C: usize> core::ops::Neg for HeapMatrix<T, R, C> {
    type Output = Self;
    #[inline]
    fn neg(mut self) -> Self {
        for v in self.as_mut_slice() {
            *v = -*v;
        }
        self
    }
}

/// `a s`, every entry scaled, in the block of `a` (forward-only code scales so; the rules
/// differentiate `h * s`).
impl<T: Real, const R: usize, const C: usize> core::ops::Mul<T> for HeapMatrix<T, R, C> {
    type Output = Self;
    #[inline]
    fn mul(mut self, s: T) -> Self {
        self.scale_mut(s);
        self
    }
}

/// `a / s`, every entry divided, in the block of `a`.
impl<T: Real, const R: usize, const C: usize> core::ops::Div<T> for HeapMatrix<T, R, C> {
    type Output = Self;
    #[inline]
    fn div(mut self, s: T) -> Self {
        for v in self.as_mut_slice() {
            *v /= s;
        }
        self
    }
}

macro_rules! scalar_times_heap {
    ($($t:ty),*) => {$(
        /// `s a`, every entry scaled, in the block of `a`.
        impl<const R: usize, const C: usize> core::ops::Mul<HeapMatrix<$t, R, C>> for $t {
            type Output = HeapMatrix<$t, R, C>;
            #[inline]
            fn mul(self, a: HeapMatrix<$t, R, C>) -> HeapMatrix<$t, R, C> {
                a * self
            }
        }
    )*};
}
scalar_times_heap!(f32, f64);

/// The matrix product `a b` (matrix-vector when `C = 1`) into a new block, by
/// [`crate::gemm`]: forward-only code in a `#[lens]` body multiplies so, and the product's
/// rule computes its value the same way.
impl<T: Real, const R: usize, const K: usize, const C: usize> core::ops::Mul<HeapMatrix<T, K, C>>
    for HeapMatrix<T, R, K>
{
    type Output = HeapMatrix<T, R, C>;
    #[inline]
    fn mul(self, b: HeapMatrix<T, K, C>) -> HeapMatrix<T, R, C> {
        product(&self, &b)
    }
}

/// Static weights times a heap batch, `w x`, into a new block, by [`crate::gemm`].
impl<T: Real, const R: usize, const K: usize, const C: usize> core::ops::Mul<HeapMatrix<T, K, C>>
    for SMatrix<T, R, K>
{
    type Output = HeapMatrix<T, R, C>;
    #[inline]
    fn mul(self, b: HeapMatrix<T, K, C>) -> HeapMatrix<T, R, C> {
        product(&self, &b)
    }
}

/// Heap weights times a static input (one example, or a small static batch), `w x`, into a
/// new block, by [`crate::gemm`].
impl<T: Real, const R: usize, const K: usize, const C: usize> core::ops::Mul<SMatrix<T, K, C>>
    for HeapMatrix<T, R, K>
{
    type Output = HeapMatrix<T, R, C>;
    #[inline]
    fn mul(self, b: SMatrix<T, K, C>) -> HeapMatrix<T, R, C> {
        product(&self, &b)
    }
}

/// `a b` in a new block (the value of a heap product, in `*` and in its rules). The operands
/// are static matrices or heap ones (through `Deref`): a heap batch times static weights too.
pub(crate) fn product<T: Real, const R: usize, const K: usize, const C: usize>(
    a: &SMatrix<T, R, K>,
    b: &SMatrix<T, K, C>,
) -> HeapMatrix<T, R, C> {
    let mut y = HeapMatrix::zeros();
    add_product(&mut y, a, b);
    y
}

/// `a b^T` in a new block (the change of a product's left operand, `d b^T`).
pub(crate) fn product_nt<T: Real, const R: usize, const K: usize, const C: usize>(
    a: &SMatrix<T, R, K>,
    b: &SMatrix<T, C, K>,
) -> HeapMatrix<T, R, C> {
    let mut y = HeapMatrix::zeros();
    add_product_nt(&mut y, a, b);
    y
}

/// `a^T b` in a new block (the change of a product's right operand, `a^T d`).
pub(crate) fn product_tn<T: Real, const R: usize, const K: usize, const C: usize>(
    a: &SMatrix<T, K, R>,
    b: &SMatrix<T, K, C>,
) -> HeapMatrix<T, R, C> {
    let mut y = HeapMatrix::zeros();
    add_product_tn(&mut y, a, b);
    y
}

/// `out += a b`.
pub(crate) fn add_product<T: Real, const R: usize, const K: usize, const C: usize>(
    out: &mut SMatrix<T, R, C>,
    a: &SMatrix<T, R, K>,
    b: &SMatrix<T, K, C>,
) {
    gemm(
        &View::col_major(a.as_slice(), R, K),
        &View::col_major(b.as_slice(), K, C).t(),
        &mut ViewMut::col_major(out.as_mut_slice(), R, C),
    );
}

/// `out += a b^T`.
pub(crate) fn add_product_nt<T: Real, const R: usize, const K: usize, const C: usize>(
    out: &mut SMatrix<T, R, C>,
    a: &SMatrix<T, R, K>,
    b: &SMatrix<T, C, K>,
) {
    gemm(
        &View::col_major(a.as_slice(), R, K),
        &View::col_major(b.as_slice(), C, K),
        &mut ViewMut::col_major(out.as_mut_slice(), R, C),
    );
}

/// `out += a^T b`.
pub(crate) fn add_product_tn<T: Real, const R: usize, const K: usize, const C: usize>(
    out: &mut SMatrix<T, R, C>,
    a: &SMatrix<T, K, R>,
    b: &SMatrix<T, K, C>,
) {
    gemm(
        &View::col_major(a.as_slice(), K, R).t(),
        &View::col_major(b.as_slice(), K, C).t(),
        &mut ViewMut::col_major(out.as_mut_slice(), R, C),
    );
}

impl<T: Real, const R: usize, const C: usize> PartialEq for HeapMatrix<T, R, C> {
    fn eq(&self, other: &Self) -> bool {
        **self == **other
    }
}

impl<T: Real, const R: usize, const C: usize> fmt::Debug for HeapMatrix<T, R, C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "HeapMatrix<{R}x{C}>{:?}", self.as_slice())
    }
}

impl<T: Real, const R: usize, const C: usize> Tangent for HeapMatrix<T, R, C> {
    #[inline]
    fn zeros() -> Self {
        Self::zeros()
    }
    #[inline]
    fn accumulate(&mut self, other: &Self) {
        **self += &**other;
    }
}

fn entries<T: Real, const R: usize, const C: usize>(m: &HeapMatrix<T, R, C>) -> &[T] {
    m.as_slice()
}

fn entries_mut<T: Real, const R: usize, const C: usize>(m: &mut HeapMatrix<T, R, C>) -> &mut [T] {
    m.as_mut_slice()
}

impl<T: Real, const R: usize, const C: usize> Flat<T> for HeapMatrix<T, R, C> {
    crate::tangent::single_slice!(T, entries, entries_mut);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arithmetic_matches_the_static_matrices() {
        let a = SMatrix::<f64, 3, 2>::from_fn(|i, j| i as f64 - 2.0 * j as f64 + 0.5);
        let b = SMatrix::<f64, 3, 2>::from_fn(|i, j| (i * j) as f64 + 1.5);
        let (ha, hb) = (HeapMatrix::from_matrix(&a), HeapMatrix::from_matrix(&b));
        assert_eq!(*(ha.clone() + hb.clone()), a + b);
        assert_eq!(*(ha.clone() - hb.clone()), a - b);
        assert_eq!(*(-ha.clone()), -a);
        assert_eq!(*ha.component_mul(&hb), a.component_mul(&b));
        assert_eq!(*ha.component_div(&hb), a.component_div(&b));
        // The operand may be a static matrix; the value is a heap block either way.
        let (p, q): (HeapMatrix<f64, 3, 2>, HeapMatrix<f64, 3, 2>) =
            (ha.component_mul(&b), ha.component_div(&b));
        assert_eq!((*p, *q), (a.component_mul(&b), a.component_div(&b)));
        assert_eq!(*(ha.clone() * 1.5), a * 1.5);
        assert_eq!(*(1.5 * ha.clone()), 1.5 * a);
        assert_eq!(*(ha.clone() / 4.0), a / 4.0);
        let m: HeapMatrix<f64, 3, 2> = ha.map(|x| x * x - 1.0);
        assert_eq!(*m, a.map(|x| x * x - 1.0));
        assert_eq!(
            *HeapMatrix::<f64, 3, 2>::repeat(0.25),
            SMatrix::<f64, 3, 2>::repeat(0.25)
        );
    }

    #[test]
    fn sum_mean_fill_and_transpose_match_nalgebras() {
        // Sizes below, at and past the eight partial sums, and not a multiple of eight.
        fn check<const R: usize, const C: usize>() {
            let m = SMatrix::<f64, R, C>::from_fn(|i, j| ((i * 31 + j * 17) % 23) as f64 - 11.3);
            let mut h = HeapMatrix::from_matrix(&m);
            let tol = 1e-12 * m.abs().sum().max(1.0);
            assert!((h.sum() - m.sum()).abs() <= tol, "sum of {R}x{C}");
            assert!((h.mean() - m.mean()).abs() <= tol, "mean of {R}x{C}");
            assert_eq!(*h.transpose(), m.transpose(), "transpose of {R}x{C}");
            h.fill(0.75);
            assert_eq!(*h, SMatrix::<f64, R, C>::repeat(0.75), "fill of {R}x{C}");
        }
        check::<1, 1>();
        check::<3, 5>();
        check::<8, 1>();
        check::<4, 4>();
        check::<17, 9>();
        check::<128, 33>();
        // Exactly: integers, whatever the order of the additions.
        let h = HeapMatrix::<f32, 37, 3>::from_fn(|i, j| (i + 40 * j) as f32);
        assert_eq!(
            h.sum(),
            (0..111)
                .map(|k| (k % 37 + 40 * (k / 37)) as f32)
                .sum::<f32>()
        );
    }

    #[test]
    fn a_dropped_block_is_reused_by_the_next_matrix_of_its_shape() {
        let a = HeapMatrix::<f32, 33, 7>::from_fn(|i, j| (i * 7 + j) as f32);
        let first = a.as_ptr();
        assert_eq!(a[(32, 6)], (32 * 7 + 6) as f32);
        drop(a);
        let b = HeapMatrix::<f32, 33, 7>::zeros();
        assert_eq!(b.as_ptr(), first, "the pool gave the block back");
        assert!(b.iter().all(|&v| v == 0.0), "a recycled block is zeroed");
        // Another shape does not take it.
        let c = HeapMatrix::<f64, 33, 7>::zeros();
        assert_ne!(c.as_ptr().cast::<u8>(), first.cast::<u8>());
    }

    #[test]
    fn values_round_trip_and_changes_add() {
        let m = SMatrix::<f64, 3, 2>::new(1.0, 2.0, 3.0, 4.0, 5.0, 6.0);
        let mut h = HeapMatrix::from_matrix(&m);
        assert_eq!(*h, m);
        assert_eq!(HeapMatrix::<f64, 3, 2>::from_column_slice(m.as_slice()), h);
        h.accumulate(&h.clone());
        assert_eq!(*h, m * 2.0);
        assert_eq!(Flat::<f64>::flat_len(&h), 6);
    }

    #[test]
    fn entries_written_once_fill_the_matrix_and_too_few_are_refused() {
        let h = HeapMatrix::<f64, 2, 3>::from_entries((0..6).map(f64::from));
        assert_eq!(h.as_slice(), &[0.0, 1.0, 2.0, 3.0, 4.0, 5.0]);
        let short = std::panic::catch_unwind(|| HeapMatrix::<f64, 2, 3>::from_entries([1.0; 5]));
        assert!(short.is_err());
    }

    #[test]
    fn matrices_dropped_on_another_thread_go_to_its_pool() {
        let h = HeapMatrix::<f32, 8, 8>::from_fn(|i, _| i as f32);
        let sum = std::thread::spawn(move || h.sum()).join().expect("thread");
        assert_eq!(sum, 8.0 * 28.0);
    }
}
