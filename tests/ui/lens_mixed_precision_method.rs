// `x.max(y)` with `x: f64`, `y: f32`, in a branch: one error, the rule's, at the method; not
// a mismatch at the argument followed by errors at `#[lens]`.
use paralens::prelude::*;

#[lens]
fn larger(x: f64, y: f32) -> f64 {
    if x > 0.0 { x.max(y) } else { x }
}

fn main() {}
