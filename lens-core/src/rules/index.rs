//! Indexing: `v[i]`, `m[(r, c)]` and `a[i]` read one entry; the reverse adds the entry's
//! change into the adjoint at that place, so reading `N` entries costs `N` additions, not `N`
//! vectors of zeros.

use crate::{Real, Tangent};
use nalgebra::SMatrix;

/// Reverse rule of `x[index]`: `R(x; d) = d` at `index`, zero elsewhere, added in place.
pub trait IndexRule<I> {
    /// The type of one entry.
    type Entry;
    /// Adds the entry's change `d` into this adjoint at `index`.
    fn add_at(&mut self, index: I, d: Self::Entry);
}

/// An entry of a vector or of a matrix in column-major order.
impl<T: Real, const R: usize, const C: usize> IndexRule<usize> for SMatrix<T, R, C> {
    type Entry = T;
    #[inline]
    fn add_at(&mut self, index: usize, d: T) {
        self[index] += d;
    }
}

/// An entry of a matrix at `(row, column)`.
impl<T: Real, const R: usize, const C: usize> IndexRule<(usize, usize)> for SMatrix<T, R, C> {
    type Entry = T;
    #[inline]
    fn add_at(&mut self, index: (usize, usize), d: T) {
        self[index] += d;
    }
}

/// An element of an array (a scalar, a vector, a tuple: anything with a change).
impl<X: Tangent, const N: usize> IndexRule<usize> for [X; N] {
    type Entry = X;
    #[inline]
    fn add_at(&mut self, index: usize, d: X) {
        self[index].accumulate(&d);
    }
}
