// A differentiated `dot` with a scalar operand: one error, the reverse rule's, at the method
// (saying what `dot` takes); not a second one from nalgebra's `dot` in the function as written,
// nor one at `#[lens]` from the change's type.
use paralens::prelude::*;

#[lens]
fn d(v: SVector<f64, 3>, x: f64) -> f64 {
    v.dot(x)
}

fn main() {}
