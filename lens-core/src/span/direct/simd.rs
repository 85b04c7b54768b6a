//! The direct convolution's two AVX-512 kernels, for `f32` and `f64`, in `core::arch`
//! intrinsics (as `gemm`'s micro-kernels, so that the accumulators stay in registers).

/// Scalars with the direct convolution's kernels (`f32` and `f64`); a supertrait of
/// [`crate::Real`].
#[doc(hidden)]
pub trait DirectScalar: Copy + Sized {
    /// Values per 512-bit vector.
    const VECTOR: usize;

    /// Positions in the lanes: with `acc[m][j] = sum_k a[k * MR + m] * x[xoff[k] + j]`
    /// (`a` packed tap by tap), `out[ooff[m] + j] = acc[m][j]`, or `+=` if `ADD`, for
    /// `m < MR`, `j < NV * VECTOR`.
    ///
    /// # Safety
    /// The CPU has AVX-512F; `xoff[k] + NV * VECTOR <= x.len()` for every `k`, and
    /// `ooff[m] + NV * VECTOR <= out.len()` for every `m` (the caller checks these bounds
    /// once per pass, not once per tile).
    #[cfg(target_arch = "x86_64")]
    unsafe fn shifted<const MR: usize, const NV: usize, const ADD: bool>(
        a: &[Self],
        x: &[Self],
        xoff: &[usize],
        out: &mut [Self],
        ooff: &[usize; MR],
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
    ($t:ty, $lanes:literal, $shifted:ident, $lanes_fn:ident, $vec:ty, $zero:ident, $load:ident,
     $splat:ident, $fma:ident, $add:ident, $store:ident) => {
        #[cfg(target_arch = "x86_64")]
        #[target_feature(enable = "avx512f")]
        unsafe fn $shifted<const MR: usize, const NV: usize, const ADD: bool>(
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
                    unsafe {
                        let at = out.as_mut_ptr().add(o + v * $lanes);
                        $store(at, if ADD { $add($load(at), r) } else { r });
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
            unsafe fn shifted<const MR: usize, const NV: usize, const ADD: bool>(
                a: &[$t],
                x: &[$t],
                xoff: &[usize],
                out: &mut [$t],
                ooff: &[usize; MR],
            ) {
                // SAFETY: the caller guarantees AVX-512F and the bounds.
                unsafe { $shifted::<MR, NV, ADD>(a, x, xoff, out, ooff) }
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
    lanes_f32,
    __m512,
    _mm512_setzero_ps,
    _mm512_loadu_ps,
    _mm512_set1_ps,
    _mm512_fmadd_ps,
    _mm512_add_ps,
    _mm512_storeu_ps
);
direct_kernels!(
    f64,
    8,
    shifted_f64,
    lanes_f64,
    __m512d,
    _mm512_setzero_pd,
    _mm512_loadu_pd,
    _mm512_set1_pd,
    _mm512_fmadd_pd,
    _mm512_add_pd,
    _mm512_storeu_pd
);
