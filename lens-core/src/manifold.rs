//! Parameters on a manifold: the unit sphere and the Stiefel manifold of matrices with
//! orthonormal columns.
//!
//! A model sees such a parameter as its ambient matrix (`.0`), so its reverse derivative lands
//! in the ambient space. The Riemannian optimizers (`optim::RiemannianSgd`,
//! `optim::RiemannianAdam`) project that change onto the tangent space at the point, step,
//! and retract back onto the manifold, so after every step the point is on the manifold.

use crate::{Flat, Real};
use nalgebra::{SMatrix, SVector};

/// A manifold embedded in the space of its representation: the projection onto the tangent
/// space at a point and a retraction.
pub trait Manifold<T: Real>: Flat<T> + Clone {
    /// Projects the ambient vector `v` onto the tangent space at `self`, in place.
    fn project(&self, v: &mut Self);
    /// Moves from `self` along the tangent vector `v` and back onto the manifold.
    fn retract(&mut self, v: &Self);
    /// How far the point is from the manifold (0 on it), in the manifold's own terms.
    fn off_manifold(&self) -> T;
}

/// A unit vector of `T^N`: the sphere `S^(N-1)`.
///
/// ```
/// use paralens::manifold::{Manifold, Sphere};
/// use paralens::nalgebra::SVector;
/// let mut p = Sphere::new(SVector::<f64, 3>::new(3.0, 0.0, 4.0));
/// assert!((p.0.norm() - 1.0).abs() < 1e-15);
/// let mut v = Sphere(SVector::<f64, 3>::new(1.0, 1.0, 1.0));
/// p.project(&mut v);
/// assert!(v.0.dot(&p.0).abs() < 1e-15); // tangent: orthogonal to the point
/// p.retract(&v);
/// assert!(p.off_manifold() < 1e-15);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, crate::Tangent)]
pub struct Sphere<T: Real, const N: usize>(pub SVector<T, N>);

impl<T: Real, const N: usize> Sphere<T, N> {
    /// The direction of `v` (which must not be zero).
    #[must_use]
    pub fn new(v: SVector<T, N>) -> Self {
        Self(v.normalize())
    }
}

impl<T: Real, const N: usize> Manifold<T> for Sphere<T, N> {
    /// `v - <v, p> p`.
    fn project(&self, v: &mut Self) {
        let along = v.0.dot(&self.0);
        v.0 -= self.0 * along;
    }

    /// `(p + v) / |p + v|`.
    fn retract(&mut self, v: &Self) {
        self.0 = (self.0 + v.0).normalize();
    }

    fn off_manifold(&self) -> T {
        (self.0.norm() - T::one()).abs()
    }
}

/// An `N x K` matrix with orthonormal columns (`K <= N`): the Stiefel manifold `V_K(T^N)`,
/// whose points are `K`-frames (a `K`-dimensional subspace with a basis).
#[derive(Clone, Copy, Debug, PartialEq, crate::Tangent)]
pub struct Stiefel<T: Real, const N: usize, const K: usize>(pub SMatrix<T, N, K>);

impl<T: Real, const N: usize, const K: usize> Stiefel<T, N, K> {
    /// The orthonormal frame of the columns of `m` (the `Q` of its QR decomposition with
    /// `R`'s diagonal positive); `m` must have full column rank.
    #[must_use]
    pub fn new(m: SMatrix<T, N, K>) -> Self {
        Self(q_factor(m))
    }
}

/// `Q` of `m = Q R` with `R`'s diagonal positive (the retraction is then a smooth function
/// of `m`): modified Gram-Schmidt, each column orthogonalised twice for accuracy. Written out
/// because nalgebra's QR needs its dimensions as type-level numbers, which a const generic
/// `N` is not.
fn q_factor<T: Real, const N: usize, const K: usize>(m: SMatrix<T, N, K>) -> SMatrix<T, N, K> {
    assert!(
        K <= N,
        "a Stiefel frame has at most as many columns ({K}) as rows ({N})"
    );
    let mut q = m;
    for j in 0..K {
        for _ in 0..2 {
            for i in 0..j {
                let along = q.column(i).dot(&q.column(j));
                let qi = q.column(i).into_owned();
                q.column_mut(j).axpy(-along, &qi, T::one());
            }
        }
        let n = q.column(j).norm();
        assert!(
            n > T::zero(),
            "the columns of a Stiefel point must be linearly independent"
        );
        q.column_mut(j).unscale_mut(n);
    }
    q
}

impl<T: Real, const N: usize, const K: usize> Manifold<T> for Stiefel<T, N, K> {
    /// `v - p sym(p^T v)`, with `sym(a) = (a + a^T) / 2`.
    fn project(&self, v: &mut Self) {
        let a = self.0.tr_mul(&v.0);
        let sym = (a + a.transpose()) * T::cst(0.5);
        v.0 -= self.0 * sym;
    }

    /// The `Q` factor of `p + v`.
    fn retract(&mut self, v: &Self) {
        self.0 = q_factor(self.0 + v.0);
    }

    /// The largest entry of `|p^T p - I|`.
    fn off_manifold(&self) -> T {
        (self.0.tr_mul(&self.0) - SMatrix::<T, K, K>::identity()).amax()
    }
}
