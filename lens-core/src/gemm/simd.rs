//! Hand-vectorised micro-kernels (AVX-512 and AVX2 with FMA) for `f32` and `f64`, chosen at
//! run time. Written with `core::arch` intrinsics: LLVM's own vectorisation of the portable
//! kernel, compiled for these features, kept the accumulators in memory.

use super::kernel::Micro;
use crate::Real;

/// Scalars with vectorised micro-kernels (`f32` and `f64`); a supertrait of [`Real`].
#[doc(hidden)]
pub trait SimdScalar: Copy + Sized {
    /// `tile = sum_{d < kc} a[d] b[d]^T` (`a[d]` the `MR = V * 64 / size_of::<Self>()`
    /// values from `a.0[d * a.1]`, `b[d]` the `NR` values from `b.0[d * b.1]`), column `j`
    /// of the tile at `out.0[j * out.1 ..]`, stored, or added if `out.2`.
    ///
    /// # Safety
    /// The CPU has AVX-512F.
    #[cfg(target_arch = "x86_64")]
    unsafe fn tile_avx512<const V: usize, const NR: usize>(
        a: (&[Self], usize),
        b: (&[Self], usize),
        kc: usize,
        out: (&mut [Self], usize, bool),
    );

    /// A transposing pack: `out[d * width + t] = src[t * rs + d]` for `t < n`, `d < kc`,
    /// and `0` for `n <= t < width`, in square blocks transposed in registers.
    ///
    /// # Safety
    /// The CPU has AVX-512F.
    #[cfg(target_arch = "x86_64")]
    #[allow(clippy::too_many_arguments)] // a strided source, the panel's shape, the panel
    unsafe fn transpose_pack_avx512(
        src: &[Self],
        rs: usize,
        n: usize,
        kc: usize,
        width: usize,
        out: &mut [Self],
    );

    /// The same with `MR = V * 32 / size_of::<Self>()`.
    ///
    /// # Safety
    /// The CPU has AVX2 and FMA.
    #[cfg(target_arch = "x86_64")]
    unsafe fn tile_avx2<const V: usize, const NR: usize>(
        a: (&[Self], usize),
        b: (&[Self], usize),
        kc: usize,
        out: (&mut [Self], usize, bool),
    );
}

/// One kernel body per (scalar, vector width); `$lanes` values per vector.
macro_rules! simd_tile {
    ($name:ident, $t:ty, $feat:literal, $lanes:literal, $vec:ty, $zero:ident, $load:ident,
     $splat:ident, $fma:ident, $addv:ident, $store:ident) => {
        #[cfg(target_arch = "x86_64")]
        #[target_feature(enable = $feat)]
        unsafe fn $name<const V: usize, const NR: usize>(
            (a, sa): (&[$t], usize),
            (b, sb): (&[$t], usize),
            kc: usize,
            (tile, ld, add): (&mut [$t], usize, bool),
        ) {
            use core::arch::x86_64::*;
            let mr = V * $lanes;
            assert!(
                ld >= mr
                    && (NR - 1) * ld + mr <= tile.len()
                    && (kc == 0
                        || ((kc - 1) * sa + mr <= a.len() && (kc - 1) * sb + NR <= b.len())),
                "micro-kernel panels of the wrong size"
            );
            let mut acc: [[$vec; V]; NR] = [[$zero(); V]; NR];
            for d in 0..kc {
                let (ap, bp) = (d * sa, d * sb);
                let mut av: [$vec; V] = [$zero(); V];
                for (v, x) in av.iter_mut().enumerate() {
                    // SAFETY: `ap + (v + 1) lanes <= (kc - 1) sa + mr <= a.len()` (asserted);
                    // the load is unaligned.
                    *x = unsafe { $load(a.as_ptr().add(ap + v * $lanes)) };
                }
                for (j, row) in acc.iter_mut().enumerate() {
                    // SAFETY: `bp + j < (kc - 1) sb + NR <= b.len()` (asserted).
                    let bj = $splat(unsafe { *b.get_unchecked(bp + j) });
                    for (r, &x) in row.iter_mut().zip(&av) {
                        *r = $fma(x, bj, *r);
                    }
                }
            }
            for (j, row) in acc.iter().enumerate() {
                for (v, &r) in row.iter().enumerate() {
                    // SAFETY: `j ld + (v + 1) lanes <= (NR - 1) ld + mr <= tile.len()`
                    // (asserted).
                    unsafe {
                        let at = tile.as_mut_ptr().add(j * ld + v * $lanes);
                        $store(at, if add { $addv($load(at), r) } else { r });
                    }
                }
            }
        }
    };
}

