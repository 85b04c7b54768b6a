//! Matrix products without allocation, for the batched fast paths of dense and convolution
//! layers.
//!
//! [`gemm`] computes `C += A Bt^T`: both operands are read as *panels* (a "wide" index, the
//! rows of `A` and of `Bt`, and a "deep" index, the shared one), so one trait, [`Panels`],
//! serves both, and an operand need not exist as a matrix in memory: the convolution's
//! patches are packed straight from the image (implicit im2col). The result goes to a
//! [`Sink`] tile by tile, so the convolution's input change is scattered straight back onto
//! the image. The blocking is the usual one (pack a block of `A` and a strip of `Bt`, run a
//! register-blocked micro-kernel), with packing buffers on the stack: nothing is allocated.
//! The micro-kernel is chosen once per call from the CPU's features (AVX-512, AVX2 with FMA,
//! or portable code).
//!
//! ```
//! use paralens::gemm::{gemm, View, ViewMut};
//! // C (2x2) += A (2x3) B (3x2), all column-major.
//! let a = [1.0, 4.0, 2.0, 5.0, 3.0, 6.0]; // [[1, 2, 3], [4, 5, 6]]
//! let b = [1.0, 0.0, 1.0, 0.0, 1.0, 0.0]; // [[1, 0], [0, 1], [1, 0]]
//! let mut c = [0.0f64; 4];
//! gemm(
//!     &View::col_major(&a, 2, 3),
//!     &View::col_major(&b, 3, 2).t(), // Bt = B^T
//!     &mut ViewMut::col_major(&mut c, 2, 2),
//! );
//! assert_eq!(c, [4.0, 10.0, 2.0, 5.0]); // [[4, 2], [10, 5]]
//! ```

mod kernel;
mod simd;
mod view;

#[doc(hidden)]
pub use simd::SimdScalar;

pub use view::{View, ViewMut};

use crate::Real;
#[cfg(feature = "std")]
use core::cell::Cell;
#[cfg(feature = "std")]
use core::sync::atomic::{AtomicU8, AtomicUsize, Ordering};

/// A matrix read in panels: `X(wide, deep)` for `wide < wide()` and `deep < deep()`.
pub trait Panels<T> {
    /// The extent of the wide index (rows of `A`, or columns of `B`).
    fn wide(&self) -> usize;
    /// The extent of the deep index (the index summed over).
    fn deep(&self) -> usize;
    /// Packs a panel: `out[d * width + t] = X(w0 + t, k0 + d)` for `t < n` and `d < kc`,
    /// and `0` for `n <= t < width`. The caller guarantees `w0 + n <= wide()`,
    /// `k0 + kc <= deep()`, `n <= width` and `out.len() == width * kc`.
    fn pack(&self, w0: usize, n: usize, width: usize, k0: usize, kc: usize, out: &mut [T]);

    /// The same panel without a copy, if the operand holds it in that form: `(values,
    /// step)` with `X(w0 + t, k0 + d) = values[d * step + t]` for `t < width` (so only a
    /// full panel, `n == width`, qualifies) and `d < kc`. The default is `None` (always
    /// packed).
    fn strip(
        &self,
        w0: usize,
        n: usize,
        width: usize,
        k0: usize,
        kc: usize,
    ) -> Option<(&[T], usize)> {
        let _ = (w0, n, width, k0, kc);
        None
    }
}

/// Where the product goes, tile by tile.
pub trait Sink<T> {
    /// The rows of `C`.
    fn rows(&self) -> usize;
    /// The columns of `C`.
    fn cols(&self) -> usize;
    /// Adds a tile: `C(i0 + i, j0 + j) += tile[j * ld + i]` for `i < m`, `j < n`.
    #[allow(clippy::too_many_arguments)] // a tile and where it goes
    fn add_tile(&mut self, i0: usize, j0: usize, m: usize, n: usize, tile: &[T], ld: usize);

