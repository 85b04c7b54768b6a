// `continue` in a differentiated loop is refused at the keyword.
use paralens::prelude::*;

#[lens]
fn skipping(x: f64) -> f64 {
    let mut acc = x;
    for i in 0..8 {
        if i == 3 {
            continue;
        }
        acc = acc * x;
    }
    acc
}

fn main() {}
