// `break` and `continue` in a differentiated loop are refused at the keyword, one error
// each, including a `break` out of a nested loop to the differentiated loop's label.
use paralens::prelude::*;

#[lens]
fn capped(x: f64) -> f64 {
    let mut acc = x;
    'outer: for i in 0..8 {
        if i == 3 {
            continue;
        }
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