    /// The result as a column-major slice and its column stride, if it is one: whole tiles
    /// are then added straight into it by the micro-kernel. The default is `None` (every
    /// tile goes through [`Sink::add_tile`]).
    fn col_major(&mut self) -> Option<(&mut [T], usize)> {
        None
    }

    /// Adds a tile given row by row: `C(i0 + i, j0 + j) += tile[i * ld + j]` for `i < m`,
    /// `j < n` (what a product computed transposed produces). The default goes through
    /// [`Sink::add_tile`] one column at a time.
    #[allow(clippy::too_many_arguments)] // a tile and where it goes
    fn add_tile_t(&mut self, i0: usize, j0: usize, m: usize, n: usize, tile: &[T], ld: usize)
    where
        T: Real,
    {
        let mut col = [T::zero(); 64];
        for j in 0..n {
            for i0b in (0..m).step_by(64) {
                let mb = 64.min(m - i0b);
                for (i, v) in col[..mb].iter_mut().enumerate() {
                    *v = tile[(i0b + i) * ld + j];
                }
                self.add_tile(i0 + i0b, j0 + j, mb, 1, &col[..mb], mb);
            }
        }
    }
}

/// `dst.copy_from_slice(src)` for the short runs packing copies (a few to a few dozen
/// values): eight at a time as fixed-size moves, which the compiler inlines, where
/// `copy_from_slice` of a run-time length calls `memcpy` (measured: packing dominated the
/// convolutions through that call).
///
/// ```
/// let mut dst = [0.0f32; 11];
/// paralens::gemm::copy_short(&mut dst, &[1.0; 11]);
/// assert_eq!(dst, [1.0; 11]);
/// ```
///
/// # Panics
/// If the lengths differ.
#[inline(always)]
pub fn copy_short<T: Copy>(dst: &mut [T], src: &[T]) {
    assert_eq!(dst.len(), src.len(), "copy_short: lengths differ");
    let mut d = dst.chunks_exact_mut(8);
    let mut s = src.chunks_exact(8);
    for (a, b) in (&mut d).zip(&mut s) {
        let b: &[T; 8] = b.try_into().expect("chunks of 8");
        let a: &mut [T; 8] = a.try_into().expect("chunks of 8");
        *a = *b;
    }
    for (a, b) in d.into_remainder().iter_mut().zip(s.remainder()) {
        *a = *b;
    }
}

/// Runs `reps` rounds of 24 independent chains of 512-bit f32 multiply-adds (`16 * 24 *
/// reps` multiply-adds, nothing else) and returns their sum, or `None` on a CPU without
/// AVX-512F. Timing it measures the core's multiply-add peak, the figure the benchmarks
/// compare their products with (`docs/BENCHMARKS.md`): the nominal clock in `/proc/cpuinfo`
/// is not the clock the core runs at.
///
/// ```
/// if let Some(sum) = paralens::gemm::fma_peak_probe(64) {
///     // Each chain runs x <- x / 2 + 1 / 2 from 0: 1 - 2^-64 rounds to 1 in f32.
///     assert_eq!(sum, 16.0 * 24.0);
/// }
/// ```
#[must_use]
pub fn fma_peak_probe(reps: usize) -> Option<f32> {
    #[cfg(target_arch = "x86_64")]
    if crate::__cpu_has!("avx512f") {
        // SAFETY: this CPU has AVX-512F (`__cpu_has!` just above: detected, or required by the build).
        return Some(unsafe { simd::fma_chains_avx512(reps) });
    }
    let _ = reps;
    None
}

/// `C += A Bt^T`: `C(i, j) += sum_p A(i, p) Bt(j, p)`.
///
/// # Panics
/// If the shapes disagree (`A` is `m x k`, `Bt` is `n x k`, `C` must be `m x n`).
pub fn gemm<T: Real, A: Panels<T>, B: Panels<T>, C: Sink<T>>(a: &A, bt: &B, c: &mut C) {
    check(a, bt, c);
    if a.wide() == 0 || bt.wide() == 0 || a.deep() == 0 {
        return;
    }
    kernel::run(Kernel::current(), a, bt, c);
}

