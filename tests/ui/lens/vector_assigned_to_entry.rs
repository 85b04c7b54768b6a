// `v[0] = e` of a vector `e`: one error, at `e`, not two more in the reverse sweep.
use nalgebra::SVector;
use paralens::prelude::*;

#[lens]
fn first(x: SVector<f64, 3>) -> SVector<f64, 3> {
    let mut v = x;
    v[0] = x * 2.0;
    v
}

fn main() {}
