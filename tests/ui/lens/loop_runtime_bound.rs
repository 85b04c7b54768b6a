// A loop whose end is an argument runs a number of times known only at run time: the
// reverse pass would need storage of unknown size. The error points at the bound.
use paralens::prelude::*;

#[lens]
fn repeat_square(x: f64, #[nodiff] n: usize) -> f64 {
    let mut acc = x;
    for _ in 0..n {
        acc = acc * acc;
    }
    acc
}

fn main() {}
