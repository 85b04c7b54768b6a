// A body whose value is not of the declared return type: one error, at the value.
use paralens::prelude::*;

#[lens]
fn halve(x: f64) -> f32 {
    x * 0.5
}

fn main() {}
