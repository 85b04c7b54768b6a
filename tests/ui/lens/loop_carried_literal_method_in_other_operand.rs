// The same mistake as `loop_carried_literal_of_unknown_type`, with the binding read first as
// an operand (`s + x[i] * s.cos()`, `s += x * s.sin()`): rustc checks both operands before it
// gives the literal's binding a type, so the method call is still the mistake: one error
// each, E0689, not "type annotations needed for `(_, _)`".
use nalgebra::SVector;
use paralens::prelude::*;

#[lens]
fn f(x: SVector<f64, 3>) -> f64 {
    let mut s = 0.0;
    for i in 0..3 {
        s = s + x[i] * s.cos();
    }
    s
}

#[lens]
fn g(x: f64) -> f64 {
    let mut s = 0.0;
    for _i in 0..3 {
        s += x * s.sin();
    }
    s
}

fn main() {}
