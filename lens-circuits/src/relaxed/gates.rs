//! The 16 Boolean functions of two inputs: function `k` has the truth table `k`, its bit
//! `j = a + 2 b` being `f(a, b)` (the order of [`Gate::Lut2`](crate::netlist::Gate)'s table).

use lens_core::Real;

/// The functions' names, by number: `NAMES[8]` is `a & b` (table `1000`: true at `a = b = 1`).
pub const NAMES: [&str; 16] = [
    "false", "!(a | b)", "a & !b", "!b", "!a & b", "!a", "a ^ b", "!(a & b)", "a & b", "!(a ^ b)",
    "a", "a | !b", "b", "!a | b", "a | b", "true",
];

/// Whether function `k` is true at `(a, b)`.
#[inline]
#[must_use]
pub fn bit(k: usize, a: bool, b: bool) -> bool {
    (k >> (usize::from(a) + 2 * usize::from(b))) & 1 == 1
}

/// The relaxed gate with the truth table `tau` (each entry in `[0, 1]`) at `a`, `b` in
/// `[0, 1]`: the multilinear extension `c0 + c1 a + c2 b + c3 a b`, exact at 0/1 inputs.
#[inline]
#[must_use]
pub fn relaxed<T: Real>(tau: [T; 4], a: T, b: T) -> T {
    let c = coefficients(tau);
    c[0] + c[1] * a + c[2] * b + c[3] * a * b
}

/// `[c0, c1, c2, c3]` of [`relaxed`] for the table `tau`.
#[inline]
pub(super) fn coefficients<T: Real>(tau: [T; 4]) -> [T; 4] {
    [
        tau[0],
        tau[1] - tau[0],
        tau[2] - tau[0],
        tau[0] - tau[1] - tau[2] + tau[3],
    ]
}

/// The expected truth table of a gate whose functions have the probabilities `p`.
#[inline]
pub(super) fn expected_table<T: Real>(p: &[T; 16]) -> [T; 4] {
    let mut tau = [T::zero(); 4];
    for (k, &pk) in p.iter().enumerate() {
        for (j, t) in tau.iter_mut().enumerate() {
            if (k >> j) & 1 == 1 {
                *t += pk;
            }
        }
    }
    tau
}

/// The softmax of a gate's 16 parameters (shifted by their maximum).
#[inline]
pub(super) fn softmax<T: Real>(w: &[T]) -> [T; 16] {
    let m = w
        .iter()
        .copied()
        .fold(w[0], |m, v| if v > m { v } else { m });
    let mut p = [T::zero(); 16];
    let mut sum = T::zero();
    for (pk, &wk) in p.iter_mut().zip(w) {
        *pk = nalgebra::ComplexField::exp(wk - m);
        sum += *pk;
    }
    for pk in &mut p {
        *pk /= sum;
    }
    p
}
