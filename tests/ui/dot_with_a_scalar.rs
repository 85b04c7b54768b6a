// A differentiated `dot` with a scalar operand: one error from the reverse rule at the
// method (saying what `dot` takes) and rustc's own for the function as written; no third one
// at `#[lens]` from the change's type.
use paralens::prelude::*;

#[lens]
fn d(v: SVector<f64, 3>, x: f64) -> f64 {
    v.dot(x)
}

fn main() {}
