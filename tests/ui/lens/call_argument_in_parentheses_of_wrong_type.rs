// An entry in parentheses, of the wrong type, as a call's argument: one error, over the
// parentheses (there was a second, whose help was the impossible `(x.into()[0])`).
#![allow(unused_parens)]
use paralens::prelude::*;

#[lens]
fn mix(x: f64, y: f64) -> f64 {
    x * y
}

#[lens]
fn f(x: SVector<f32, 2>) -> f64 {
    mix((x[0]), 2.0)
}

fn main() {}
