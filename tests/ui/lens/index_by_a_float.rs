// Indexing a differentiated vector by a float literal: one error at the index (it was four,
// two of them at `#[lens]`, naming the rule's index types).
use nalgebra::{SMatrix, SVector};
use paralens::prelude::*;

#[lens]
fn pick(v: SVector<f64, 3>) -> f64 {
    v[1.0] * 2.0
}

#[lens]
fn entry(m: SMatrix<f64, 2, 2>) -> f64 {
    m[(0, 1.0)]
}

fn main() {}
