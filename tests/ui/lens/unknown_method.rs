// `to_degrees` has no reverse rule: the error lists what is supported and the way out.
use paralens::prelude::*;

#[lens]
fn f(x: f64) -> f64 {
    x.to_degrees() * 2.0
}

fn main() {}
