// `i32::abs(x)` of a differentiated `x`: one error saying to use the float's function (rustc
// said "no function `abs_vjp`", suggesting `i32::add_vjp`).
use paralens::prelude::*;

#[lens]
fn magnitude(x: f64) -> f64 {
    i32::abs(x) * 2.0
}

fn main() {}
