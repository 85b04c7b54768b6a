//! nalgebra operations used by models: transpose, dot, component-wise product, sum.

use super::entrywise;
use crate::Real;
use core::borrow::Borrow;
use nalgebra::SMatrix;

/// `a^T`; reverse: `d^T`.
#[inline]
pub fn transpose<T: Real, const R: usize, const C: usize>(
    a: SMatrix<T, R, C>,
) -> (
    SMatrix<T, C, R>,
    impl FnOnce(SMatrix<T, C, R>) -> SMatrix<T, R, C>,
) {
    (a.transpose(), |d: SMatrix<T, C, R>| d.transpose())
}

/// `<a, b>` (sum of products); reverse: `(d b, d a)`. The second operand may be borrowed
/// (`x.dot(w)` with `#[nodiff] w: &SVector`).
#[inline]
pub fn dot<T: Real, const R: usize, const C: usize>(
    a: SMatrix<T, R, C>,
    b: impl Borrow<SMatrix<T, R, C>>,
) -> (T, impl FnOnce(T) -> (SMatrix<T, R, C>, SMatrix<T, R, C>)) {
    let b = *b.borrow();
    (
        a.dot(&b),
        #[inline(always)]
        move |d: T| (b * d, a * d),
    )
}

/// `a ∘ b` (component-wise); reverse: `(d ∘ b, d ∘ a)`. The second operand may be
/// borrowed.
#[inline]
pub fn component_mul<T: Real, const R: usize, const C: usize>(
    a: SMatrix<T, R, C>,
    b: impl Borrow<SMatrix<T, R, C>>,
) -> (
    SMatrix<T, R, C>,
    impl FnOnce(SMatrix<T, R, C>) -> (SMatrix<T, R, C>, SMatrix<T, R, C>),
) {
    let b = *b.borrow();
    (
        entrywise::mul(&a, &b),
        #[inline(always)]
        move |d: SMatrix<T, R, C>| (entrywise::mul(&d, &b), entrywise::mul(&d, &a)),
    )
}

/// The sum of all entries; reverse: `d` in every entry.
#[inline]
pub fn sum<T: Real, const R: usize, const C: usize>(
    a: SMatrix<T, R, C>,
) -> (T, impl FnOnce(T) -> SMatrix<T, R, C>) {
    (a.sum(), |d: T| SMatrix::from_element(d))
}

/// `<a, a>`: a dot product of a value with itself; reverse `2 d a` (one change, where
/// `dot(a, a)` would return two equal ones to be added).
#[inline]
pub fn dot_self<T: Real, const R: usize, const C: usize>(
    a: SMatrix<T, R, C>,
) -> (T, impl FnOnce(T) -> SMatrix<T, R, C>) {
    (
        a.dot(&a),
        #[inline(always)]
        move |d: T| a * (d + d),
    )
}

/// `a ∘ a`; reverse `2 d ∘ a`.
#[inline]
pub fn component_square<T: Real, const R: usize, const C: usize>(
    a: SMatrix<T, R, C>,
) -> (
    SMatrix<T, R, C>,
    impl FnOnce(SMatrix<T, R, C>) -> SMatrix<T, R, C>,
) {
    (
        entrywise::mul(&a, &a),
        #[inline(always)]
        move |d: SMatrix<T, R, C>| entrywise::mul(&d, &a) * (T::one() + T::one()),
    )
}

/// `a ⊘ b` (component-wise quotient); reverse `(d ⊘ b, -d ∘ a ⊘ b^2)`. The second operand
/// may be borrowed.
#[inline]
pub fn component_div<T: Real, const R: usize, const C: usize>(
    a: SMatrix<T, R, C>,
    b: impl Borrow<SMatrix<T, R, C>>,
) -> (
    SMatrix<T, R, C>,
    impl FnOnce(SMatrix<T, R, C>) -> (SMatrix<T, R, C>, SMatrix<T, R, C>),
) {
    let b = *b.borrow();
    let q = entrywise::div(&a, &b);
    (
        q,
        #[inline(always)]
        move |d: SMatrix<T, R, C>| {
            let da = entrywise::div(&d, &b);
            (da, entrywise::neg(&entrywise::mul(&da, &q)))
        },
    )
}

/// The Euclidean (Frobenius) norm; reverse `d a / |a|` (zero at the origin, where it has no
/// derivative).
#[inline]
pub fn norm<T: Real, const R: usize, const C: usize>(
    a: SMatrix<T, R, C>,
) -> (T, impl FnOnce(T) -> SMatrix<T, R, C>) {
    let n = a.norm();
    (
        n,
        #[inline(always)]
        move |d: T| {
            if n == T::zero() {
                SMatrix::zeros()
            } else {
                a * (d / n)
            }
        },
    )
}

/// The squared norm `<a, a>`; reverse `2 d a`.
#[inline]
pub fn norm_squared<T: Real, const R: usize, const C: usize>(
    a: SMatrix<T, R, C>,
) -> (T, impl FnOnce(T) -> SMatrix<T, R, C>) {
    dot_self(a)
}

/// The mean of the entries; reverse `d / (R C)` in every entry.
#[inline]
pub fn mean<T: Real, const R: usize, const C: usize>(
    a: SMatrix<T, R, C>,
) -> (T, impl FnOnce(T) -> SMatrix<T, R, C>) {
    (a.mean(), |d: T| {
        SMatrix::from_element(d / T::cst((R * C) as f64))
    })
}

/// The largest entry (`a.max()`); reverse `d` at that entry (the first of equal ones).
#[inline]
pub fn max_entry<T: Real, const R: usize, const C: usize>(
    a: SMatrix<T, R, C>,
) -> (T, impl FnOnce(T) -> SMatrix<T, R, C>) {
    extreme(a, |x, best| x > best)
}

/// The smallest entry (`a.min()`); reverse `d` at that entry (the first of equal ones).
#[inline]
pub fn min_entry<T: Real, const R: usize, const C: usize>(
    a: SMatrix<T, R, C>,
) -> (T, impl FnOnce(T) -> SMatrix<T, R, C>) {
    extreme(a, |x, best| x < best)
}

#[inline]
fn extreme<T: Real, const R: usize, const C: usize>(
    a: SMatrix<T, R, C>,
    better: impl Fn(T, T) -> bool,
) -> (T, impl FnOnce(T) -> SMatrix<T, R, C>) {
    let mut at = 0;
    for (i, &x) in a.iter().enumerate() {
        if better(x, a[at]) {
            at = i;
        }
    }
    (a[at], move |d: T| {
        let mut g = SMatrix::zeros();
        g[at] = d;
        g
    })
}
