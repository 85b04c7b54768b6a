//! The leading K = 5 principal directions of the 8x8 digits (64 features, shipped with the
//! crate), learned as a point of the Stiefel manifold `Stiefel<f64, 64, 5>` by maximising the
//! variance it captures, `trace(W^T C W)` for the covariance `C`: the gradient is the reverse
//! derivative `#[lens]` generates, and Riemannian gradient ascent keeps `W` orthonormal.
//! Compared with nalgebra's symmetric eigendecomposition of `C`: the largest principal angle
//! between the two subspaces, and the time of each.
//!
//! ```text
//! cargo run --release --example principal_subspace
//! ```

use clap::Parser;
use paralens::data::digits;
use paralens::manifold::{Manifold, Stiefel};
use paralens::optim::{Optimizer, RiemannianSgd};
use paralens::prelude::*;
use std::time::{Duration, Instant};

/// Features and directions.
const D: usize = 64;
const K: usize = 5;

/// The variance the columns of `w` capture: `trace(W^T C W)`.
#[lens]
fn captured_variance(w: Stiefel<f64, D, K>, #[nodiff] c: &SMatrix<f64, D, D>) -> f64 {
    let m = w.0;
    let cm = *c * m;
    m.component_mul(&cm).sum()
}

/// The covariance of the digits' pixels (scaled to 0..1), boxed: 32 KB.
pub fn covariance() -> Box<SMatrix<f64, D, D>> {
    let data = digits();
    let n = data.images.len() as f64;
    let mut mean = SVector::<f64, D>::zeros();
    for img in &data.images {
        mean += SVector::<f64, D>::from_fn(|j, _| img[j] / 16.0);
    }
    mean /= n;
    let mut c = Box::new(SMatrix::<f64, D, D>::zeros());
    for img in &data.images {
        let x = SVector::<f64, D>::from_fn(|j, _| img[j] / 16.0) - mean;
        *c += x * x.transpose();
    }
    *c /= n;
    c
}

/// The outcome of the comparison.
pub struct Report {
    /// Largest principal angle between the learned and the eigen subspace, in radians.
    pub largest_angle: f64,
    /// The variance the learned frame captures, and the sum of the five largest eigenvalues.
    pub captured: (f64, f64),
    /// Riemannian steps taken.
    pub steps: usize,
    /// Time of the Riemannian ascent and of the eigendecomposition.
    pub times: (Duration, Duration),
}

/// Learns the frame and compares it with the eigendecomposition.
pub fn run(max_steps: usize) -> Report {
    let c = covariance();
    // Ascent: the change is +lr times the gradient, lr below 1 / (2 lambda_max) (the trace
    // bounds lambda_max).
    let lr = 0.5 / c.trace();
    let opt = RiemannianSgd::new(lr);
    let start = Instant::now();
    let mut w = Stiefel::new(SMatrix::<f64, D, K>::from_fn(|i, j| {
        ((i * 7 + j * 13) as f64 * 0.37).sin()
    }));
    let mut state: () = opt.init_state(&w);
    let mut steps = 0;
    let mut last = captured_variance(w, &c);
    while steps < max_steps {
        let g = captured_variance_rev(w, &c, 1.0);
        opt.update(&mut state, &mut w, &Stiefel(g.0 * lr));
        steps += 1;
        let now = captured_variance(w, &c);
        if (now - last).abs() <= 1e-15 * now {
            break;
        }
        last = now;
    }
    let learned = start.elapsed();
    assert!(w.off_manifold() < 1e-9);

    let start = Instant::now();
    let eig = c.symmetric_eigen();
    let mut order: Vec<usize> = (0..D).collect();
    order.sort_by(|&a, &b| eig.eigenvalues[b].total_cmp(&eig.eigenvalues[a]));
    let u = SMatrix::<f64, D, K>::from_fn(|i, j| eig.eigenvectors[(i, order[j])]);
    let decomposed = start.elapsed();

    // sin of the largest principal angle: the spectral norm of W's part outside span(U).
    let outside = w.0 - u * u.tr_mul(&w.0);
    let sin = outside.svd(false, false).singular_values.max();
    let top: f64 = order[..K].iter().map(|&k| eig.eigenvalues[k]).sum();
    Report {
        largest_angle: sin.min(1.0).asin(),
        captured: (captured_variance(w, &c), top),
        steps,
        times: (learned, decomposed),
    }
}

/// The leading 5 principal directions of the 8x8 digits learned on the Stiefel manifold by
/// Riemannian gradient ascent on the variance they capture, compared with nalgebra's
/// symmetric eigendecomposition.
// No options: the parser is there for --help and --version, and to refuse any argument.
#[derive(Parser, Debug)]
#[command(name = "principal_subspace", version)]
struct Args {}

fn main() {
    Args::parse();
    let r = run(100_000);
    println!("8x8 digits: the leading {K} principal directions of {D} features");
    println!(
        "Riemannian gradient ascent on Stiefel({D}, {K}): {} steps, {:.1} ms; captured variance {:.12}",
        r.steps,
        r.times.0.as_secs_f64() * 1e3,
        r.captured.0
    );
    println!(
        "nalgebra symmetric eigendecomposition: {:.1} ms; sum of the {K} largest eigenvalues {:.12}",
        r.times.1.as_secs_f64() * 1e3,
        r.captured.1
    );
    println!(
        "largest principal angle between the subspaces: {:.2e} rad",
        r.largest_angle
    );
}
