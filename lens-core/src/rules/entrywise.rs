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

/// `(a ∘ b) k` for a scalar `k`, entry by entry.
///
/// Up to 32 entries the factor goes to `b` first (`a ∘ (b k)`): LLVM unrolls the matrix
/// operations completely there and fuses them, and an `a` that arrives negated (the change
/// `-d` of a difference's right operand) then folds its sign into the constant (`-2 b`),
/// where `(a ∘ b) k` kept the negation, one instruction more per entry than a gradient
/// written by hand. The two are equal: `k` is 2 in the rules that use it, and doubling is
/// exact, except where `2 b` overflows (`|b|` above half the largest float, where `b ∘ b`
/// is already infinite): a zero change of such an entry then gives NaN instead of zero.
/// From 64 entries on, the order measured no better, and `(a ∘ b) k` is kept
/// (docs/history/BENCHMARKS-2026-11-30-to-12-04.md, seventh session of 2026-12-01).
#[inline(always)]
pub fn mul_scaled<T: Real, const R: usize, const C: usize>(
    a: &SMatrix<T, R, C>,
    b: &SMatrix<T, R, C>,
    k: T,
) -> SMatrix<T, R, C> {
    if R * C <= 32 {
        mul(a, &(b * k))
    } else {
        mul(a, b) * k
    }
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

    /// Both orders of `mul_scaled` (up to 32 entries and past them) give `(a ∘ b) k` to the
    /// bit, for a doubling and a negated `a` (the case the first order exists for).
    #[test]
    fn mul_scaled_is_the_scaled_product() {
        fn check<const N: usize>() {
            let a = SVector::<f64, N>::from_fn(|i, _| (i as f64 * 0.37).sin());
            let b = SVector::<f64, N>::from_fn(|i, _| 1.5 + (i as f64 * 0.91).cos());
            for a in [a, neg(&a)] {
                assert_eq!(mul_scaled(&a, &b, 2.0), a.component_mul(&b) * 2.0);
            }
        }
        check::<8>();
        check::<32>();
        check::<33>();
        check::<100>();
    }
}
