// A loop is not differentiated: the error points at it and says what to write instead.
use paralens::prelude::*;

#[lens]
fn sum_of_powers(x: f64) -> f64 {
    let mut acc = 0.0;
    for k in 1..4 {
        acc = acc + x.powi(k);
    }
    acc
}

fn main() {}
