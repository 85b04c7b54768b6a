// Assigning to a binding that is not `let mut` is refused at the assignment.
use paralens::prelude::*;

#[lens]
fn f(x: f64) -> f64 {
    let y = x * 2.0;
    if x > 0.0 {
        y = y * x;
    }
    y
}

fn main() {}
