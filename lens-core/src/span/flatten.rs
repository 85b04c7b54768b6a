//! Flattening: a matrix-shaped value as one vector, beside the span layers.

use crate::{Lens, Real};
use nalgebra::{SMatrix, SVector};

/// An `ROWS x COLS` matrix as a vector of `N = ROWS * COLS` entries in column-major order (nalgebra's
/// storage order, so no value moves); the reverse reshapes the change back. `N` is checked
/// against `ROWS * COLS` at compile time.
///
/// ```
/// use paralens::Lens;
/// use paralens::span::Flatten;
/// use paralens::nalgebra::{SMatrix, SVector};
/// let flat = Flatten::<2, 3, 6>::new();
/// let m = SMatrix::<f64, 2, 3>::new(1.0, 2.0, 3.0, 4.0, 5.0, 6.0);
/// assert_eq!(flat.apply(m), SVector::<f64, 6>::from_column_slice(&[1.0, 4.0, 2.0, 5.0, 3.0, 6.0]));
/// let (_, pull) = flat.apply_vjp(m);
/// assert_eq!(pull(SVector::from_fn(|i, _| i as f64))[(1, 2)], 5.0);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Flatten<const ROWS: usize, const COLS: usize, const N: usize>;

impl<const ROWS: usize, const COLS: usize, const N: usize> Flatten<ROWS, COLS, N> {
    /// The flattening of `ROWS x COLS` matrices; `N` must be `ROWS * COLS` (a compile error otherwise).
    #[must_use]
    pub const fn new() -> Self {
        const {
            assert!(
                N == ROWS * COLS,
                "Flatten<ROWS, COLS, N>: N must be ROWS * COLS"
            )
        };
        Self
    }
}

impl<T: Real, const ROWS: usize, const COLS: usize, const N: usize> Lens<SMatrix<T, ROWS, COLS>>
    for Flatten<ROWS, COLS, N>
{
    type Out = SVector<T, N>;

    #[inline]
    fn apply(&self, x: SMatrix<T, ROWS, COLS>) -> SVector<T, N> {
        const {
            assert!(
                N == ROWS * COLS,
                "Flatten<ROWS, COLS, N>: N must be ROWS * COLS"
            )
        };
        SVector::from_column_slice(x.as_slice())
    }

    #[inline]
    fn apply_vjp(
        &self,
        x: SMatrix<T, ROWS, COLS>,
    ) -> (
        SVector<T, N>,
        impl FnOnce(SVector<T, N>) -> SMatrix<T, ROWS, COLS>,
    ) {
        (
            self.apply(x),
            #[inline(always)]
            |d: SVector<T, N>| SMatrix::from_column_slice(d.as_slice()),
        )
    }
}

crate::lens::lens_is_para!([const ROWS: usize, const COLS: usize, const N: usize] Flatten<ROWS, COLS, N>);
