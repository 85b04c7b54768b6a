//! Twenty `#[lens]` functions, each checked against finite differences (the Z2 one is
//! printed). Also the crate used to measure how long 20 lens functions take to build
//! (docs/BENCHMARKS.md).
//!
//! ```text
//! cargo run --example lens_zoo
//! ```

use clap::Parser;
use paralens::check_gradient;
use paralens::prelude::*;

#[lens]
fn a1(x: f64) -> f64 {
    x * x * x - 2.0 * x
}

#[lens]
fn a2(x: f64, y: f64) -> f64 {
    (x * y).exp() / (1.0 + y * y)
}

#[lens]
fn a3(x: f64) -> f64 {
    let s = x.sin();
    let c = x.cos();
    s * s - c * c
}

#[lens]
fn a4(x: f64) -> f64 {
    x.tanh() * x.abs() + x.recip()
}

#[lens]
fn a5(x: f64, y: f64) -> f64 {
    x.max(y) - x.min(y) + x.powf(y)
}

#[lens]
fn a6(x: f64) -> f64 {
    if x > 0.0 { x.sqrt() } else { -x }
}

#[lens]
fn a7(x: f64, k: usize) -> f64 {
    match k {
        0 => x,
        1 => x * x,
        _ => x.powi(3),
    }
}

#[lens]
fn a8(x: f64) -> (f64, f64) {
    let t = (x * 2.0, x + 1.0);
    let (a, b) = t;
    (a * b, a - b)
}

#[lens]
fn a9(x: f64) -> f64 {
    let (p, q) = a8(x);
    p / q
}

#[lens]
fn a10(x: f64) -> f64 {
    a1(a3(x)) + a6(x)
}

#[lens]
fn a11(v: SVector<f64, 4>) -> f64 {
    v.dot(&v).sqrt()
}

#[lens]
fn a12(v: SVector<f64, 4>, w: SVector<f64, 4>) -> f64 {
    v.component_mul(&w).sum()
}

#[lens]
fn a13(m: SMatrix<f64, 3, 4>, v: SVector<f64, 4>) -> f64 {
    (m * v).sum()
}

#[lens]
fn a14(m: SMatrix<f64, 3, 4>) -> f64 {
    (m * m.transpose()).sum()
}

#[lens]
fn a15(v: SVector<f64, 4>) -> f64 {
    softmax(v).dot(&v)
}

#[lens]
fn a16(v: SVector<f64, 4>) -> f64 {
    relu(v).sum() + sigmoid(v).sum() + tanh(v).sum()
}

#[lens]
fn a17(v: SVector<f64, 4>) -> f64 {
    log_softmax(v).sum() + softplus(v).sum() + gelu(v).sum()
}

#[lens]
fn a18(v: SVector<f64, 4>) -> f64 {
    v.map(a1).sum()
}

#[lens]
fn a19(x: f64) -> f64 {
    let x = x * x;
    let x = x + 1.0;
    let x = x.ln();
    x * 3.0
}

#[lens]
fn a20(x: u64, y: u64, z: u64) -> u64 {
    (x & y) ^ (!z | x)
}

fn report(name: &str, r: paralens::GradCheck) {
    let verdict = if r.passes(1e-6) { "ok" } else { "MISMATCH" };
    println!("{name:>4}: {verdict}  ({r})");
}

/// Twenty `#[lens]` functions, each checked against finite differences (the Z2 one is
/// printed).
// No options: the parser is there for --help and --version, and to refuse any argument.
#[derive(Parser, Debug)]
#[command(name = "lens_zoo", version)]
struct Args {}

fn main() {
    Args::parse();
    report("a1", check_gradient(a1, a1_rev, 0.7, 1e-6));
    report(
        "a2",
        check_gradient(
            |(x, y)| a2(x, y),
            |(x, y), d| a2_rev(x, y, d),
            (0.7, 1.3),
            1e-6,
        ),
    );
    report("a3", check_gradient(a3, a3_rev, 0.7, 1e-6));
    report("a4", check_gradient(a4, a4_rev, 0.7, 1e-6));
    report(
        "a5",
        check_gradient(
            |(x, y)| a5(x, y),
            |(x, y), d| a5_rev(x, y, d),
            (0.7, 1.3),
            1e-6,
        ),
    );
    report("a6", check_gradient(a6, a6_rev, 0.7, 1e-6));
    report(
        "a7",
        check_gradient(|x: f64| a7(x, 2), |x, d| a7_rev(x, 2, d), 0.7, 1e-6),
    );
    report("a8", check_gradient(a8, a8_rev, 0.7, 1e-6));
    report("a9", check_gradient(a9, a9_rev, 0.7, 1e-6));
    report("a10", check_gradient(a10, a10_rev, 0.7, 1e-6));
    report(
        "a11",
        check_gradient(
            a11,
            a11_rev,
            SVector::<f64, 4>::new(0.3, -1.2, 0.8, 2.0),
            1e-6,
        ),
    );
    report(
        "a12",
        check_gradient(
            |(v, w)| a12(v, w),
            |(v, w), d| a12_rev(v, w, d),
            (
                SVector::<f64, 4>::new(0.3, -1.2, 0.8, 2.0),
                SVector::<f64, 4>::new(1.0, 0.5, -0.5, 0.2),
            ),
            1e-6,
        ),
    );
    report(
        "a13",
        check_gradient(
            |(m, v)| a13(m, v),
            |(m, v), d| a13_rev(m, v, d),
            (
                SMatrix::<f64, 3, 4>::from_fn(|i, j| (i as f64 - j as f64) * 0.3),
                SVector::<f64, 4>::new(0.3, -1.2, 0.8, 2.0),
            ),
            1e-6,
        ),
    );
    report(
        "a14",
        check_gradient(
            a14,
            a14_rev,
            SMatrix::<f64, 3, 4>::from_fn(|i, j| (i as f64 - j as f64) * 0.3),
            1e-6,
        ),
    );
    report(
        "a15",
        check_gradient(
            a15,
            a15_rev,
            SVector::<f64, 4>::new(0.3, -1.2, 0.8, 2.0),
            1e-6,
        ),
    );
    report(
        "a16",
        check_gradient(
            a16,
            a16_rev,
            SVector::<f64, 4>::new(0.3, -1.2, 0.8, 2.0),
            1e-6,
        ),
    );
    report(
        "a17",
        check_gradient(
            a17,
            a17_rev,
            SVector::<f64, 4>::new(0.3, -1.2, 0.8, 2.0),
            1e-6,
        ),
    );
    report(
        "a18",
        check_gradient(
            a18,
            a18_rev,
            SVector::<f64, 4>::new(0.3, -1.2, 0.8, 2.0),
            1e-6,
        ),
    );
    report("a19", check_gradient(a19, a19_rev, 0.7, 1e-6));
    let (dx, dy, dz) = a20_rev(0b1100, 0b1010, 0b0110, u64::MAX);
    let lanes = |w: u64| w & 0b1111;
    println!(
        " a20: Z2 reverse on 4 lanes: dx {:04b}, dy {:04b}, dz {:04b}",
        lanes(dx),
        lanes(dy),
        lanes(dz)
    );
}
