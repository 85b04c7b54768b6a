// An iterator chain over a differentiated vector is one error, at the iterator, saying what
// to write instead.
use paralens::prelude::*;

#[lens]
fn squares(v: SVector<f64, 3>) -> f64 {
    v.iter().map(|x| x * x).sum::<f64>()
}

fn main() {}
