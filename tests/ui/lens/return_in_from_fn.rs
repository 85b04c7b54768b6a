// `return` in the closure of a differentiated `from_fn`: its body becomes a loop's, where
// `return` would leave the function. Refused at the `return`, saying what to write.
use paralens::prelude::*;

#[lens]
fn f(x: f64) -> f64 {
    let m = SMatrix::<f64, 2, 2>::from_fn(|r, c| {
        if r == c {
            return x;
        }
        x * x
    });
    m.sum()
}

fn main() {}
