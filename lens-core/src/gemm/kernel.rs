//! Blocking, packing and the register-blocked micro-kernels, one per instruction set.

use super::{Kernel, Panels, Sink};
use crate::Real;
use core::mem::MaybeUninit;

/// Depth of a packed block: `KC` deep steps of `A`'s and `Bt`'s panels stay in L1/L2.
const KC: usize = 256;
/// Rows of `A` packed at once at full depth; a multiple of every kernel's `MR`.
const MC: usize = 96;
/// Upper bounds of every kernel's `MR` and `NR`.
const MR_MAX: usize = 32;
const NR_MAX: usize = 16;

/// The best kernel this CPU runs (the standard library caches the detection).
pub(super) fn level() -> Kernel {
    #[cfg(target_arch = "x86_64")]
    {
        if crate::__cpu_has!("avx512f") {
            return Kernel::Avx512;
        }
        if crate::__cpu_has!("avx2") && crate::__cpu_has!("fma") {
            return Kernel::Avx2Fma;
        }
    }
    Kernel::Portable
}

/// A micro-kernel: `tile (MR x NR, column-major) = sum_{d < kc} a[d] b[d]^T` over panels
/// given as `(values, step)`: `a[d]` is the `MR` values from `a.0[d * a.1]`, `b[d]` the `NR`
/// values from `b.0[d * b.1]` (a packed panel has step `MR` or `NR`; a column-major
/// operand read in place has its column stride). The tile goes to `out = (values, ld,
/// add)`: column `j` at `values[j * ld ..]`, stored, or added if `add` (straight into a
/// column-major result).
pub(super) trait Micro<T>: Copy {
    const MR: usize;
    const NR: usize;
    fn tile(self, a: (&[T], usize), b: (&[T], usize), kc: usize, out: (&mut [T], usize, bool));
}

/// Runs the product with `kernel`, which the caller checked is available.
pub(super) fn run<T: Real, A: Panels<T>, B: Panels<T>, C: Sink<T>>(
    kernel: Kernel,
    a: &A,
    b: &B,
    c: &mut C,
) {
    #[cfg(target_arch = "x86_64")]
    {
        use super::simd::{Avx2, Avx512};
        let (m, n) = (a.wide(), b.wide());
        if kernel == Kernel::Avx512 {
            let wide = Avx512::<2, 12>::detect().expect("checked by the caller");
            // One vector of rows against sixteen columns where a two-vector tile would be
            // half empty (16 or fewer rows: the output channels of a small convolution),
            // and on ties, where it keeps a product untransposed more often.
            let narrow = Avx512::<1, 16>::detect().expect("checked by the caller");
            if waste::<T, _>(narrow, m, n) <= waste::<T, _>(wide, m, n) {
                return oriented(narrow, a, b, c);
            }
            return oriented(wide, a, b, c);
        }
        if kernel == Kernel::Avx2Fma {
            return oriented(
                Avx2::<2, 6>::detect().expect("checked by the caller"),
                a,
                b,
                c,
            );
        }
    }
    portable(a, b, c);
}

/// The portable kernel, whatever the CPU.
fn portable<T: Real, A: Panels<T>, B: Panels<T>, C: Sink<T>>(a: &A, b: &B, c: &mut C) {
    if size_of::<T>() == 4 {
        oriented(Portable::<8, 6>, a, b, c);
    } else {
        oriented(Portable::<4, 6>, a, b, c);
    }
}

/// Kernel slots spent on a product (tiles times tile size, in the better orientation).
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
fn waste<T, K: Micro<T>>(_: K, m: usize, n: usize) -> usize {
    slots::<T, K>(m, n).min(slots::<T, K>(n, m))
}

/// Kernel slots spent on an `m x n` result: whole tiles.
fn slots<T, K: Micro<T>>(m: usize, n: usize) -> usize {
    m.div_ceil(K::MR) * K::MR * n.div_ceil(K::NR) * K::NR
}

