// `powf` with a scalar exponent on a vector (a float method of several operands on a
// matrix): one error, at the method, naming the type and saying what vectors have instead.
// The exponent, a scalar where the rule takes the receiver's type, was a second error.
use paralens::prelude::*;

#[lens]
fn f(v: SVector<f64, 3>, a: f64) -> f64 {
    v.powf(a).sum()
}

fn main() {}
