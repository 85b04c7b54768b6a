// `break` and `continue` in a differentiated loop are refused at the keyword.
use paralens::prelude::*;

#[lens]
fn capped(x: f64) -> f64 {
    let mut acc = x;
    for i in 0..8 {
        if i == 3 {
            continue;
        }
        acc = acc * x;
        if i > 5 {
            break;
        }
    }
    acc
}

fn main() {}
