// Slicing a differentiated array is one error, at the range.
use paralens::prelude::*;

#[lens]
fn part(a: [f64; 4]) -> f64 {
    let s = a[1..3];
    s[0]
}

fn main() {}
