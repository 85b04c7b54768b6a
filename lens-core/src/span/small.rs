//! The dense layer's products for shapes too small for [`crate::gemm`], always inlined, so
//! that a whole small step (the Iris MLP at batch 1) is one function: with nalgebra's static
//! products LLVM kept them (and the layer's `forward` around them) as calls, every
//! activation passing through memory between them. The forward is a loop over the static
//! shape, summing each entry in nalgebra's order, so its results are the same; `dY X^T`
//! stays nalgebra's product (its outer product vectorises better than the loops tried,
//! measured in a `-C target-cpu=native` build), added in place. `W^T dY` stays nalgebra's
//! `tr_mul`: a loop summing each dot product in order changed the last bits (nalgebra splits
//! a long dot product into partial sums), enough to move a seeded GRU training
//! (`tests/sequence.rs`) from 0.969 to 0.894 test accuracy, and its inlining gained nothing
//! measurable.

use crate::Real;
use nalgebra::{SMatrix, SVector};

/// `W X + b 1^T`.
#[inline(always)]
pub(super) fn affine<T: Real, const I: usize, const O: usize, const B: usize>(
    w: &SMatrix<T, O, I>,
    b: &SVector<T, O>,
    x: &SMatrix<T, I, B>,
) -> SMatrix<T, O, B> {
    if I == 0 || O == 0 {
        // No columns to walk (`chunks_exact(0)` would panic): `y = b 1^T`, or empty.
        return SMatrix::from_fn(|r, _| b[r]);
    }
    let (w, x) = (w.as_slice(), x.as_slice());
    let mut y = SMatrix::<T, O, B>::zeros();
    for (yj, xj) in y.as_mut_slice().chunks_exact_mut(O).zip(x.chunks_exact(I)) {
        // Column by column of `W`, as nalgebra's product: `y_j = sum_k W_k x_kj`.
        for (wk, &xkj) in w.chunks_exact(O).zip(xj) {
            for (y, &w) in yj.iter_mut().zip(wk) {
                *y += w * xkj;
            }
        }
        for (y, &b) in yj.iter_mut().zip(b.as_slice()) {
            *y += b;
        }
    }
    y
}

/// `dW += dY X^T`: nalgebra's product (its static outer product vectorises well), added
/// in place.
#[inline(always)]
pub(super) fn add_outer<T: Real, const I: usize, const O: usize, const B: usize>(
    dw: &mut SMatrix<T, O, I>,
    dy: &SMatrix<T, O, B>,
    x: &SMatrix<T, I, B>,
) {
    let p = dy * x.transpose();
    for (w, &p) in dw.as_mut_slice().iter_mut().zip(p.as_slice()) {
        *w += p;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Entries that are not round numbers, so that a different order of summation shows.
    fn m<const R: usize, const C: usize>(seed: f32) -> SMatrix<f32, R, C> {
        SMatrix::from_fn(|r, c| ((r * 7 + c * 13) as f32 * 0.37 + seed).sin() * 1.7)
    }

    /// Each kernel against nalgebra's product on shapes of one column and of several, and on
    /// a batch longer than the layer, bit for bit (the same sums in the same order).
    fn against_nalgebra<const I: usize, const O: usize, const B: usize>() {
        let (w, b, x, dy) = (
            m::<O, I>(0.1),
            m::<O, 1>(0.2),
            m::<I, B>(0.3),
            m::<O, B>(0.4),
        );
        let mut want = w * x;
        for mut col in want.column_iter_mut() {
            col += &b;
        }
        assert_eq!(affine(&w, &b, &x), want, "affine {I}x{O}, batch {B}");

        let start = m::<O, I>(0.5);
        let mut dw = start;
        add_outer(&mut dw, &dy, &x);
        assert_eq!(dw, start + dy * x.transpose(), "dW {I}x{O}, batch {B}");
    }

    #[test]
    fn the_kernels_compute_nalgebras_products() {
        against_nalgebra::<4, 16, 1>();
        against_nalgebra::<16, 3, 1>();
        against_nalgebra::<4, 16, 7>();
        against_nalgebra::<16, 3, 150>();
        against_nalgebra::<1, 1, 1>();
        against_nalgebra::<9, 5, 3>();
        // Empty layers, which nalgebra's products took.
        against_nalgebra::<0, 3, 2>();
        against_nalgebra::<3, 0, 2>();
    }
}
