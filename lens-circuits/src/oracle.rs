//! The Boolean-difference oracle: a brute-force reverse derivative to test against.
//!
//! For `f: Z2^n -> Z2^m`, `R[f](x, d)_i = parity((f(x) ^ f(x ^ e_i)) & d)`. It equals the
//! compositional reverse derivative on circuits where no wire meets itself in an AND (read
//! once in each product); elsewhere they differ (`x & x` has reverse 0, but its Boolean
//! difference is `d`), because the reverse derivative belongs to the circuit, not to the
//! function it computes.

use core::fmt;

/// `R[f](x, d)` by brute force: bit `i` of the result is `parity((f(x) ^ f(x ^ e_i)) & d)`.
/// Inputs and outputs are bit vectors (bit `i` of the `u64` is variable `i`).
///
/// ```
/// use paralens::circuits::oracle::boolean_reverse;
/// // f(x0, x1) = x0 & x1: the Boolean difference in x0 is x1.
/// let f = |x: u64| (x & 1) & (x >> 1);
/// assert_eq!(boolean_reverse(f, 2, 0b10, 1), 0b01);
/// ```
///
/// # Panics
/// If `n_inputs > 64`.
pub fn boolean_reverse(f: impl Fn(u64) -> u64, n_inputs: u32, x: u64, d: u64) -> u64 {
    assert!(
        n_inputs <= 64,
        "the oracle takes at most 64 input bits, got {n_inputs}"
    );
    let fx = f(x);
    (0..n_inputs).fold(0, |acc, i| {
        let flip = (fx ^ f(x ^ (1 << i))) & d;
        acc | (u64::from(flip.count_ones() & 1) << i)
    })
}

/// Where a reverse derivative disagrees with the oracle.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OracleMismatch {
    /// The input point.
    pub x: u64,
    /// The output change.
    pub d: u64,
    /// The reverse derivative under test.
    pub got: u64,
    /// The Boolean difference.
    pub want: u64,
}

impl fmt::Display for OracleMismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "at x = {:#b}, d = {:#b}: reverse derivative {:#b}, Boolean difference {:#b}",
            self.x, self.d, self.got, self.want
        )
    }
}

impl core::error::Error for OracleMismatch {}

/// Compares `rev(x, d)` with the oracle for every input point and every output basis change
/// (the reverse derivative is linear in `d`, so the basis suffices): `2^n * m` comparisons.
///
/// # Errors
/// The first point where they differ.
///
/// # Panics
/// If `n_inputs > 24` (more than 16 million points) or `n_outputs > 64`.
pub fn check_exhaustive(
    f: impl Fn(u64) -> u64,
    rev: impl Fn(u64, u64) -> u64,
    n_inputs: u32,
    n_outputs: u32,
) -> Result<(), OracleMismatch> {
    assert!(
        n_inputs <= 24,
        "exhaustive checks take at most 24 input bits, got {n_inputs}"
    );
    assert!(n_outputs <= 64, "at most 64 output bits, got {n_outputs}");
    for x in 0..(1u64 << n_inputs) {
        for j in 0..n_outputs {
            let d = 1 << j;
            let (got, want) = (rev(x, d), boolean_reverse(&f, n_inputs, x, d));
            if got != want {
                return Err(OracleMismatch { x, d, got, want });
            }
        }
    }
    Ok(())
}
