// A lens returns new values; it cannot write through `&mut`.
use paralens::prelude::*;

#[lens]
fn bump(x: &mut f64, y: f64) -> f64 {
    *x = *x + y;
    y * 2.0
}

fn main() {}
