// A parameter must receive changes; a `usize` gets none.
use paralens::prelude::*;

#[lens]
fn scale(#[param] n: usize, x: f64) -> f64 {
    x * n as f64
}

fn main() {}
