// A method of a `let mut` binding given a differentiated value could store it where the
// reverse sweep cannot see it.
use paralens::prelude::*;

#[lens]
fn f(x: f64) -> f64 {
    let mut seen: Vec<f64> = Vec::new();
    if seen.push(x) == () {
        x * 2.0
    } else {
        x
    }
}

fn main() {}
