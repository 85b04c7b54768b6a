// A `while` loop has no constant bound on its trip count: the error points at it and says
// what to write instead.
use paralens::prelude::*;

#[lens]
fn halve_until_small(x: f64) -> f64 {
    let mut acc = x;
    while acc > 1.0 {
        acc = acc * 0.5;
    }
    acc
}

fn main() {}
