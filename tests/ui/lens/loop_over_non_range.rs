// A differentiated loop runs over a range; an iterator of values is refused at it.
use paralens::prelude::*;

#[lens]
fn weighted(x: f64) -> f64 {
    let mut acc = 0.0;
    for w in [0.5, 0.25, 2.0] {
        acc = acc + w * x;
    }
    acc
}

fn main() {}
