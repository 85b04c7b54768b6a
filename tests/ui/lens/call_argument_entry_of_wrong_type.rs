// An entry of an `f32` vector passed where `mix` takes an `f64`: one error, over the whole
// entry `x[0]`, where rustc reports it in the function as written. The sweep's argument is
// spread over the same extent (it was a second error, at the entry's first token).
use paralens::prelude::*;

#[lens]
fn mix(x: f64, y: f64) -> f64 {
    x * y
}

#[lens]
fn f(x: SVector<f32, 2>) -> f64 {
    mix(x[0], 2.0)
}

fn main() {}
