// `(a, b) = (b, a + b)` in a loop: one error at the tuple, advising assignments in turn
// through a temporary (a new `let` would not reach the next iteration).
use paralens::prelude::*;

#[lens]
fn fib(x: f64) -> f64 {
    let mut a = x;
    let mut b = 1.0;
    for _ in 0..5 {
        (a, b) = (b, a + b);
    }
    a + b
}

fn main() {}
