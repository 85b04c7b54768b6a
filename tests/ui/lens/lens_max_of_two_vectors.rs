// `max` with an argument (a float method of two operands) on vectors: one error, at the
// method, naming the type and saying what vectors have instead (`v.max()`, `v.map(f)`).
use paralens::prelude::*;

#[lens]
fn f(v: SVector<f64, 3>, w: SVector<f64, 3>) -> f64 {
    v.max(w).sum()
}

fn main() {}
