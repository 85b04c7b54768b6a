// `norm` of a scalar: one error, at the method, saying which values it is differentiated on.
use paralens::prelude::*;

#[lens]
fn length(x: f64) -> f64 {
    x.norm() * 2.0
}

fn main() {}
