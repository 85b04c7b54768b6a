// An integer literal in arithmetic with a differentiated value: one error at the literal,
// saying to write `2.0` (there were three, two naming the sweep's `Unmatched` and
// `add_vjp`).
use paralens::prelude::*;

#[lens]
fn affine(x: f64) -> f64 {
    x * 2 + 1.0
}

#[lens]
fn accumulated(x: f64) -> f64 {
    let mut acc = x;
    acc += 1;
    acc
}

fn main() {}
