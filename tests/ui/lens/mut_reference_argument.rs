// An `&mut` argument: refused at the argument, once (assigning through it in the body is
// the same mistake, not a second error).
use paralens::prelude::*;

#[lens]
fn bump(x: &mut f64, y: f64) -> f64 {
    *x = *x + y;
    y * 2.0
}

fn main() {}
