// An early `return` would leave the generated sweeps from the middle: refused at the `return`.
use paralens::prelude::*;

#[lens]
fn f(x: f64) -> f64 {
    let mut y = x * 2.0;
    y += x;
    if x > 0.0 {
        return y;
    }
    y
}

fn main() {}
