// An index is forward-only data: one that is itself differentiated (a Z2 word here) is
// refused at the index. Indices read from differentiated values by a comparison or a step
// function are forward-only and fine.
use paralens::prelude::*;

#[lens]
fn pick(x: SVector<f64, 3>, y: f64, w: u64) -> f64 {
    let k = x[(y > 0.0) as usize] + x[y.floor() as usize];
    k + x[w ^ 1]
}

fn main() {}
