// A method that may store its argument (`Cell::replace`) and a plain function (which could
// keep the value anywhere), given a differentiated value in a condition.
use paralens::prelude::*;

fn record(_x: f64) -> bool {
    true
}

#[lens]
fn f(x: f64) -> f64 {
    let c = std::cell::Cell::new(0.0);
    if c.replace(x) > 1.0 {}
    if record(x) {}
    c.get() * x
}

fn main() {}