/// Picks the orientation that wastes the fewest kernel slots on partial tiles: `C = A Bt^T`
/// or, swapping the operands, `C^T = Bt A^T` written through a transposing sink.
fn oriented<T, K, A, B, C>(k: K, a: &A, b: &B, c: &mut C)
where
    T: Real,
    K: Micro<T>,
    A: Panels<T>,
    B: Panels<T>,
    C: Sink<T>,
{
    let (m, n) = (a.wide(), b.wide());
    if slots::<T, K>(n, m) < slots::<T, K>(m, n) {
        blocked(k, b, a, &mut Transposed(c));
    } else {
        blocked(k, a, b, c);
    }
}

/// A sink seen transposed.
struct Transposed<'a, C>(&'a mut C);

impl<T: Real, C: Sink<T>> Sink<T> for Transposed<'_, C> {
    fn rows(&self) -> usize {
        self.0.cols()
    }

    fn cols(&self) -> usize {
        self.0.rows()
    }

    #[inline]
    fn add_tile(&mut self, i0: usize, j0: usize, m: usize, n: usize, tile: &[T], ld: usize) {
        self.0.add_tile_t(j0, i0, n, m, tile, ld);
    }

    #[inline]
    fn add_tile_t(&mut self, i0: usize, j0: usize, m: usize, n: usize, tile: &[T], ld: usize) {
        self.0.add_tile(j0, i0, n, m, tile, ld);
    }
}

/// The loop nest: for each depth block, each block of `MC` rows of `A` (packed once), each
/// strip of `NR` rows of `Bt` (packed once per row block), each `MR` strip of the packed
/// block: one micro-kernel call, one tile to the sink. The packing buffers are on the stack,
/// and only the part a block uses is initialised: zeroing all 112 KB of them on every call
/// was the largest memset of an MNIST training step, for products that use a few KB.
fn blocked<T, K, A, B, C>(k: K, a: &A, b: &B, c: &mut C)
where
    T: Real,
    K: Micro<T>,
    A: Panels<T>,
    B: Panels<T>,
    C: Sink<T>,
{
    let (mr, nr) = (K::MR, K::NR);
    debug_assert!(mr <= MR_MAX && nr <= NR_MAX && MC.is_multiple_of(mr));
    let (m, n, depth) = (a.wide(), b.wide(), a.deep());
    let mut apack_buf = [const { MaybeUninit::<T>::uninit() }; KC * MC];
    let mut bpack_buf = [const { MaybeUninit::<T>::uninit() }; KC * NR_MAX];
    // How much of each buffer is initialised: a part is zeroed once per call, the first
    // time a pack needs it, and stays initialised (a pack only writes values). Parts that
    // only ever hold strips read in place are never touched.
    let (mut a_init, mut b_init) = (0, 0);
    let mut tile = [T::zero(); MR_MAX * NR_MAX];
    for k0 in (0..depth).step_by(KC) {
        let kc = KC.min(depth - k0);
        // A short depth leaves most of the A buffer free: take more rows per block, so
        // that the strips of Bt are packed fewer times (a small convolution's kernel was
        // packed once per 96 positions, as often as the product used it).
        let rows = (KC * MC / kc / mr) * mr;
        for i0 in (0..m).step_by(rows) {
            let mc = rows.min(m - i0);
            // Strips the operand holds in panel form are read in place, the others packed.
            for s in (0..mc).step_by(mr) {
                let ms = mr.min(mc - s);
                if a.strip(i0 + s, ms, mr, k0, kc).is_none() {
                    let apack = initialised(&mut apack_buf, &mut a_init, (s + mr) * kc);
                    a.pack(i0 + s, ms, mr, k0, kc, &mut apack[s * kc..]);
                }
            }
            let apack = assume_init(&apack_buf[..a_init]);
            for j0 in (0..n).step_by(nr) {
                let nn = nr.min(n - j0);
                let bp = match b.strip(j0, nn, nr, k0, kc) {
                    Some(strip) => strip,
                    None => {
                        let bpack = initialised(&mut bpack_buf, &mut b_init, nr * kc);
                        b.pack(j0, nn, nr, k0, kc, bpack);
                        (&*bpack, nr)
                    }
                };
                for s in (0..mc).step_by(mr) {
                    let ms = mr.min(mc - s);
                    let ap = a
                        .strip(i0 + s, ms, mr, k0, kc)
                        .unwrap_or_else(|| (&apack[s * kc..(s + mr) * kc], mr));
                    // A whole tile of a column-major result is added in place (measured: the
                    // round trip through the tile buffer was a tenth of a dense layer's
                    // reverse, whose weight change is a product only 32 deep).
                    if ms == mr
                        && nn == nr
                        && let Some((cm, ld)) = c.col_major()
                    {
                        k.tile(ap, bp, kc, (&mut cm[i0 + s + j0 * ld..], ld, true));
                        continue;
                    }
                    let t = &mut tile[..mr * nr];
                    k.tile(ap, bp, kc, (&mut *t, mr, false));
                    c.add_tile(i0 + s, j0, ms, nn, t, mr);
                }
            }
        }
    }
}

