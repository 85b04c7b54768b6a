// `acc += y` with `acc: f64`, `y: f32`: one error, the rule's, at the operator. Before, the
// sum's rule had one impl for scalars, so rustc inferred `y`'s type from it: a mismatch with
// the impossible suggestion `acc +.into()= y`, then two more errors at `#[lens]`.
use paralens::prelude::*;

#[lens]
fn add_into(x: f64, y: f32) -> f64 {
    let mut acc = x;
    acc += y;
    acc
}

fn main() {}
