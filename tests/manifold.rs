//! Parameters on the sphere and the Stiefel manifold with the Riemannian optimizers: the
//! point stays on the manifold after every step, projections are tangent, and a Rayleigh
//! quotient written with `#[lens]` descends to the smallest eigenvector.

use paralens::manifold::{Manifold, Sphere, Stiefel};
use paralens::optim::{Optimizer, RiemannianAdam, RiemannianSgd};
use paralens::prelude::*;

/// Deterministic pseudo-random numbers in [-1, 1).
fn noise(k: usize) -> f64 {
    ((k as f64 * 12.9898).sin() * 43758.5453).fract() * 2.0 - 1.0
}

fn stays_on<P: Manifold<f64> + Tangent, O: Optimizer<P, Scalar = f64>>(
    name: &str,
    opt: &O,
    mut p: P,
    change: impl Fn(usize) -> P,
) {
    let mut s = opt.init_state(&p);
    for k in 0..300 {
        opt.update(&mut s, &mut p, &change(k));
        let off = p.off_manifold();
        assert!(off < 1e-6, "{name}: step {k} left the manifold by {off}");
    }
}

#[test]
fn every_step_stays_on_the_sphere() {
    let p = Sphere::new(SVector::<f64, 5>::new(1.0, 2.0, -1.0, 0.5, 0.0));
    let change = |k: usize| Sphere(SVector::<f64, 5>::from_fn(|i, _| noise(5 * k + i)));
    stays_on("sphere sgd", &RiemannianSgd::new(0.3), p, change);
    stays_on("sphere adam", &RiemannianAdam::new(0.05), p, change);
}

#[test]
fn every_step_stays_on_the_stiefel_manifold() {
    let p = Stiefel::new(SMatrix::<f64, 6, 3>::from_fn(|i, j| noise(7 * i + j + 100)));
    assert!(p.off_manifold() < 1e-12);
    let change = |k: usize| {
        Stiefel(SMatrix::<f64, 6, 3>::from_fn(|i, j| {
            noise(18 * k + 3 * i + j)
        }))
    };
    stays_on("stiefel sgd", &RiemannianSgd::new(0.3), p, change);
    stays_on("stiefel adam", &RiemannianAdam::new(0.05), p, change);
}

#[test]
fn projections_are_tangent_and_idempotent() {
    let p = Stiefel::new(SMatrix::<f64, 5, 2>::from_fn(|i, j| noise(3 * i + j + 7)));
    let mut v = Stiefel(SMatrix::<f64, 5, 2>::from_fn(|i, j| noise(11 * i + j + 50)));
    p.project(&mut v);
    // Tangent at p: p^T v is skew.
    let a = p.0.tr_mul(&v.0);
    assert!((a + a.transpose()).amax() < 1e-14);
    let once = v;
    p.project(&mut v);
    assert!((v.0 - once.0).amax() < 1e-14);
}

/// The Rayleigh quotient `<x, A x>` of a unit vector.
#[lens]
fn rayleigh(p: Sphere<f64, 4>, #[nodiff] a: SMatrix<f64, 4, 4>) -> f64 {
    let x = p.0;
    x.dot(&(a * x))
}

#[test]
fn rayleigh_quotient_descends_to_the_smallest_eigenvector() {
    let b = SMatrix::<f64, 4, 4>::from_fn(|i, j| noise(4 * i + j + 200));
    let a = b.transpose() * b + SMatrix::identity();
    // Eigenvalues 27.5, 4.34, 1.61, 1.17: a step of 0.01 stays below 2 / (2 * 27.5).
    let opt = RiemannianSgd::new(0.01);
    let mut p = Sphere::new(SVector::<f64, 4>::repeat(1.0));
    let mut s: () = opt.init_state(&p);
    for _ in 0..5000 {
        // The generated reverse derivative is the ambient gradient 2 A x.
        let g = rayleigh_rev(p, a, 1.0);
        opt.update(&mut s, &mut p, &Sphere(g.0 * -opt.lr));
    }
    let eig = a.symmetric_eigen();
    let (k, smallest) =
        eig.eigenvalues
            .iter()
            .enumerate()
            .fold(
                (0, f64::INFINITY),
                |best, (i, &l)| if l < best.1 { (i, l) } else { best },
            );
    assert!(
        (rayleigh(p, a) - smallest).abs() < 1e-9,
        "{} against {smallest}",
        rayleigh(p, a)
    );
    let u = eig.eigenvectors.column(k);
    assert!(1.0 - p.0.dot(&u).abs() < 1e-9);
}

#[test]
fn riemannian_adam_descends_to_the_smallest_eigenvector_too() {
    let b = SMatrix::<f64, 4, 4>::from_fn(|i, j| noise(4 * i + j + 200));
    let a = b.transpose() * b + SMatrix::identity();
    let opt = RiemannianAdam::new(0.01);
    let mut p = Sphere::new(SVector::<f64, 4>::repeat(1.0));
    let mut s = opt.init_state(&p);
    for k in 0..20_000 {
        // Adam's rate lens emits -1: the change is minus the gradient.
        let g = rayleigh_rev(p, a, 1.0);
        let mut lr = opt;
        lr.lr = 0.01 / (1.0 + k as f64 / 2000.0);
        lr.update(&mut s, &mut p, &Sphere(-g.0));
    }
    let smallest = a.symmetric_eigen().eigenvalues.min();
    assert!(
        (rayleigh(p, a) - smallest).abs() < 1e-4,
        "{} against {smallest}",
        rayleigh(p, a)
    );
    assert!(p.off_manifold() < 1e-12);
}
