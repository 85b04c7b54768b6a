// `break` in a differentiated loop is refused at the keyword, here a `break` out of a nested
// loop to the differentiated loop's label.
use paralens::prelude::*;

#[lens]
fn capped(x: f64) -> f64 {
    let mut acc = x;
    'outer: for i in 0..8 {
        acc = acc * x;
        for j in 0..2 {
            if i + j > 5 {
                break 'outer;
            }
        }
    }
    acc
}

fn main() {}
