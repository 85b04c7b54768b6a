// Calling a closure on a differentiated value: one error at the callee, saying to write a
// `#[lens]` function (it was "cannot find function `f_vjp`").
use paralens::prelude::*;

#[lens]
fn squared(x: f64) -> f64 {
    let f = |a: f64| a * a;
    f(x)
}

fn main() {}
