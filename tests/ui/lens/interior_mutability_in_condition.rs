// A method that may store its argument (`Cell::replace`), given a differentiated value in a
// condition.
use paralens::prelude::*;

#[lens]
fn f(x: f64) -> f64 {
    let c = std::cell::Cell::new(0.0);
    if c.replace(x) > 1.0 {}
    c.get() * x
}

fn main() {}
