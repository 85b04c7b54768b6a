//! Indexing: `v[i]`, `m[(r, c)]` and `a[i]` read one entry; the reverse adds the entry's
//! change into the adjoint at that place, so reading `N` entries costs `N` additions, not `N`
//! vectors of zeros. `v[i] = e` writes one: the value is `v` with that entry replaced, and
//! the reverse hands the entry's change to `e` and the rest to the old `v`.

#[cfg(feature = "alloc")]
use crate::HeapMatrix;
use crate::{Real, Tangent};
use nalgebra::SMatrix;

/// Reverse rule of `x[index]`: `R(x; d) = d` at `index`, zero elsewhere, added in place.
pub trait IndexRule<I> {
    /// The type of one entry.
    type Entry;
    /// Adds the entry's change `d` into this adjoint at `index`.
    fn add_at(&mut self, index: I, d: Self::Entry);
}

/// An element of an array (a scalar, a vector, a tuple: anything with a change).
impl<X: Tangent, const N: usize> IndexRule<usize> for [X; N] {
    type Entry = X;
    #[inline]
    fn add_at(&mut self, index: usize, d: X) {
        self[index].accumulate(&d);
    }
}

/// Reverse rule of `x[index] = value`, as a value: `x` with the entry at `index` replaced.
/// `R(x, value; d) = (d with zero at index, d[index])`.
pub trait SetRule<I>: Sized {
    /// The type of one entry.
    type Entry;
    /// The new value and its pullback.
    fn set_at_vjp(
        self,
        value: Self::Entry,
        index: I,
    ) -> (Self, impl FnOnce(Self) -> (Self, Self::Entry));
}

/// Reading and writing an entry of a static or a heap matrix (`$m<T, R, C>`), by position in
/// column-major order or at `(row, column)`: the adjoint has the matrix's type, added into in
/// place (a heap matrix is indexed through its static view).
macro_rules! matrix_entries {
    ($m:ident, $index:ty) => {
        impl<T: Real, const R: usize, const C: usize> IndexRule<$index> for $m<T, R, C> {
            type Entry = T;
            #[inline]
            fn add_at(&mut self, index: $index, d: T) {
                self[index] += d;
            }
        }

        impl<T: Real, const R: usize, const C: usize> SetRule<$index> for $m<T, R, C> {
            type Entry = T;
            #[inline]
            fn set_at_vjp(
                mut self,
                value: T,
                index: $index,
            ) -> (Self, impl FnOnce(Self) -> (Self, T)) {
                self[index] = value;
                (
                    self,
                    #[inline(always)]
                    move |mut d: Self| {
                        let e = core::mem::replace(&mut d[index], T::zero());
                        (d, e)
                    },
                )
            }
        }
    };
}
matrix_entries!(SMatrix, usize);
matrix_entries!(SMatrix, (usize, usize));
#[cfg(feature = "alloc")]
matrix_entries!(HeapMatrix, usize);
#[cfg(feature = "alloc")]
matrix_entries!(HeapMatrix, (usize, usize));

/// An element of an array.
impl<X: Tangent, const N: usize> SetRule<usize> for [X; N] {
    type Entry = X;
    #[inline]
    fn set_at_vjp(mut self, value: X, index: usize) -> (Self, impl FnOnce(Self) -> (Self, X)) {
        self[index] = value;
        (
            self,
            #[inline(always)]
            move |mut d: Self| {
                let e = core::mem::replace(&mut d[index], X::zeros());
                (d, e)
            },
        )
    }
}

/// Reverse rule of `V::new(a, b, ..)`, a value built from its entries in a `#[lens]` body:
/// the change of argument `k` is entry `k` of the value's change, in the constructor's order
/// (row by row). Implemented for nalgebra's static vectors and matrices, so that a type alias
/// of one (`type V3 = SVector<f64, 3>`, `V3::new(x, y, z)`) is built the same way.
///
/// ```
/// use lens_core::rules::BuildRule;
/// use nalgebra::Matrix2x3;
///
/// let d = Matrix2x3::new(1.0, 2.0, 3.0, 4.0, 5.0, 6.0);
/// let by_argument: Vec<f64> = (0..6).map(|k| d.built_entry(k)).collect();
/// assert_eq!(by_argument, [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
/// ```
#[diagnostic::on_unimplemented(
    message = "`#[lens]` cannot differentiate `{Self}`'s `new` through its arguments",
    label = "built here",
    note = "`T::new(a, b, ..)` is differentiated for nalgebra vectors and matrices (named through an alias too), entry by entry",
    note = "build a struct deriving `Tangent` with a struct literal (`P {{ x: a, y: b }}`)"
)]
pub trait BuildRule {
    /// The type of one entry.
    type Entry;
    /// Entry `k` of this change in the constructor's order (row by row).
    fn built_entry(&self, k: usize) -> Self::Entry;
}

impl<T: Real, const R: usize, const C: usize> BuildRule for SMatrix<T, R, C> {
    type Entry = T;
    #[inline]
    fn built_entry(&self, k: usize) -> T {
        self[(k / C, k % C)]
    }
}
