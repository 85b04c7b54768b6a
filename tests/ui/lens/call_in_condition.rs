// A plain function (which could keep the value anywhere) given a differentiated value in a
// condition.
use paralens::prelude::*;

fn record(_x: f64) -> bool {
    true
}

#[lens]
fn f(x: f64) -> f64 {
    if record(x) {}
    x * 2.0
}

fn main() {}
