//! The direct convolution's AVX-512 kernels (the shifted product, the gather of tap rows,
//! the transposed convolution by rows, and the two parameter-change sums), for `f32` and
//! `f64`, in `core::arch` intrinsics (as `gemm`'s micro-kernels, so that the accumulators
//! stay in registers).

/// Scalars with the direct convolution's kernels (`f32` and `f64`); a supertrait of
/// [`crate::Real`].
#[doc(hidden)]
pub trait DirectScalar: Copy + Sized {
    /// Values per 512-bit vector.
    const VECTOR: usize;

    /// Positions in the lanes: `out[ooff[m] + j] = sum_k a[k * MR + m] * x[xoff[k] + j]`
    /// (`a` packed tap by tap) for `m < MR`, `j < NV * VECTOR`.
    ///
    /// # Safety
    /// The CPU has AVX-512F; `xoff[k] + NV * VECTOR <= x.len()` for every `k`, and
    /// `ooff[m] + NV * VECTOR <= out.len()` for every `m` (the caller checks these bounds
    /// once per pass, not once per tile).
    #[cfg(target_arch = "x86_64")]
    unsafe fn shifted<const MR: usize, const NV: usize>(
        a: &[Self],
        x: &[Self],
        xoff: &[usize],
        out: &mut [Self],
        ooff: &[usize; MR],
    );

    /// Sums the tap rows of an input channel's change back onto its rows `y0 .. y0 + n`
    /// (`rows = (y0, n)`, `n <= 4`), with `shape = (oh, ow, pad, w)`:
    /// `out[g * w + x] = sum over taps r of t[r * row + oy * ow + ox]` with
    /// `(a, b) = taps[r]`, `oy = y0 + g + pad - a`, `ox = x + pad - b`, the terms with
    /// `(oy, ox)` outside `oh x ow` left out; `x < w`.
    ///
    /// # Safety
    /// The CPU has AVX-512F.
    #[cfg(target_arch = "x86_64")]
    #[allow(clippy::too_many_arguments)] // the rows, their taps and shape, the window
    unsafe fn gather(
        t: &[Self],
        row: usize,
        taps: &[(usize, usize)],
        shape: (usize, usize, usize, usize),
        rows: (usize, usize),
        out: &mut [Self],
    );

    /// A transposed convolution by rows, for one input channel and `R` rows of its change,
    /// with `shape = (co, oh, ow)` and `offsets = (y_off, x_off)`:
    /// `tile[i * NV + x] = sum over o < co, a < K, b < K of w[(o K + b) K + a] *
    /// dy[o oh ow + oy ow + ox]` with `oy = y_off + i + a`, `ox = x_off + x + b` (zero where
    /// `(oy, ox)` is outside `oh x ow`), `x < NVR * VECTOR`, `NV = NVR * VECTOR`. Each row of
    /// the output change is loaded once per `(o, b)` and feeds `K` rows of the tile.
    ///
    /// # Safety
    /// The CPU has AVX-512F.
    #[cfg(target_arch = "x86_64")]
    #[allow(clippy::too_many_arguments)] // the change, its shape and offsets, the weights
    unsafe fn rows<const K: usize, const R: usize, const NVR: usize>(
        dy: &[Self],
        shape: (usize, usize, usize),
        offsets: (isize, isize),
        w: &[Self],
        tile: &mut [Self],
    );

    /// Positions in the lanes, summed: `sums[(m * NR + t) * VECTOR + l] += sum over
    /// `p = l, l + VECTOR, ... < n` of `d[m * ds + p] * x[xoff[t] + p]` for `m < MR`,
    /// `t < NR` (`n` a multiple of `VECTOR`; the lanes are summed by the caller).
    ///
    /// # Safety
    /// The CPU has AVX-512F; `(MR - 1) * ds + n <= d.len()` and `xoff[t] + n <= x.len()`.
    #[cfg(target_arch = "x86_64")]
    #[allow(clippy::too_many_arguments)] // two operands with their offsets, and the sums
    unsafe fn correlate<const MR: usize, const NR: usize>(
        d: &[Self],
        ds: usize,
        x: &[Self],
        xoff: &[usize; NR],
        n: usize,
        sums: &mut [Self],
    );

