// A closure that reads a differentiated value: refused at the closure, saying what to write.
use paralens::prelude::*;

#[lens]
fn f(x: f64) -> f64 {
    let mut acc = x;
    for i in 0..3 {
        let g = |t: f64| t * acc;
        acc = acc * x + g(i as f64);
    }
    acc
}

fn main() {}
