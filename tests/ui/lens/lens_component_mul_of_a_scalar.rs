// `component_mul` with a scalar receiver: one error, at the method (it was three: the
// receiver, the operand, and `sum` of the value).
use paralens::prelude::*;

#[lens]
fn f(x: f64, v: SVector<f64, 3>) -> f64 {
    x.component_mul(&v).sum()
}

fn main() {}
