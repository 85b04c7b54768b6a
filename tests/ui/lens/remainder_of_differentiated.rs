// `%` of a differentiated value (not of forward-only data read from one): one error at it.
use paralens::prelude::*;

#[lens]
fn wrap(x: f64) -> f64 {
    x % 2.0 + x
}

fn main() {}
