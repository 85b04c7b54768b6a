// Assigning to a slice of a differentiated value is refused at the range, saying what to
// write instead.
use paralens::prelude::*;

#[lens]
fn halves(v: SVector<f64, 3>) -> f64 {
    let mut w = v;
    w[0..2] = v[1];
    w.sum()
}

fn main() {}
