//! The smallest tour stop: one function becomes a lens.
//!
//! `#[lens]` keeps `f` as written and generates `f_rev` (its reverse derivative), `f_vjp`
//! (forward value and pullback) and the lens type `F`.
//!
//! ```text
//! cargo run --example 01_lens
//! ```

use clap::Parser;
use paralens::check_gradient;
use paralens::prelude::*;

/// `f(x, y) = x^2 y + sin(x y)`.
#[lens]
fn f(x: f64, y: f64) -> f64 {
    let xy = x * y;
    x * x * y + xy.sin()
}

/// The smallest tour stop: one function becomes a lens. `#[lens]` keeps `f` as written and
/// generates its reverse derivative `f_rev`, `f_vjp` and the lens type `F`; this prints them
/// at a point and checks them against finite differences.
// No options: the parser is there for --help and --version, and to refuse any argument.
#[derive(Parser, Debug)]
#[command(name = "01_lens", version)]
struct Args {}

fn main() {
    Args::parse();
    let (x, y) = (1.5, -0.5);
    println!("f({x}, {y}) = {:.6}", f(x, y));
    // R[f]((x, y), 1) is the gradient: (2xy + y cos(xy), x^2 + x cos(xy)).
    let (dx, dy) = f_rev(x, y, 1.0);
    let xy: f64 = x * y;
    println!("generated: df/dx = {dx:.6}, df/dy = {dy:.6}");
    println!(
        "by hand:   df/dx = {:.6}, df/dy = {:.6}",
        2.0 * x * y + y * xy.cos(),
        x * x + x * xy.cos()
    );
    let report = check_gradient(
        |(x, y): (f64, f64)| f(x, y),
        |(x, y), d| f_rev(x, y, d),
        (x, y),
        1e-6,
    );
    println!("finite differences: {report}");
    // The lens type composes like any other lens.
    let (value, pullback) = F.apply_vjp((x, y));
    println!(
        "F as a lens: value {value:.6}, pullback(2) = {:?}",
        pullback(2.0)
    );
}
