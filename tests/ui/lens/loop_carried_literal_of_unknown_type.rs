// A loop that carries a float literal's binding of no known type into a method call: one
// error, rustc's own for the same code outside `#[lens]` (E0689 with "specify a type for
// this binding"), not "type annotations needed for `(_, _)`" with a suggestion that cannot
// be written (the loop's type probe, `lens-macros/src/analyse/probes.rs`).
use paralens::prelude::*;

#[lens]
fn f(x: f64) -> f64 {
    let mut acc = 0.0;
    for _i in 0..3 {
        acc = acc.cos() + x;
    }
    acc
}

fn main() {}