fn check<T, A: Panels<T>, B: Panels<T>, C: Sink<T>>(a: &A, bt: &B, c: &C) {
    assert!(
        a.deep() == bt.deep() && c.rows() == a.wide() && c.cols() == bt.wide(),
        "gemm: A is {}x{}, Bt is {}x{}, C is {}x{}",
        a.wide(),
        a.deep(),
        bt.wide(),
        bt.deep(),
        c.rows(),
        c.cols()
    );
}

/// The micro-kernels, by instruction set.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kernel {
    /// AVX-512F: two 512-bit vectors by twelve columns (one by sixteen for products with
    /// few rows).
    Avx512,
    /// AVX2 with FMA: two 256-bit vectors by six columns.
    Avx2Fma,
    /// Plain Rust, vectorised by the compiler for the build's target (SSE2 on x86-64).
    Portable,
}

impl Kernel {
    /// The best kernel this CPU runs (what [`gemm`] uses).
    #[must_use]
    #[inline]
    pub fn best() -> Self {
        // Detected once and kept: a step of a small model asks several times, and the
        // standard library's cached detection is three feature tests a call. Without `std`
        // the detection is the build's target features, a constant.
        #[cfg(feature = "std")]
        {
            match BEST.load(Ordering::Relaxed) {
                1 => Self::Avx512,
                2 => Self::Avx2Fma,
                3 => Self::Portable,
                _ => {
                    let k = kernel::level();
                    BEST.store(k.code(), Ordering::Relaxed);
                    k
                }
            }
        }
        #[cfg(not(feature = "std"))]
        kernel::level()
    }

    /// `BEST`'s code for the kernel (0 is "not detected yet").
    #[cfg(feature = "std")]
    fn code(self) -> u8 {
        match self {
            Self::Avx512 => 1,
            Self::Avx2Fma => 2,
            Self::Portable => 3,
        }
    }

    /// The kernel [`gemm`] uses on this thread: the one [`with_kernel`] forces, else
    /// [`Kernel::best`].
    #[cfg(feature = "std")]
    #[must_use]
    #[inline]
    pub fn current() -> Self {
        // The thread-local choice is read only while some thread forces one: a thread that
        // forces has counted itself before its own reads, so it always sees its choice.
        if FORCING.load(Ordering::Relaxed) == 0 {
            return Self::best();
        }
        FORCED.with(Cell::get).unwrap_or_else(Self::best)
    }

    /// The kernel [`gemm`] uses: [`Kernel::best`] (without `std` there are no threads to
    /// force one on).
    #[cfg(not(feature = "std"))]
    #[must_use]
    pub fn current() -> Self {
        Self::best()
    }

    /// Every kernel, widest first.
    pub const ALL: [Self; 3] = [Self::Avx512, Self::Avx2Fma, Self::Portable];

    /// Whether this CPU runs the kernel.
    #[must_use]
    pub fn available(self) -> bool {
        matches!(
            (self, Self::best()),
            (Self::Portable, _) | (_, Self::Avx512) | (Self::Avx2Fma, Self::Avx2Fma)
        )
    }
}

/// [`Kernel::best`] once detected (see [`Kernel::code`]; 0 before).
#[cfg(feature = "std")]
static BEST: AtomicU8 = AtomicU8::new(0);

/// How many calls of [`with_kernel`] are running, on all threads: while none is,
/// [`Kernel::current`] is [`Kernel::best`] without reading the thread-local choice.
#[cfg(feature = "std")]
static FORCING: AtomicUsize = AtomicUsize::new(0);

#[cfg(feature = "std")]
std::thread_local! {
    /// The kernel forced on this thread by [`with_kernel`], if any.
    static FORCED: Cell<Option<Kernel>> = const { Cell::new(None) };
}

