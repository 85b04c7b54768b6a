//! Activations as functions in the `#[lens]` calling convention: `name(x)` is the forward
//! map, `name_vjp(x)` returns the value and its pullback, `name_rev(x, d)` the reverse
//! derivative. A `#[lens]` body that calls `relu(h)` uses `relu_vjp` from here.
//!
//! ```
//! use paralens::fns::{sigmoid, sigmoid_rev};
//! assert_eq!(sigmoid(0.0_f64), 0.5);
//! assert_eq!(sigmoid_rev(0.0_f64, 1.0), 0.25);
//! ```

use crate::activation::Elementwise;
use crate::rules::activation as rule;
use crate::{Flat, Lens, LogSoftmax, Real, Softmax};
use nalgebra::{SMatrix, SVector};

macro_rules! entrywise_fn {
    ($($name:ident, $vjp:ident, $rev:ident, $doc:literal;)*) => {$(
        lens_macros::__companions! {
            #[doc = concat!($doc, ", entry-wise on a scalar or a static matrix.")]
            #[inline]
            pub fn $name<V: Elementwise>(x: V) -> V {
                x.map_entries(|v| rule::$name(v).0)
            }

            #[doc = concat!("[`", stringify!($name), "`] and its pullback.")]
            #[inline]
            pub fn $vjp<V: Elementwise>(x: V) -> (V, impl FnOnce(V) -> V) {
                (
                    x.map_entries(|v| rule::$name(v).0),
                    #[inline(always)]
                    move |d: V| d.zip_entries(&x, |dv, v| rule::$name(v).1(dv)),
                )
            }

            #[doc = concat!(
                "The reverse derivative of [`", stringify!($name), "`] at `x`, applied to `d`."
            )]
            #[inline]
            pub fn $rev<V: Elementwise>(x: V, d: V) -> V {
                $vjp(x).1(d)
            }
        }
    )*};
}

entrywise_fn! {
    relu, relu_vjp, relu_rev, "`max(x, 0)`";
    sigmoid, sigmoid_vjp, sigmoid_rev, "The logistic function";
    tanh, tanh_vjp, tanh_rev, "`tanh`";
    softplus, softplus_vjp, softplus_rev, "`ln(1 + e^x)`";
    gelu, gelu_vjp, gelu_rev, "GELU (tanh form)";
}

// Each `_vjp` and `_rev` at its function's spans (see `lens_macros::__companions`).
lens_macros::__companions! {
    /// `x` where positive, `alpha x` elsewhere, entry-wise. The slope `alpha` is
    /// differentiated too, so a learned slope (PReLU) is `leaky_relu(h, a)` with `a` a
    /// parameter; a constant one is forward-only data and its change is not used.
    #[inline]
    pub fn leaky_relu<V: Elementwise + Flat<V::Scalar>>(x: V, alpha: V::Scalar) -> V {
        x.map_entries(|v| rule::leaky_relu(v, alpha).0)
    }

    /// [`leaky_relu`] and its pullback: the change of `x`, and of `alpha` the sum of `x d`
    /// over the entries where `x <= 0`.
    #[inline]
    pub fn leaky_relu_vjp<V: Elementwise + Flat<V::Scalar>>(
        x: V,
        alpha: V::Scalar,
    ) -> (V, impl FnOnce(V) -> (V, V::Scalar)) {
        (
            x.map_entries(|v| rule::leaky_relu(v, alpha).0),
            #[inline(always)]
            move |d: V| {
                let zero: V::Scalar = Real::cst(0.0);
                let mut da = zero;
                for (xs, ds) in x.slices().zip(d.slices()) {
                    for (&v, &dv) in xs.iter().zip(ds) {
                        if v <= zero {
                            da += v * dv;
                        }
                    }
                }
                (
                    d.zip_entries(&x, |dv, v| rule::leaky_relu(v, alpha).1(dv)),
                    da,
                )
            },
        )
    }

    /// The reverse derivative of [`leaky_relu`]: the changes of `x` and of `alpha`.
    #[inline]
    pub fn leaky_relu_rev<V: Elementwise + Flat<V::Scalar>>(
        x: V,
        alpha: V::Scalar,
        d: V,
    ) -> (V, V::Scalar) {
        leaky_relu_vjp(x, alpha).1(d)
    }

    /// `softmax` of a vector.
    #[inline]
    pub fn softmax<T: Real, const N: usize>(x: SVector<T, N>) -> SVector<T, N> {
        Softmax.apply(x)
    }

    /// [`softmax`] and its pullback.
    #[inline]
    pub fn softmax_vjp<T: Real, const N: usize>(
        x: SVector<T, N>,
    ) -> (SVector<T, N>, impl FnOnce(SVector<T, N>) -> SVector<T, N>) {
        rule::softmax(x)
    }

    /// The reverse derivative of [`softmax`].
    #[inline]
    pub fn softmax_rev<T: Real, const N: usize>(
        x: SVector<T, N>,
        d: SVector<T, N>,
    ) -> SVector<T, N> {
        rule::softmax(x).1(d)
    }

    /// `log_softmax` of a vector.
    #[inline]
    pub fn log_softmax<T: Real, const N: usize>(x: SVector<T, N>) -> SVector<T, N> {
        LogSoftmax.apply(x)
    }

    /// [`log_softmax`] and its pullback.
    #[inline]
    pub fn log_softmax_vjp<T: Real, const N: usize>(
        x: SVector<T, N>,
    ) -> (SVector<T, N>, impl FnOnce(SVector<T, N>) -> SVector<T, N>) {
        rule::log_softmax(x)
    }

    /// The reverse derivative of [`log_softmax`].
    #[inline]
    pub fn log_softmax_rev<T: Real, const N: usize>(
        x: SVector<T, N>,
        d: SVector<T, N>,
    ) -> SVector<T, N> {
        rule::log_softmax(x).1(d)
    }
}

