// `let [x, y] = a` of a 3-array, and of a vector: one error each, at the pattern, as for the
// same code without `#[lens]` (the sweep reported it a second time at `let`).
use nalgebra::SVector;
use paralens::prelude::*;

#[lens]
fn two_of_three(a: [f64; 3]) -> f64 {
    let [x, y] = a;
    x * y
}

#[lens]
fn entries_of_a_vector(v: SVector<f64, 3>) -> f64 {
    let [a, b, c] = v;
    a * b * c
}

fn main() {}