simd_tile!(
    f32_512,
    f32,
    "avx512f",
    16,
    __m512,
    _mm512_setzero_ps,
    _mm512_loadu_ps,
    _mm512_set1_ps,
    _mm512_fmadd_ps,
    _mm512_add_ps,
    _mm512_storeu_ps
);
simd_tile!(
    f64_512,
    f64,
    "avx512f",
    8,
    __m512d,
    _mm512_setzero_pd,
    _mm512_loadu_pd,
    _mm512_set1_pd,
    _mm512_fmadd_pd,
    _mm512_add_pd,
    _mm512_storeu_pd
);
simd_tile!(
    f32_256,
    f32,
    "avx2,fma",
    8,
    __m256,
    _mm256_setzero_ps,
    _mm256_loadu_ps,
    _mm256_set1_ps,
    _mm256_fmadd_ps,
    _mm256_add_ps,
    _mm256_storeu_ps
);
simd_tile!(
    f64_256,
    f64,
    "avx2,fma",
    4,
    __m256d,
    _mm256_setzero_pd,
    _mm256_loadu_pd,
    _mm256_set1_pd,
    _mm256_fmadd_pd,
    _mm256_add_pd,
    _mm256_storeu_pd
);

/// One transposing pack per scalar: `$lanes x $lanes` blocks, transposed by `log2($lanes)`
/// rounds of two-source permutations (round `s` swaps the off-diagonal `s x s` sub-blocks
/// of every `2s x 2s` block).
macro_rules! transpose_pack {
    ($name:ident, $t:ty, $lanes:literal, $vec:ty, $mask:ty, $zero:ident, $loadz:ident,
     $store:ident, $perm:ident, $idx:ident, $set_idx:ident) => {
        #[cfg(target_arch = "x86_64")]
        #[target_feature(enable = "avx512f")]
        unsafe fn $name(src: &[$t], rs: usize, n: usize, kc: usize, width: usize, out: &mut [$t]) {
            use core::arch::x86_64::*;
            assert!(
                n <= width
                    && out.len() >= kc * width
                    && (n == 0 || kc == 0 || (n - 1) * rs + kc <= src.len()),
                "transposing pack: panel or source of the wrong size"
            );
            // The permutation indices of each round: lanes with bit `s` clear keep their
            // own row's value in the low output and take the partner's in the high one.
            let mut lo = [[0 as $idx; $lanes]; 4];
            let mut hi = [[0 as $idx; $lanes]; 4];
            let mut rounds = 0;
            let mut s = $lanes / 2;
            while s > 0 {
                for l in 0..$lanes {
                    let (own, other) = (l & s == 0, $lanes as $idx);
                    lo[rounds][l] = if own {
                        l as $idx
                    } else {
                        other + (l - s) as $idx
                    };
                    hi[rounds][l] = if own {
                        (l + s) as $idx
                    } else {
                        other + l as $idx
                    };
                }
                rounds += 1;
                s /= 2;
            }
            let lo: [_; 4] = core::array::from_fn(|r| $set_idx(&lo[r]));
            let hi: [_; 4] = core::array::from_fn(|r| $set_idx(&hi[r]));
            let part = |k: usize| -> $mask {
                if k >= $lanes {
                    !0
                } else {
                    ((1u32 << k) - 1) as $mask
                }
            };
            for t0 in (0..width).step_by($lanes) {
                let keep = part(width - t0);
                for d0 in (0..kc).step_by($lanes) {
                    let deep = (kc - d0).min($lanes);
                    let mut rows = [$zero(); $lanes];
                    for (i, r) in rows.iter_mut().enumerate() {
                        if t0 + i < n {
                            // SAFETY: lanes `< deep` read `src[(t0 + i) rs + d0 ..][..deep]`,
                            // inside `(n - 1) rs + kc <= src.len()` (asserted); the others
                            // are masked off and not read.
                            *r =
                                unsafe { $loadz(part(deep), src.as_ptr().add((t0 + i) * rs + d0)) };
                        }
                    }
                    let mut s = $lanes / 2;
                    let mut round = 0;
                    while s > 0 {
                        for i in 0..$lanes {
                            if i & s == 0 {
                                let (a, b) = (rows[i], rows[i + s]);
                                rows[i] = $perm(a, lo[round], b);
                                rows[i + s] = $perm(a, hi[round], b);
                            }
                        }
                        round += 1;
                        s /= 2;
                    }
                    for (dd, r) in rows.iter().enumerate().take(deep) {
                        // SAFETY: the lanes kept are `t0 .. min(t0 + lanes, width)` of row
                        // `d0 + dd < kc`, inside `kc * width <= out.len()` (asserted).
                        unsafe { $store(out.as_mut_ptr().add((d0 + dd) * width + t0), keep, *r) };
                    }
                }
            }
        }
    };
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
fn idx16(v: &[u32; 16]) -> core::arch::x86_64::__m512i {
    // SAFETY: an unaligned load of 16 values from a 16-value array.
    unsafe { core::arch::x86_64::_mm512_loadu_si512(v.as_ptr().cast()) }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
fn idx8(v: &[u64; 8]) -> core::arch::x86_64::__m512i {
    // SAFETY: an unaligned load of 8 values from an 8-value array.
    unsafe { core::arch::x86_64::_mm512_loadu_si512(v.as_ptr().cast()) }
}

transpose_pack!(
    transpose_f32,
    f32,
    16,
    __m512,
    u16,
    _mm512_setzero_ps,
    _mm512_maskz_loadu_ps,
    _mm512_mask_storeu_ps,
    _mm512_permutex2var_ps,
    u32,
    idx16
);
transpose_pack!(
    transpose_f64,
    f64,
    8,
    __m512d,
    u8,
    _mm512_setzero_pd,
    _mm512_maskz_loadu_pd,
    _mm512_mask_storeu_pd,
    _mm512_permutex2var_pd,
    u64,
    idx8
);

macro_rules! simd_scalar {
    ($t:ty, $k512:ident, $k256:ident, $tp:ident) => {
        impl SimdScalar for $t {
            #[cfg(target_arch = "x86_64")]
            #[inline]
            unsafe fn transpose_pack_avx512(
                src: &[$t],
                rs: usize,
                n: usize,
                kc: usize,
                width: usize,
                out: &mut [$t],
            ) {
                // SAFETY: the caller guarantees AVX-512F.
                unsafe { $tp(src, rs, n, kc, width, out) }
            }

            #[cfg(target_arch = "x86_64")]
            #[inline]
            unsafe fn tile_avx512<const V: usize, const NR: usize>(
                a: (&[$t], usize),
                b: (&[$t], usize),
                kc: usize,
                out: (&mut [$t], usize, bool),
            ) {
                // SAFETY: the caller guarantees AVX-512F.
                unsafe { $k512::<V, NR>(a, b, kc, out) }
            }

            #[cfg(target_arch = "x86_64")]
            #[inline]
            unsafe fn tile_avx2<const V: usize, const NR: usize>(
                a: (&[$t], usize),
                b: (&[$t], usize),
                kc: usize,
                out: (&mut [$t], usize, bool),
            ) {
                // SAFETY: the caller guarantees AVX2 and FMA.
                unsafe { $k256::<V, NR>(a, b, kc, out) }
            }
        }
    };
}

simd_scalar!(f32, f32_512, f32_256, transpose_f32);
simd_scalar!(f64, f64_512, f64_256, transpose_f64);

/// The AVX-512 kernel with `V` vectors of rows and `NR` columns; a value exists only on a
/// CPU that has AVX-512F.
#[cfg(target_arch = "x86_64")]
#[derive(Clone, Copy, Debug)]
pub(super) struct Avx512<const V: usize, const NR: usize>(());

#[cfg(target_arch = "x86_64")]
impl<const V: usize, const NR: usize> Avx512<V, NR> {
    pub(super) fn detect() -> Option<Self> {
        crate::__cpu_has!("avx512f").then_some(Self(()))
    }
}

#[cfg(target_arch = "x86_64")]
impl<T: Real, const V: usize, const NR: usize> Micro<T> for Avx512<V, NR> {
    const MR: usize = V * 64 / size_of::<T>();
    const NR: usize = NR;

    #[inline]
    fn tile(self, a: (&[T], usize), b: (&[T], usize), kc: usize, out: (&mut [T], usize, bool)) {
        // SAFETY: `self` was made by `detect`, which found AVX-512F on this CPU.
        unsafe { T::tile_avx512::<V, NR>(a, b, kc, out) }
    }
}

/// The AVX2 kernel with `V` vectors of rows and `NR` columns; a value exists only on a CPU
/// that has AVX2 and FMA.
#[cfg(target_arch = "x86_64")]
#[derive(Clone, Copy, Debug)]
pub(super) struct Avx2<const V: usize, const NR: usize>(());

#[cfg(target_arch = "x86_64")]
impl<const V: usize, const NR: usize> Avx2<V, NR> {
    pub(super) fn detect() -> Option<Self> {
        (crate::__cpu_has!("avx2") && crate::__cpu_has!("fma")).then_some(Self(()))
    }
}

#[cfg(target_arch = "x86_64")]
impl<T: Real, const V: usize, const NR: usize> Micro<T> for Avx2<V, NR> {
    const MR: usize = V * 32 / size_of::<T>();
    const NR: usize = NR;

    #[inline]
    fn tile(self, a: (&[T], usize), b: (&[T], usize), kc: usize, out: (&mut [T], usize, bool)) {
        // SAFETY: `self` was made by `detect`, which found AVX2 and FMA on this CPU.
        unsafe { T::tile_avx2::<V, NR>(a, b, kc, out) }
    }
}

/// `reps` rounds of 24 independent 512-bit FMA chains (f32), every one from
/// `x = x * 0.5 + 0.5` starting at 0 (which converges to 1), summed: `16 * 24 * f(reps)`.
/// Nothing else runs in the loop, so its speed is the core's FMA peak.
///
/// # Safety
/// The CPU has AVX-512F.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
pub(super) unsafe fn fma_chains_avx512(reps: usize) -> f32 {
    use core::arch::x86_64::*;
    let half = _mm512_set1_ps(0.5);
    let mut acc = [_mm512_setzero_ps(); 24];
    for _ in 0..reps {
        for a in &mut acc {
            *a = _mm512_fmadd_ps(*a, half, half);
        }
    }
    let mut sum = _mm512_setzero_ps();
    for a in acc {
        sum = _mm512_add_ps(sum, a);
    }
    _mm512_reduce_add_ps(sum)
}
