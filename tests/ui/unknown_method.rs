// `sinh` has no reverse rule.
use paralens::prelude::*;

#[lens]
fn f(x: f64) -> f64 {
    x.sinh() * 2.0
}

fn main() {}
