// `v[i] op= e` reads the entry and then replaces it: an index computed with an effect would
// be computed twice and name two entries (found by a reviewer: the value and the gradient
// were those of `v[1] = v[0] + x`). Refused at the index; an index without effects is fine.
use paralens::prelude::*;

#[lens]
fn bump(x: f64, v: SVector<f64, 2>) -> f64 {
    let mut v = v;
    let mut k = 0usize;
    v[k] += x;
    v[{
        k += 1;
        k - 1
    }] += x;
    v[0] * v[1] * (k as f64)
}

fn main() {}
