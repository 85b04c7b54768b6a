// A differentiated loop's storage is sized by its range's end, so the range starts at 0 or
// later: a negative start is refused at the start, with the rewrite to use.
use paralens::prelude::*;

#[lens]
fn signed_counters(x: f64) -> f64 {
    let mut acc = 0.0;
    for k in -2..3 {
        acc = acc + x.powi(k) * k as f64;
    }
    acc
}

fn main() {}
