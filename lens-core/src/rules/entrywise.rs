//! Entry-wise negation, product and quotient of static matrices, written so that they
//! compile to vector code at every size.
//!
//! nalgebra's `-m` and `component_mul` go through generic iterators that LLVM vectorises only
//! while it unrolls them completely (up to about 32 entries); from 64 entries on they stay
//! scalar loops, 8x slower for `-m` on 128 entries. The rules use these instead, so the
//! generated reverse has no cliff at that size (`benches/generated.rs`, paired Rosenbrock).

use crate::Real;
use nalgebra::SMatrix;

/// `-m`, entry by entry.
#[inline(always)]
pub fn neg<T: Real, const R: usize, const C: usize>(m: &SMatrix<T, R, C>) -> SMatrix<T, R, C> {
    m.map(|x| -x)
}

/// `a ∘ b`, entry by entry.
#[inline(always)]
pub fn mul<T: Real, const R: usize, const C: usize>(
    a: &SMatrix<T, R, C>,
    b: &SMatrix<T, R, C>,
) -> SMatrix<T, R, C> {
    a.zip_map(b, |x, y| x * y)
}

/// `a ⊘ b`, entry by entry.
#[inline(always)]
pub fn div<T: Real, const R: usize, const C: usize>(
    a: &SMatrix<T, R, C>,
    b: &SMatrix<T, R, C>,
) -> SMatrix<T, R, C> {
    a.zip_map(b, |x, y| x / y)
}

#[cfg(test)]
mod tests {
    use super::*;
    use nalgebra::SVector;

    /// The same values as nalgebra's operators, at a size past full unrolling.
    #[test]
    fn agree_with_nalgebra() {
        let a = SVector::<f64, 100>::from_fn(|i, _| (i as f64 * 0.37).sin());
        let b = SVector::<f64, 100>::from_fn(|i, _| 1.5 + (i as f64 * 0.91).cos());
        assert_eq!(neg(&a), -a);
        assert_eq!(mul(&a, &b), a.component_mul(&b));
        assert_eq!(div(&a, &b), a.component_div(&b));
    }
}
