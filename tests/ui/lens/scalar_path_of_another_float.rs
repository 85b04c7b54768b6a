// `f32::exp(x)` of an `f64` `x`: Rust refuses it ("expected `f32`, found `f64`"), and so
// does `#[lens]`, once, at `x` (it compiled and ran in f64, the path's type unread).
use paralens::prelude::*;

#[lens]
fn growth(x: f64) -> f64 {
    f32::exp(x) + 1.0
}

fn main() {}
