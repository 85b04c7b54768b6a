// A `#[lens]` function called with an argument missing: one error, at the call, with
// rustc's own help (the sweeps' calls of `inner_vjp` have the call's parentheses).
use paralens::prelude::*;

#[lens]
fn inner(x: f64, y: f64) -> f64 {
    x * y
}

#[lens]
fn outer(x: f64) -> f64 {
    inner(x) + x
}

fn main() {}
