// `for (i, t) in v.iter().enumerate()` over a differentiated vector: one error at the pattern
// that says to loop over a range of indices and read `v[i]` (it said only that the pattern is
// a name or `_`).
use paralens::prelude::*;

#[lens]
fn weighted(v: SVector<f64, 3>) -> f64 {
    let mut s = 0.0;
    for (i, t) in v.iter().enumerate() {
        s += *t * i as f64;
    }
    s
}

fn main() {}
