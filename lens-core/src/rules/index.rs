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

/// `v[i] = e` in the reverse sweep `#[lens]` generates (`set_checked!(v, e, i)`): the
/// types of `v`, `e` and `i`, for [`SetDispatch`] to pick [`SetRule::set_at_vjp`] when `e`
/// has the entries' type. When it has another (`v[0] = x * 2.0` of a vector `x`), the
/// function as written reports the error once at `e`, and method resolution picks
/// [`SetMismatch`] one autoref step later, whose value has `v`'s type and whose pullback
/// hands `e` a change of `e`'s type, so the sweep reports nothing more.
#[doc(hidden)]
pub struct SetOf<V, E, I>(core::marker::PhantomData<(fn() -> V, fn() -> E, fn() -> I)>);

impl<V, E, I> SetOf<V, E, I> {
    /// The types of `v`, `e` and `i`.
    #[inline(always)]
    pub fn of(_v: &V, _e: &E, _i: &I) -> Self {
        SetOf(core::marker::PhantomData)
    }
}

/// `e` has the entries' type: [`SetRule::set_at_vjp`] runs.
#[doc(hidden)]
pub struct SetAt<V, E, I>(core::marker::PhantomData<(fn() -> V, fn() -> E, fn() -> I)>);

impl<V: SetRule<I, Entry = E>, E, I> SetAt<V, E, I> {
    /// [`SetRule::set_at_vjp`].
    #[inline(always)]
    pub fn lens_set(self, v: V, e: E, i: I) -> (V, impl FnOnce(V) -> (V, E)) {
        v.set_at_vjp(e, i)
    }
}

/// [`SetOf`] whose entry has the entries' type.
#[doc(hidden)]
pub trait SetDispatch<V, E, I> {
    /// [`SetAt`].
    fn lens_dispatch(self) -> SetAt<V, E, I>;
}

impl<V: SetRule<I, Entry = E>, E, I> SetDispatch<V, E, I> for SetOf<V, E, I> {
    #[inline(always)]
    fn lens_dispatch(self) -> SetAt<V, E, I> {
        SetAt(core::marker::PhantomData)
    }
}

/// [`SetOf`] whose entry has another type: never built (see [`SetOf`]).
#[doc(hidden)]
pub trait SetMismatch<V, E, I> {
    /// [`SetPick`].
    fn lens_dispatch(self) -> SetPick<V, E, I>;
}

impl<V, E, I> SetMismatch<V, E, I> for &SetOf<V, E, I> {
    #[inline(always)]
    fn lens_dispatch(self) -> SetPick<V, E, I> {
        SetPick(core::marker::PhantomData)
    }
}

/// `v`'s type, for an entry of another type (see [`SetOf`]).
#[doc(hidden)]
pub struct SetPick<V, E, I>(core::marker::PhantomData<(fn() -> V, fn() -> E, fn() -> I)>);

impl<V, E, I> SetPick<V, E, I> {
    /// Never returns.
    pub fn lens_set(self, _v: V, _e: E, _i: I) -> (V, fn(V) -> (V, E)) {
        #[allow(clippy::let_unit_value)]
        let () = crate::guard::Typed::<V, E>::MISMATCH;
        unreachable!()
    }
}

/// `v[i] = e` in the reverse sweep (see [`SetOf`]).
#[doc(hidden)]
#[macro_export]
macro_rules! __set_checked {
    ($v:expr, $e:expr, $i:expr $(,)?) => {{
        use $crate::__private::rules::{SetDispatch as _, SetMismatch as _};
        let (v, e, i) = ($v, $e, $i);
        $crate::__private::rules::SetOf::of(&v, &e, &i)
            .lens_dispatch()
            .lens_set(v, e, i)
    }};
}
#[doc(hidden)]
pub use crate::__set_checked as set_checked;

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
/// use paralens::rules::BuildRule;
/// use paralens::nalgebra::Matrix2x3;
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
