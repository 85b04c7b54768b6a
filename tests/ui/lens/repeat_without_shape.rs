// `SVector::repeat(x)` of a differentiated value with its shape left to inference: one error
// asking for the shape in the call (its entries are filled by a loop of constant length).
use paralens::prelude::*;

#[lens]
fn spread(x: f64) -> f64 {
    let v: SVector<f64, 3> = SVector::repeat(x);
    v.sum()
}

fn main() {}
