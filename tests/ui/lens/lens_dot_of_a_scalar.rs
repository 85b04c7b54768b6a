// `dot` with a scalar receiver: one error, at the method (nothing follows from the operand's
// type or from the value's).
use paralens::prelude::*;

#[lens]
fn f(x: f64, v: SVector<f64, 3>) -> f64 {
    x.dot(&v) * 2.0
}

fn main() {}
