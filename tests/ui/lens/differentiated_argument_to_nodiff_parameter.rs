// A differentiated value passed where the function called does not differentiate its
// parameter (`#[nodiff] k`): its change would be lost. One error, at the argument, saying
// so; it was rustc's "expected `&f64`, found `&()`" at `#[lens]`.
use paralens::prelude::*;

#[lens]
fn scaled(x: f64, #[nodiff] k: f64) -> f64 {
    x * k
}

#[lens]
fn outer(x: f64, y: f64) -> f64 {
    scaled(x, y) + y
}

fn main() {}
