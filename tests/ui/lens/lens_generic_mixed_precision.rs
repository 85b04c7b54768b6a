// `T * f64` in a function generic over its scalar type: one error, at the operand.
use paralens::prelude::*;

#[lens]
fn scaled<T: Real>(x: T, y: f64) -> T {
    (x * y).sin() + x
}

fn main() {}
