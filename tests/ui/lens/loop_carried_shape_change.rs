// A loop whose body changes the shape of the value it carries (a recurrent step whose weight
// has the wrong shape): one error, at the product, as for the same code without `#[lens]`
// (it was three: two more at `#[lens]`, where the loop hands the value on and back).
use nalgebra::{SMatrix, SVector};
use paralens::prelude::*;

#[lens]
fn rnn(w: SMatrix<f64, 4, 3>, x: SVector<f64, 3>) -> SVector<f64, 3> {
    let mut h = x;
    for _ in 0..3 {
        h = w * h;
    }
    h
}

#[lens]
fn pairs(x: f64, y: f64) -> f64 {
    let mut acc = (x, y);
    for _ in 0..2 {
        acc = (acc.0 * acc.1, acc.0, acc.1);
    }
    acc.0
}

fn main() {}