/// Matrices with a column per example (a layer's `W X`), to which a bias is added column by
/// column: static matrices and heap ones, the bias a static vector either way.
pub trait Columns: Sized {
    /// One column.
    type Column;
    /// `self` with `b` added to every column, in the storage of `self`.
    #[must_use]
    fn plus_columns(self, b: &Self::Column) -> Self;
    /// The sum of the columns.
    fn column_sum(&self) -> Self::Column;
}

/// `b` added to every column of the column-major `entries` (`R` rows).
fn add_to_columns<T: Real, const R: usize>(entries: &mut [T], b: &SVector<T, R>) {
    for column in entries.chunks_exact_mut(R) {
        for (v, &bi) in column.iter_mut().zip(b.as_slice()) {
            *v += bi;
        }
    }
}

/// The sum of the columns of the column-major `entries` (`R` rows).
fn sum_of_columns<T: Real, const R: usize>(entries: &[T]) -> SVector<T, R> {
    let mut s = SVector::<T, R>::zeros();
    for column in entries.chunks_exact(R) {
        for (acc, &v) in s.as_mut_slice().iter_mut().zip(column) {
            *acc += v;
        }
    }
    s
}

impl<T: Real, const R: usize, const C: usize> Columns for SMatrix<T, R, C> {
    type Column = SVector<T, R>;
    #[inline]
    fn plus_columns(mut self, b: &SVector<T, R>) -> Self {
        add_to_columns(self.as_mut_slice(), b);
        self
    }
    #[inline]
    fn column_sum(&self) -> SVector<T, R> {
        sum_of_columns(self.as_slice())
    }
}

#[cfg(feature = "alloc")]
impl<T: Real, const R: usize, const C: usize> Columns for crate::HeapMatrix<T, R, C> {
    type Column = SVector<T, R>;
    #[inline]
    fn plus_columns(mut self, b: &SVector<T, R>) -> Self {
        add_to_columns(self.as_mut_slice(), b);
        self
    }
    #[inline]
    fn column_sum(&self) -> SVector<T, R> {
        sum_of_columns(self.as_slice())
    }
}

// Each `_vjp` and `_rev` at its function's spans (see `lens_macros::__companions`).
lens_macros::__companions! {
    /// A layer's bias: `b` added to every column of `m` (a column per example), for `#[lens]`
    /// bodies: `relu(add_bias(w * x, b))` with `#[param] b: SVector<T, R>`.
    ///
    /// ```
    /// use paralens::fns::{add_bias, add_bias_rev};
    /// use paralens::nalgebra::{SMatrix, SVector};
    /// let m = SMatrix::<f64, 2, 3>::zeros();
    /// let b = SVector::<f64, 2>::new(1.0, -1.0);
    /// assert_eq!(add_bias(m, b), SMatrix::<f64, 2, 3>::from_fn(|i, _| b[i]));
    /// // The bias's change is the sum of the columns' changes.
    /// let (_, db) = add_bias_rev(m, b, SMatrix::<f64, 2, 3>::repeat(0.5));
    /// assert_eq!(db, SVector::<f64, 2>::repeat(1.5));
    /// ```
    #[inline]
    pub fn add_bias<M: Columns>(m: M, b: M::Column) -> M {
        m.plus_columns(&b)
    }

    /// [`add_bias`] and its pullback: `(d, the sum of d's columns)`.
    #[inline]
    pub fn add_bias_vjp<M: Columns>(
        m: M,
        b: M::Column,
    ) -> (M, impl FnOnce(M) -> (M, M::Column)) {
        (m.plus_columns(&b), |d: M| {
            let db = d.column_sum();
            (d, db)
        })
    }

    /// The reverse derivative of [`add_bias`]: the changes of `m` and `b`.
    #[inline]
    pub fn add_bias_rev<M: Columns>(m: M, b: M::Column, d: M) -> (M, M::Column) {
        add_bias_vjp(m, b).1(d)
    }
}

