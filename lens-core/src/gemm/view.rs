//! Strided matrices in memory as gemm operands and results.

use super::{Panels, Sink};
use crate::Real;

/// A matrix in a slice with a row stride and a column stride: `X(r, c) = data[r rs + c cs]`.
#[derive(Clone, Copy, Debug)]
pub struct View<'a, T> {
    data: &'a [T],
    rows: usize,
    cols: usize,
    rs: usize,
    cs: usize,
}

impl<'a, T> View<'a, T> {
    /// A column-major `rows x cols` matrix (nalgebra's layout).
    ///
    /// # Panics
    /// If `data` holds fewer than `rows * cols` values.
    #[must_use]
    pub fn col_major(data: &'a [T], rows: usize, cols: usize) -> Self {
        Self::strided(data, rows, cols, 1, rows)
    }

    /// Any strides.
    ///
    /// # Panics
    /// If the last entry `(rows - 1) rs + (cols - 1) cs` is outside `data`.
    #[must_use]
    pub fn strided(data: &'a [T], rows: usize, cols: usize, rs: usize, cs: usize) -> Self {
        if rows > 0 && cols > 0 {
            let last = (rows - 1) * rs + (cols - 1) * cs;
            assert!(
                last < data.len(),
                "a {rows}x{cols} view with strides ({rs}, {cs}) reaches entry {last}, the slice has {}",
                data.len()
            );
        }
        Self {
            data,
            rows,
            cols,
            rs,
            cs,
        }
    }

    /// The transpose (no copy).
    #[must_use]
    pub fn t(self) -> Self {
        Self {
            data: self.data,
            rows: self.cols,
            cols: self.rows,
            rs: self.cs,
            cs: self.rs,
        }
    }
}

impl<T: Real> Panels<T> for View<'_, T> {
    fn wide(&self) -> usize {
        self.rows
    }

    fn deep(&self) -> usize {
        self.cols
    }

    /// A full panel of a view whose wide index is contiguous (a column-major `A`, or the
    /// transpose of a row-major `Bt`) is read in place, with the deep stride as its step.
    #[inline]
    fn strip(
        &self,
        w0: usize,
        n: usize,
        width: usize,
        k0: usize,
        kc: usize,
    ) -> Option<(&[T], usize)> {
        (self.rs == 1 && n == width && kc > 0).then(|| (&self.data[w0 + k0 * self.cs..], self.cs))
    }

    #[inline]
    fn pack(&self, w0: usize, n: usize, width: usize, k0: usize, kc: usize, out: &mut [T]) {
        let simd = super::Kernel::current() == super::Kernel::Avx512;
        self.pack_with(simd, (w0, n, width, k0, kc), out);
    }
}

impl<T: Real> View<'_, T> {
    /// [`Panels::pack`], with the AVX-512 transposing pack allowed or not (the portable
    /// loops are tested against it on a CPU that has it).
    #[inline]
    fn pack_with(
        &self,
        simd: bool,
        (w0, n, width, k0, kc): (usize, usize, usize, usize, usize),
        out: &mut [T],
    ) {
        let (rs, cs) = (self.rs, self.cs);
        if rs == 1 {
            // Each deep step reads `n` contiguous values.
            for (d, o) in out.chunks_exact_mut(width).enumerate().take(kc) {
                let start = w0 + (k0 + d) * cs;
                super::copy_short(&mut o[..n], &self.data[start..start + n]);
                o[n..].fill(T::zero());
            }
        } else if cs == 1 && simd && super::Kernel::current() == super::Kernel::Avx512 {
            #[cfg(target_arch = "x86_64")]
            // SAFETY: the current kernel is AVX-512 only on a CPU with AVX-512F (`best` detects
            // it, and `with_kernel` forces only an available kernel).
            unsafe {
                T::transpose_pack_avx512(&self.data[w0 * rs + k0..], rs, n, kc, width, out);
            }
        } else if cs == 1 {
            // Each wide index reads its deep values contiguously; the writes are strided.
            // (Reading one value from each of `n` rows per deep step was measured twice as
            // slow: the dense layer's batch operand is packed this way.)
            for t in 0..n {
                let start = (w0 + t) * rs + k0;
                let src = &self.data[start..start + kc];
                for (o, &v) in out.chunks_exact_mut(width).zip(src) {
                    o[t] = v;
                }
            }
            for o in out.chunks_exact_mut(width).take(kc) {
                o[n..].fill(T::zero());
            }
        } else {
            for (d, o) in out.chunks_exact_mut(width).enumerate().take(kc) {
                let base = (k0 + d) * cs;
                for (t, v) in o[..n].iter_mut().enumerate() {
                    *v = self.data[base + (w0 + t) * rs];
                }
                o[n..].fill(T::zero());
            }
        }
    }
}

