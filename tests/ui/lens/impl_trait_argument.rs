// `impl Trait` in a `#[lens]` signature: one error at it, saying to write a type parameter
// (rustc gave eight, five at `#[lens]`).
use paralens::prelude::*;

#[lens]
fn scaled(x: impl Real) -> f64 {
    let _ = x;
    1.0
}

fn main() {}