/// The first `len` entries of `buf` as initialised values, where `buf[..*init]` already
/// is: the entries from `*init` to `len` are zeroed (once), then `*init` covers them.
#[inline]
fn initialised<'b, T: Real>(
    buf: &'b mut [MaybeUninit<T>],
    init: &mut usize,
    len: usize,
) -> &'b mut [T] {
    if len > *init {
        for x in &mut buf[*init..len] {
            x.write(T::zero());
        }
        *init = len;
    }
    let part = &mut buf[..len];
    // SAFETY: every entry of `part` is initialised: those before the old `*init` by the
    // caller's earlier calls (the invariant `*init` records, and a pack only writes values),
    // the rest just above; `MaybeUninit<T>` has the layout of `T`, so the slice of one is a
    // slice of the other (as `slice_assume_init_mut` would give). Tested by every product of
    // `tests/gemm.rs`, which reads these buffers.
    unsafe { &mut *(part as *mut [MaybeUninit<T>] as *mut [T]) }
}

/// `buf` as values: the caller passes only the prefix [`initialised`] has covered.
#[inline]
fn assume_init<T: Real>(buf: &[MaybeUninit<T>]) -> &[T] {
    // SAFETY: the caller passes `buf[..init]`, every entry of which was written by
    // `initialised` or by a pack into the slice it returned; layouts as in `initialised`.
    unsafe { &*(buf as *const [MaybeUninit<T>] as *const [T]) }
}

/// Plain Rust, `MR x NR` accumulators, separate multiply and add (the baseline has no FMA,
/// and `mul_add` without it is a library call). LLVM vectorises it with SSE2.
#[derive(Clone, Copy, Debug)]
pub(super) struct Portable<const MR: usize, const NR: usize>;

impl<T: Real, const MR: usize, const NR: usize> Micro<T> for Portable<MR, NR> {
    const MR: usize = MR;
    const NR: usize = NR;

    #[inline]
    fn tile(
        self,
        (a, sa): (&[T], usize),
        (b, sb): (&[T], usize),
        kc: usize,
        (tile, ld, add): (&mut [T], usize, bool),
    ) {
        let mut acc = [[T::zero(); MR]; NR];
        for d in 0..kc {
            let (ap, bp) = (&a[d * sa..d * sa + MR], &b[d * sb..d * sb + NR]);
            for (row, &bj) in acc.iter_mut().zip(bp) {
                for (r, &ai) in row.iter_mut().zip(ap) {
                    *r += ai * bj;
                }
            }
        }
        for (col, out) in acc.iter().zip(tile.chunks_mut(ld)) {
            for (&v, o) in col.iter().zip(out) {
                *o = if add { *o + v } else { v };
            }
        }
    }
}
