// `f64 * f32` in a `#[lens]` body: the type error is reported at the operator, by rustc for
// the function as written and once by the reverse rule, with no error at `#[lens]` or at an
// argument's declaration.
use paralens::prelude::*;

#[lens]
fn mix(x: f64, y: f32) -> f64 {
    x * y
}

fn main() {}
