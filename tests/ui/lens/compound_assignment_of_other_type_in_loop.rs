// `s += v` of a scalar binding and a vector in a loop: one error, at the `+=`, not two more
// at `#[lens]` where the loop hands `s` on.
use nalgebra::SVector;
use paralens::prelude::*;

#[lens]
fn total(v: SVector<f64, 3>) -> f64 {
    let mut s = 0.0;
    for _ in 0..3 {
        s += v;
    }
    s
}

fn main() {}
