// `f64 * f32` in a `#[lens]` body: one error, the reverse rule's, at the operator. The function
// as written runs the product through the same rule, so rustc's own two errors for the operator
// do not come beside it; none at `#[lens]` or at an argument's declaration.
use paralens::prelude::*;

#[lens]
fn mix(x: f64, y: f32) -> f64 {
    x * y
}

fn main() {}
