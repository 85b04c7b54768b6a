// `f64 *= f32` in a loop: one error, at the operator. The loop's reverse runs the product in
// its own copies of the body (a tape, a recomputation); none of them reports it again.
use paralens::prelude::*;

#[lens]
fn power(x: f64, y: f32) -> f64 {
    let mut acc = x;
    for _ in 0..3 {
        acc *= y;
    }
    acc
}

fn main() {}
