//! Activations as functions in the `#[lens]` calling convention: `name(x)` is the forward
//! map, `name_vjp(x)` returns the value and its pullback, `name_rev(x, d)` the reverse
//! derivative. A `#[lens]` body that calls `relu(h)` uses `relu_vjp` from here.
//!
//! ```
//! use lens_core::fns::{sigmoid, sigmoid_rev};
//! assert_eq!(sigmoid(0.0_f64), 0.5);
//! assert_eq!(sigmoid_rev(0.0_f64, 1.0), 0.25);
//! ```

use crate::activation::Elementwise;
use crate::rules::activation as rule;
use crate::{Lens, LogSoftmax, Real, Softmax};
use nalgebra::SVector;

macro_rules! entrywise_fn {
    ($($name:ident, $vjp:ident, $rev:ident, $doc:literal;)*) => {$(
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

        #[doc = concat!("The reverse derivative of [`", stringify!($name), "`] at `x`, applied to `d`.")]
        #[inline]
        pub fn $rev<V: Elementwise>(x: V, d: V) -> V {
            $vjp(x).1(d)
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

/// `x` where positive, `alpha x` elsewhere, entry-wise; `alpha` gets no change.
#[inline]
pub fn leaky_relu<V: Elementwise>(x: V, alpha: V::Scalar) -> V {
    x.map_entries(|v| rule::leaky_relu(v, alpha).0)
}

/// [`leaky_relu`] and its pullback (the slope's slot is `()`: it is not differentiated).
#[inline]
pub fn leaky_relu_vjp<V: Elementwise>(x: V, alpha: V::Scalar) -> (V, impl FnOnce(V) -> (V, ())) {
    (
        x.map_entries(|v| rule::leaky_relu(v, alpha).0),
        #[inline(always)]
        move |d: V| {
            (
                d.zip_entries(&x, |dv, v| rule::leaky_relu(v, alpha).1(dv)),
                (),
            )
        },
    )
}

/// The reverse derivative of [`leaky_relu`] in `x`.
#[inline]
pub fn leaky_relu_rev<V: Elementwise>(x: V, alpha: V::Scalar, d: V) -> V {
    leaky_relu_vjp(x, alpha).1(d).0
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
pub fn softmax_rev<T: Real, const N: usize>(x: SVector<T, N>, d: SVector<T, N>) -> SVector<T, N> {
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