// Each `_vjp` and `_rev` at its function's spans (see `lens_macros::__companions`).
lens_macros::__companions! {
    /// A heap matrix's values as a static matrix, for `#[lens]` bodies: heap weights applied to
    /// a static input give a heap value (`w * x` with `w: HeapMatrix<T, O, I>`), and
    /// `to_static(w * x)` is the `SVector` that static code downstream takes. The reverse gives
    /// the change back as a heap matrix.
    ///
    /// ```
    /// use paralens::HeapMatrix;
    /// use paralens::fns::{to_static, to_static_rev};
    /// use paralens::nalgebra::SVector;
    /// let h = HeapMatrix::<f64, 3, 1>::from_fn(|i, _| i as f64);
    /// assert_eq!(to_static(h.clone()), SVector::<f64, 3>::new(0.0, 1.0, 2.0));
    /// let dh = to_static_rev(h, SVector::<f64, 3>::repeat(0.5));
    /// assert_eq!(*dh, SVector::<f64, 3>::repeat(0.5));
    /// ```
    #[cfg(feature = "alloc")]
    #[inline]
    pub fn to_static<T: Real, const R: usize, const C: usize>(
        h: crate::HeapMatrix<T, R, C>,
    ) -> SMatrix<T, R, C> {
        *h
    }

    /// [`to_static`] and its pullback (the change in a heap block).
    #[cfg(feature = "alloc")]
    #[inline]
    pub fn to_static_vjp<T: Real, const R: usize, const C: usize>(
        h: crate::HeapMatrix<T, R, C>,
    ) -> (
        SMatrix<T, R, C>,
        impl FnOnce(SMatrix<T, R, C>) -> crate::HeapMatrix<T, R, C>,
    ) {
        (*h, |d: SMatrix<T, R, C>| crate::HeapMatrix::from_matrix(&d))
    }

    /// The reverse derivative of [`to_static`].
    #[cfg(feature = "alloc")]
    #[inline]
    pub fn to_static_rev<T: Real, const R: usize, const C: usize>(
        h: crate::HeapMatrix<T, R, C>,
        d: SMatrix<T, R, C>,
    ) -> crate::HeapMatrix<T, R, C> {
        to_static_vjp(h).1(d)
    }

    /// A static matrix's values in a heap block, for `#[lens]` bodies that feed static values to
    /// heap code (the inverse of [`to_static`]). The reverse gives the change back as a static
    /// matrix.
    ///
    /// ```
    /// use paralens::fns::{to_heap, to_heap_rev};
    /// use paralens::HeapMatrix;
    /// use paralens::nalgebra::SVector;
    /// let v = SVector::<f64, 2>::new(1.0, -2.0);
    /// assert_eq!(*to_heap(v), v);
    /// let d = HeapMatrix::<f64, 2, 1>::from_matrix(&SVector::<f64, 2>::new(0.5, 0.25));
    /// assert_eq!(to_heap_rev(v, d), SVector::<f64, 2>::new(0.5, 0.25));
    /// ```
    #[cfg(feature = "alloc")]
    #[inline]
    pub fn to_heap<T: Real, const R: usize, const C: usize>(
        m: SMatrix<T, R, C>,
    ) -> crate::HeapMatrix<T, R, C> {
        crate::HeapMatrix::from_matrix(&m)
    }

    /// [`to_heap`] and its pullback (the change as a static matrix).
    #[cfg(feature = "alloc")]
    #[inline]
    pub fn to_heap_vjp<T: Real, const R: usize, const C: usize>(
        m: SMatrix<T, R, C>,
    ) -> (
        crate::HeapMatrix<T, R, C>,
        impl FnOnce(crate::HeapMatrix<T, R, C>) -> SMatrix<T, R, C>,
    ) {
        (
            crate::HeapMatrix::from_matrix(&m),
            |d: crate::HeapMatrix<T, R, C>| *d,
        )
    }

    /// The reverse derivative of [`to_heap`].
    #[cfg(feature = "alloc")]
    #[inline]
    pub fn to_heap_rev<T: Real, const R: usize, const C: usize>(
        m: SMatrix<T, R, C>,
        d: crate::HeapMatrix<T, R, C>,
    ) -> SMatrix<T, R, C> {
        to_heap_vjp(m).1(d)
    }
}
