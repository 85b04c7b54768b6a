// A call of another `#[lens]` function with an argument of the wrong type: one error, at the
// argument, as without `#[lens]`.
use paralens::prelude::*;

#[lens]
fn square(x: f64) -> f64 {
    x * x
}

#[lens]
fn shifted(y: f32) -> f64 {
    square(y) + 1.0
}

fn main() {}
