// `x / y` with `x: f64`, `y: f32`, inside a branch of an `if`: one error, the rule's, at the
// operator. The analysis reads the branch in place, so the function as written runs the
// quotient through the same rule as `name_vjp` (before, the branch was read as a copy, and
// rustc's own errors for the operator came beside the rule's).
use paralens::prelude::*;

#[lens]
fn ratio(x: f64, y: f32) -> f64 {
    if x > 0.0 { x / y } else { x }
}

fn main() {}