    /// Channels in the lanes, with `sums = (rows, cols, xr, xs)`:
    /// `g[k * MV * VECTOR + c] += sum_{r < rows, j < cols}
    /// d[(r * cols + j) * ds + c] * x[xoff[k] + r * xr + j * xs]` for `k < KR`,
    /// `c < MV * VECTOR`.
    ///
    /// # Safety
    /// The CPU has AVX-512F.
    #[cfg(target_arch = "x86_64")]
    #[allow(clippy::too_many_arguments)] // two operands, their strides and the sums
    unsafe fn lanes<const MV: usize, const KR: usize>(
        d: &[Self],
        ds: usize,
        x: &[Self],
        xoff: &[usize],
        sums: (usize, usize, usize, usize),
        g: &mut [Self],
    );
}

macro_rules! direct_kernels {
    ($t:ty, $lanes:literal, $shifted:ident, $gather:ident, $rows:ident, $correlate:ident,
     $lanes_fn:ident, $vec:ty, $mask:ty, $zero:ident, $load:ident, $loadz:ident, $splat:ident,
     $fma:ident, $add:ident, $store:ident, $mstore:ident) => {
        #[cfg(target_arch = "x86_64")]
        #[target_feature(enable = "avx512f")]
        unsafe fn $shifted<const MR: usize, const NV: usize>(
            a: &[$t],
            x: &[$t],
            xoff: &[usize],
            out: &mut [$t],
            ooff: &[usize; MR],
        ) {
            use core::arch::x86_64::*;
            assert!(
                a.len() == xoff.len() * MR,
                "shifted kernel: weights of the wrong size"
            );
            debug_assert!(xoff.iter().all(|&o| o + NV * $lanes <= x.len()));
            debug_assert!(ooff.iter().all(|&o| o + NV * $lanes <= out.len()));
            let mut acc: [[$vec; NV]; MR] = [[$zero(); NV]; MR];
            for (ak, &xo) in a.chunks_exact(MR).zip(xoff) {
                let mut xv: [$vec; NV] = [$zero(); NV];
                for (v, r) in xv.iter_mut().enumerate() {
                    // SAFETY: `xo + NV lanes <= x.len()` (the caller's contract).
                    *r = unsafe { $load(x.as_ptr().add(xo + v * $lanes)) };
                }
                for (row, &am) in acc.iter_mut().zip(ak) {
                    let am = $splat(am);
                    for (r, &xj) in row.iter_mut().zip(&xv) {
                        *r = $fma(xj, am, *r);
                    }
                }
            }
            for (row, &o) in acc.iter().zip(ooff) {
                for (v, &r) in row.iter().enumerate() {
                    // SAFETY: `o + NV lanes <= out.len()` (the caller's contract).
                    unsafe { $store(out.as_mut_ptr().add(o + v * $lanes), r) };
                }
            }
        }

        #[cfg(target_arch = "x86_64")]
        #[target_feature(enable = "avx512f")]
        unsafe fn $gather(
            t: &[$t],
            row: usize,
            taps: &[(usize, usize)],
            (oh, ow, pad, w): (usize, usize, usize, usize),
            (y0, n): (usize, usize),
            out: &mut [$t],
        ) {
            use core::arch::x86_64::*;
            assert!(
                n <= 4 && out.len() >= n * w && row >= oh * ow && t.len() >= taps.len() * row,
                "gather: rows or window of the wrong size"
            );
            let upto = |k: isize| -> $mask {
                if k >= $lanes {
                    !0
                } else if k <= 0 {
                    0
                } else {
                    ((1u32 << k) - 1) as $mask
                }
            };
            for x0 in (0..w).step_by($lanes) {
                let keep = upto((w - x0) as isize);
                // Up to four output rows at once: four chains of additions overlap.
                let mut acc = [$zero(); 4];
                for (r, &(a, b)) in taps.iter().enumerate() {
                    // Lanes `l` read column `x0 + l + pad - b`, inside `0 .. ow`.
                    let first = (x0 + pad) as isize - b as isize;
                    let mask = keep & upto(ow as isize - first) & !upto(-first);
                    if mask == 0 {
                        continue;
                    }
                    for (g, e) in acc.iter_mut().enumerate().take(n) {
                        let oy = (y0 + g + pad) as isize - a as isize;
                        if oy < 0 || oy >= oh as isize {
                            continue;
                        }
                        let at = (r * row + oy as usize * ow) as isize + first;
                        let p = t.as_ptr().wrapping_offset(at);
                        // SAFETY: the lanes of `mask` read columns `0 .. ow` of row `oy <
                        // oh` of tap row `r`, inside `t` (`row >= oh ow`, asserted); the
                        // other lanes are masked off and not read, wherever `p` points.
                        *e = $add(*e, unsafe { $loadz(mask, p) });
                    }
                }
                for (g, &e) in acc.iter().enumerate().take(n) {
                    // SAFETY: the lanes of `keep` write `x0 .. w` of row `g < n` of `out`,
                    // inside `n w <= out.len()` (asserted).
                    unsafe { $mstore(out.as_mut_ptr().add(g * w + x0), keep, e) };
                }
            }
        }

        #[cfg(target_arch = "x86_64")]
        #[target_feature(enable = "avx512f")]
        unsafe fn $rows<const K: usize, const R: usize, const NVR: usize>(
            dy: &[$t],
            (co, oh, ow): (usize, usize, usize),
            (y_off, x_off): (isize, isize),
            w: &[$t],
            tile: &mut [$t],
        ) {
            use core::arch::x86_64::*;
            assert!(
                dy.len() >= co * oh * ow && w.len() >= co * K * K && tile.len() == R * NVR * $lanes,
                "rows kernel: operands of the wrong size"
            );
            // The lanes of vector `v` that read inside a row, for column offset `b`.
            let mut masks = [[0 as $mask; NVR]; K];
            for (b, mb) in masks.iter_mut().enumerate() {
                for (v, m) in mb.iter_mut().enumerate() {
                    let first = (v * $lanes) as isize + x_off + b as isize;
                    let lo = (-first).clamp(0, $lanes) as u32;
                    let hi = (ow as isize - first).clamp(0, $lanes) as u32;
                    let upto = |n: u32| {
                        if n >= $lanes {
                            !0
                        } else {
                            ((1u32 << n) - 1) as $mask
                        }
                    };
                    *m = if hi > lo { upto(hi) & !upto(lo) } else { 0 };
                }
            }
            let mut acc: [[$vec; NVR]; R] = [[$zero(); NVR]; R];
            for o in 0..co {
                let plane = o * oh * ow;
                for (b, mb) in masks.iter().enumerate() {
                    let wv: [$vec; K] = core::array::from_fn(|a| $splat(w[(o * K + b) * K + a]));
                    for j in 0..R + K - 1 {
                        let oy = y_off + j as isize;
                        if oy < 0 || oy >= oh as isize {
                            continue;
                        }
                        let at = (plane + oy as usize * ow) as isize + x_off + b as isize;
                        let mut row: [$vec; NVR] = [$zero(); NVR];
                        for (v, r) in row.iter_mut().enumerate() {
                            let p = dy.as_ptr().wrapping_offset(at + (v * $lanes) as isize);
                            // SAFETY: the lanes of `mb[v]` read columns `0 .. ow` of row `oy`
                            // of plane `o`, inside `dy` (asserted); the other lanes are
                            // masked off and not read, wherever `p` points.
                            *r = unsafe { $loadz(mb[v], p) };
                        }
                        for (a, &wa) in wv.iter().enumerate() {
                            if j >= a && j - a < R {
                                for (e, &r) in acc[j - a].iter_mut().zip(&row) {
                                    *e = $fma(wa, r, *e);
                                }
                            }
                        }
                    }
                }
            }
            for (i, row) in acc.iter().enumerate() {
                for (v, &r) in row.iter().enumerate() {
                    // SAFETY: `tile` has `R NVR lanes` values (asserted).
                    unsafe { $store(tile.as_mut_ptr().add((i * NVR + v) * $lanes), r) };
                }
            }
        }

        #[cfg(target_arch = "x86_64")]
        #[target_feature(enable = "avx512f")]
        unsafe fn $correlate<const MR: usize, const NR: usize>(
            d: &[$t],
            ds: usize,
            x: &[$t],
            xoff: &[usize; NR],
            n: usize,
            sums: &mut [$t],
        ) {
            use core::arch::x86_64::*;
            assert!(
                sums.len() == MR * NR * $lanes && n % $lanes == 0,
                "correlate: sums of the wrong size"
            );
            debug_assert!((MR - 1) * ds + n <= d.len());
            debug_assert!(xoff.iter().all(|&o| o + n <= x.len()));
            let mut acc: [[$vec; NR]; MR] = [[$zero(); NR]; MR];
            for p in (0..n).step_by($lanes) {
                let mut dv: [$vec; MR] = [$zero(); MR];
                for (m, e) in dv.iter_mut().enumerate() {
                    // SAFETY: `m ds + p + lanes <= (MR - 1) ds + n <= d.len()` (contract).
                    *e = unsafe { $load(d.as_ptr().add(m * ds + p)) };
                }
                for (t, &o) in xoff.iter().enumerate() {
                    // SAFETY: `o + p + lanes <= o + n <= x.len()` (contract).
                    let xv = unsafe { $load(x.as_ptr().add(o + p)) };
                    for (row, &e) in acc.iter_mut().zip(&dv) {
                        row[t] = $fma(e, xv, row[t]);
                    }
                }
            }
            for (m, row) in acc.iter().enumerate() {
                for (t, &a) in row.iter().enumerate() {
                    // SAFETY: `sums` has `MR NR lanes` values (asserted).
                    unsafe {
                        let at = sums.as_mut_ptr().add((m * NR + t) * $lanes);
                        $store(at, $add($load(at), a));
                    }
                }
            }
        }

        #[cfg(target_arch = "x86_64")]
        #[target_feature(enable = "avx512f")]
        unsafe fn $lanes_fn<const MV: usize, const KR: usize>(
            d: &[$t],
            ds: usize,
            x: &[$t],
            xoff: &[usize],
            (rows, cols, xr, xs): (usize, usize, usize, usize),
            g: &mut [$t],
        ) {
            use core::arch::x86_64::*;
            let width = MV * $lanes;
            assert!(
                xoff.len() == KR && g.len() == KR * width && ds >= width,
                "lanes kernel: offsets or sums of the wrong size"
            );
            if rows == 0 || cols == 0 {
                return;
            }
            let x_end = xoff
                .iter()
                .max()
                .map_or(0, |&o| o + (rows - 1) * xr + (cols - 1) * xs + 1);
            assert!(
                x_end <= x.len() && (rows * cols - 1) * ds + width <= d.len(),
                "lanes kernel: an offset reads past its operand"
            );
            let mut acc: [[$vec; MV]; KR] = [[$zero(); MV]; KR];
            for (k, row) in acc.iter_mut().enumerate() {
                for (v, r) in row.iter_mut().enumerate() {
                    // SAFETY: `g` has `KR * width` values (asserted).
                    *r = unsafe { $load(g.as_ptr().add(k * width + v * $lanes)) };
                }
            }
            let offs: &[usize; KR] = xoff.try_into().expect("KR offsets (asserted)");
            for r in 0..rows {
                for j in 0..cols {
                    let at = (r * cols + j) * ds;
                    let mut dv: [$vec; MV] = [$zero(); MV];
                    for (v, e) in dv.iter_mut().enumerate() {
                        // SAFETY: `at + width <= (rows cols - 1) ds + width <= d.len()`.
                        *e = unsafe { $load(d.as_ptr().add(at + v * $lanes)) };
                    }
                    let xp = r * xr + j * xs;
                    for (row, &o) in acc.iter_mut().zip(offs) {
                        // SAFETY: `o + xp < x_end <= x.len()` (asserted).
                        let b = $splat(unsafe { *x.get_unchecked(o + xp) });
                        for (a, &e) in row.iter_mut().zip(&dv) {
                            *a = $fma(e, b, *a);
                        }
                    }
                }
            }
            for (k, row) in acc.iter().enumerate() {
                for (v, &r) in row.iter().enumerate() {
                    // SAFETY: as for the loads above.
                    unsafe { $store(g.as_mut_ptr().add(k * width + v * $lanes), r) };
                }
            }
        }

        impl DirectScalar for $t {
            const VECTOR: usize = $lanes;

            #[cfg(target_arch = "x86_64")]
            #[inline]
            unsafe fn shifted<const MR: usize, const NV: usize>(
                a: &[$t],
                x: &[$t],
                xoff: &[usize],
                out: &mut [$t],
                ooff: &[usize; MR],
            ) {
                // SAFETY: the caller guarantees AVX-512F and the bounds.
                unsafe { $shifted::<MR, NV>(a, x, xoff, out, ooff) }
            }

            #[cfg(target_arch = "x86_64")]
            #[inline]
            unsafe fn gather(
                t: &[$t],
                row: usize,
                taps: &[(usize, usize)],
                shape: (usize, usize, usize, usize),
                rows: (usize, usize),
                out: &mut [$t],
            ) {
                // SAFETY: the caller guarantees AVX-512F.
                unsafe { $gather(t, row, taps, shape, rows, out) }
            }

            #[cfg(target_arch = "x86_64")]
            #[inline]
            unsafe fn rows<const K: usize, const R: usize, const NVR: usize>(
                dy: &[$t],
                shape: (usize, usize, usize),
                offs: (isize, isize),
                w: &[$t],
                tile: &mut [$t],
            ) {
                // SAFETY: the caller guarantees AVX-512F.
                unsafe { $rows::<K, R, NVR>(dy, shape, offs, w, tile) }
            }

            #[cfg(target_arch = "x86_64")]
            #[inline]
            unsafe fn correlate<const MR: usize, const NR: usize>(
                d: &[$t],
                ds: usize,
                x: &[$t],
                xoff: &[usize; NR],
                n: usize,
                sums: &mut [$t],
            ) {
                // SAFETY: the caller guarantees AVX-512F and the bounds.
                unsafe { $correlate::<MR, NR>(d, ds, x, xoff, n, sums) }
            }

            #[cfg(target_arch = "x86_64")]
            #[inline]
            unsafe fn lanes<const MV: usize, const KR: usize>(
                d: &[$t],
                ds: usize,
                x: &[$t],
                xoff: &[usize],
                sums: (usize, usize, usize, usize),
                g: &mut [$t],
            ) {
                // SAFETY: the caller guarantees AVX-512F.
                unsafe { $lanes_fn::<MV, KR>(d, ds, x, xoff, sums, g) }
            }
        }
    };
}

direct_kernels!(
    f32,
    16,
    shifted_f32,
    gather_f32,
    rows_f32,
    correlate_f32,
    lanes_f32,
    __m512,
    u16,
    _mm512_setzero_ps,
    _mm512_loadu_ps,
    _mm512_maskz_loadu_ps,
    _mm512_set1_ps,
    _mm512_fmadd_ps,
    _mm512_add_ps,
    _mm512_storeu_ps,
    _mm512_mask_storeu_ps
);
direct_kernels!(
    f64,
    8,
    shifted_f64,
    gather_f64,
    rows_f64,
    correlate_f64,
    lanes_f64,
    __m512d,
    u8,
    _mm512_setzero_pd,
    _mm512_loadu_pd,
    _mm512_maskz_loadu_pd,
    _mm512_set1_pd,
    _mm512_fmadd_pd,
    _mm512_add_pd,
    _mm512_storeu_pd,
    _mm512_mask_storeu_pd
);
