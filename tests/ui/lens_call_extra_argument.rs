// A `#[lens]` function called with an argument too many: one error, at the call, with
// rustc's own help (the reverse sweep spreads the callee's changes through
// `guard::Spread`, not a tuple pattern of the call's arity).
use paralens::prelude::*;

#[lens]
fn inner(x: f64, y: f64) -> f64 {
    x * y
}

#[lens]
fn outer(x: f64, y: f64) -> f64 {
    inner(x, y, x) + x
}

#[lens]
fn single(x: f64) -> f64 {
    x.sin()
}

#[lens]
fn outer_of_single(x: f64, y: f64) -> f64 {
    single(x, y)
}

fn main() {}
