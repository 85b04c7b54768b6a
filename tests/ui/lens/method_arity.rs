// `powf` is differentiated with one argument: the error at the method says so.
use paralens::prelude::*;

#[lens]
fn f(x: f64, y: f64) -> f64 {
    x.powf(y, 2.0) * 2.0
}

fn main() {}
