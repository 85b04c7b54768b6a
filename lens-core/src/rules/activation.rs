//! Activation functions: scalar rules (applied entry-wise by the lenses in
//! [`crate::activation`]) and the vector rules `softmax` and `log_softmax`.

use crate::Real;
use nalgebra::SVector;

/// `max(x, 0)`; reverse `d [x > 0]`. NaN passes through (it is not hidden as 0).
#[inline]
pub fn relu<T: Real>(x: T) -> (T, impl FnOnce(T) -> T) {
    let on = x > T::zero();
    (
        if x <= T::zero() { T::zero() } else { x },
        #[inline(always)]
        move |d| {
            if on { d } else { T::zero() }
        },
    )
}

/// `x` for `x > 0`, else `alpha x`; reverse `d` or `alpha d`.
#[inline]
pub fn leaky_relu<T: Real>(x: T, alpha: T) -> (T, impl FnOnce(T) -> T) {
    let on = x > T::zero();
    (
        if x <= T::zero() { alpha * x } else { x },
        #[inline(always)]
        move |d| {
            if on { d } else { alpha * d }
        },
    )
}

/// The logistic function `1 / (1 + e^-x)`, computed without overflow.
#[inline]
#[must_use]
pub fn sigmoid_value<T: Real>(x: T) -> T {
    if x >= T::zero() {
        T::one() / (T::one() + (-x).exp())
    } else {
        let e = x.exp();
        e / (T::one() + e)
    }
}

/// `sigma(x)`; reverse `d sigma(x) (1 - sigma(x))`.
#[inline]
pub fn sigmoid<T: Real>(x: T) -> (T, impl FnOnce(T) -> T) {
    let y = sigmoid_value(x);
    (
        y,
        #[inline(always)]
        move |d| d * y * (T::one() - y),
    )
}

/// `tanh x`; reverse `d (1 - tanh^2 x)`.
#[inline]
pub fn tanh<T: Real>(x: T) -> (T, impl FnOnce(T) -> T) {
    let y = x.tanh();
    (
        y,
        #[inline(always)]
        move |d| d * (T::one() - y * y),
    )
}

/// `ln(1 + e^x)`, computed as `max(x, 0) + ln(1 + e^-|x|)`; reverse `d sigma(x)`.
#[inline]
pub fn softplus<T: Real>(x: T) -> (T, impl FnOnce(T) -> T) {
    let y = x.max(T::zero()) + (-x.abs()).exp().ln_1p();
    (
        y,
        #[inline(always)]
        move |d| d * sigmoid_value(x),
    )
}

/// GELU, tanh form: `x/2 (1 + tanh(k (x + c x^3)))` with `k = sqrt(2/pi)`, `c = 0.044715`;
/// reverse `d (1/2 (1 + t) + x/2 (1 - t^2) k (1 + 3 c x^2))`.
#[inline]
pub fn gelu<T: Real>(x: T) -> (T, impl FnOnce(T) -> T) {
    let k = T::cst(core::f64::consts::FRAC_2_SQRT_PI * core::f64::consts::FRAC_1_SQRT_2);
    let c = T::cst(0.044_715);
    let half = T::cst(0.5);
    let t = (k * (x + c * x * x * x)).tanh();
    let y = half * x * (T::one() + t);
    (
        y,
        #[inline(always)]
        move |d| {
            let dt = k * (T::one() + T::cst(3.0) * c * x * x);
            d * (half * (T::one() + t) + half * x * (T::one() - t * t) * dt)
        },
    )
}

/// `ln sum exp x`, shifted by the maximum so it never overflows.
#[inline]
#[must_use]
pub fn log_sum_exp<T: Real, const N: usize>(x: &SVector<T, N>) -> T {
    let m = x.max();
    // Terms below the normal range cannot change a sum that holds e^0 = 1; skipping them
    // avoids exp's slow underflow path.
    let floor = T::MIN_NORMAL.ln();
    let s = x.iter().fold(T::zero(), |acc, &v| {
        let e = v - m;
        if e < floor { acc } else { acc + e.exp() }
    });
    m + s.ln()
}

/// `softmax(x)_i = e^x_i / sum e^x`; reverse `y ∘ (d - <y, d>)`.
#[inline]
pub fn softmax<T: Real, const N: usize>(
    x: SVector<T, N>,
) -> (SVector<T, N>, impl FnOnce(SVector<T, N>) -> SVector<T, N>) {
    let lse = log_sum_exp(&x);
    let y = x.map(|v| (v - lse).exp());
    (
        y,
        #[inline(always)]
        move |d: SVector<T, N>| {
            let yd = y.dot(&d);
            d.zip_map(&y, |di, yi| yi * (di - yd))
        },
    )
}

/// `log_softmax(x) = x - ln sum exp x`; reverse `d - softmax(x) sum d`.
#[inline]
pub fn log_softmax<T: Real, const N: usize>(
    x: SVector<T, N>,
) -> (SVector<T, N>, impl FnOnce(SVector<T, N>) -> SVector<T, N>) {
    let lse = log_sum_exp(&x);
    let y = x.add_scalar(-lse);
    (
        y,
        #[inline(always)]
        move |d: SVector<T, N>| {
            let s = d.sum();
            d.zip_map(&y, |di, yi| di - yi.exp() * s)
        },
    )
}
