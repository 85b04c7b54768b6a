// An `f64` times an `f32` vector, then summed: one error, at the operator; the sum after it
// reports nothing.
use paralens::prelude::*;

#[lens]
fn total(x: f64, v: SVector<f32, 3>) -> f64 {
    (x * v).sum()
}

fn main() {}
