// `v.map(f64::sin)`: a scalar type's method is no `#[lens]` function; one error saying what
// to write (rustc said "no function `sin_rev` found for `f64`").
use paralens::prelude::*;

#[lens]
fn sines(v: SVector<f64, 3>) -> SVector<f64, 3> {
    v.map(f64::sin)
}

fn main() {}