/// Runs `f` with every product on this thread (those inside layers included: `Dense`,
/// the convolution's matrix-product path) computed by `kernel`, packing included, and every
/// other runtime choice of instruction set following it: the optimizers' update loops take
/// the same instruction set, and the convolution's direct kernels (AVX-512) run only under
/// [`Kernel::Avx512`]. `None`, without running `f`, if this CPU lacks the kernel. For tests
/// and benchmarks that compare the paths, e.g. the AVX2 path measured on an AVX-512
/// machine. The previous choice is put back when `f` returns or panics.
///
/// ```
/// use paralens::gemm::{Kernel, with_kernel};
/// let inside = with_kernel(Kernel::Portable, Kernel::current);
/// assert_eq!(inside, Some(Kernel::Portable)); // every CPU runs the portable kernel
/// assert_eq!(Kernel::current(), Kernel::best()); // and the choice ends with the call
/// ```
#[cfg(feature = "std")]
pub fn with_kernel<R>(kernel: Kernel, f: impl FnOnce() -> R) -> Option<R> {
    /// Puts the previous choice back, also on unwinding.
    struct Restore(Option<Kernel>);
    impl Drop for Restore {
        fn drop(&mut self) {
            FORCED.with(|c| c.set(self.0));
            FORCING.fetch_sub(1, Ordering::Relaxed);
        }
    }
    if !kernel.available() {
        return None;
    }
    let _restore = {
        FORCING.fetch_add(1, Ordering::Relaxed);
        Restore(FORCED.with(|c| c.replace(Some(kernel))))
    };
    Some(f())
}

/// [`gemm`] with a chosen kernel (for tests and benchmarks that compare kernels).
///
/// ```
/// use paralens::gemm::{Kernel, View, ViewMut, gemm_with};
/// let (a, b) = ([1.0f64, 2.0], [3.0f64, 4.0]);
/// let mut c = [0.0f64];
/// // 1x2 times 2x1, with the portable kernel, which every CPU runs.
/// let r = gemm_with(
///     Kernel::Portable,
///     &View::col_major(&a, 1, 2),
///     &View::col_major(&b, 2, 1).t(),
///     &mut ViewMut::col_major(&mut c, 1, 1),
/// );
/// assert!(r.is_ok());
/// assert_eq!(c, [11.0]);
/// ```
///
/// # Errors
/// The kernel is not available on this CPU.
///
/// # Panics
/// As [`gemm`].
#[cfg(feature = "std")]
pub fn gemm_with<T: Real, A: Panels<T>, B: Panels<T>, C: Sink<T>>(
    kernel: Kernel,
    a: &A,
    bt: &B,
    c: &mut C,
) -> Result<(), Kernel> {
    with_kernel(kernel, || gemm(a, bt, c)).ok_or(kernel)
}

#[cfg(all(test, feature = "std"))]
mod tests {
    use super::*;
    use std::sync::Barrier;

    /// A kernel forced on one thread is that thread's choice alone, while it is forced and
    /// nested, and every thread reads the best one again once it ends.
    #[test]
    fn a_forced_kernel_is_the_forcing_threads_alone() {
        let best = Kernel::best();
        let (inside, outside) = (Barrier::new(2), Barrier::new(2));
        std::thread::scope(|s| {
            s.spawn(|| {
                let seen = with_kernel(Kernel::Portable, || {
                    inside.wait();
                    let nested = with_kernel(Kernel::Portable, Kernel::current);
                    outside.wait();
                    (Kernel::current(), nested)
                });
                assert_eq!(seen, Some((Kernel::Portable, Some(Kernel::Portable))));
                assert_eq!(Kernel::current(), best);
            });
            inside.wait();
            // The other thread is inside `with_kernel`: this one still reads the best.
            assert_eq!(Kernel::current(), best);
            outside.wait();
        });
        assert_eq!(Kernel::current(), best);
    }
}
