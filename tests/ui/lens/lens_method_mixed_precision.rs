// A method of a differentiated scalar given an operand of another precision: one error, at
// the operand, with rustc's own suggestion (`y.into()`), nothing at `#[lens]`.
use paralens::prelude::*;

#[lens]
fn larger(x: f64, y: f32) -> f64 {
    x.max(y)
}

fn main() {}