/// A column-major matrix to add products into.
#[derive(Debug)]
pub struct ViewMut<'a, T> {
    data: &'a mut [T],
    rows: usize,
    cols: usize,
}

impl<'a, T> ViewMut<'a, T> {
    /// A column-major `rows x cols` matrix.
    ///
    /// # Panics
    /// If `data` does not hold exactly `rows * cols` values.
    #[must_use]
    pub fn col_major(data: &'a mut [T], rows: usize, cols: usize) -> Self {
        assert_eq!(
            data.len(),
            rows * cols,
            "a {rows}x{cols} matrix needs {} values",
            rows * cols
        );
        Self { data, rows, cols }
    }
}

impl<T: Real> Sink<T> for ViewMut<'_, T> {
    fn rows(&self) -> usize {
        self.rows
    }

    fn col_major(&mut self) -> Option<(&mut [T], usize)> {
        Some((&mut *self.data, self.rows))
    }

    fn cols(&self) -> usize {
        self.cols
    }

    #[inline]
    fn add_tile(&mut self, i0: usize, j0: usize, m: usize, n: usize, tile: &[T], ld: usize) {
        for j in 0..n {
            let start = (j0 + j) * self.rows + i0;
            let col = &mut self.data[start..start + m];
            for (c, &t) in col.iter_mut().zip(&tile[j * ld..j * ld + m]) {
                *c += t;
            }
        }
    }

    #[inline]
    fn add_tile_t(&mut self, i0: usize, j0: usize, m: usize, n: usize, tile: &[T], ld: usize) {
        for j in 0..n {
            let start = (j0 + j) * self.rows + i0;
            let col = &mut self.data[start..start + m];
            for (i, c) in col.iter_mut().enumerate() {
                *c += tile[i * ld + j];
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every packing loop against the definition `out[d * width + t] = X(w0 + t, k0 + d)`
    /// (0 past `n`), on a matrix stored column-major, row-major and with both strides, with
    /// and without the AVX-512 transposing pack (which only a CPU with AVX-512 runs).
    #[test]
    fn every_packing_loop_writes_the_panel() {
        let data: Vec<f64> = (0..40 * 37).map(|i| f64::from(i) * 0.5 + 1.0).collect();
        let (rows, cols) = (19, 35);
        for (rs, cs) in [(1, rows), (cols, 1), (2 * cols, 2)] {
            let v = View::strided(&data, rows, cols, rs, cs);
            for (w0, n, width, k0, kc) in
                [(0, 16, 16, 0, 35), (3, 13, 16, 5, 17), (18, 1, 12, 34, 1)]
            {
                for simd in [false, true] {
                    let mut out = vec![f64::NAN; width * kc];
                    v.pack_with(simd, (w0, n, width, k0, kc), &mut out);
                    for d in 0..kc {
                        for t in 0..width {
                            let want = if t < n {
                                data[(w0 + t) * rs + (k0 + d) * cs]
                            } else {
                                0.0
                            };
                            assert_eq!(
                                out[d * width + t],
                                want,
                                "strides ({rs}, {cs}), panel {:?}, simd {simd}",
                                (w0, n, width, k0, kc)
                            );
                        }
                    }
                }
            }
        }
    }
}
