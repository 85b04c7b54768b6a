// `loop` has no constant bound on its trip count: the error points at the keyword and says
// what to write instead.
use paralens::prelude::*;

#[lens]
fn halve(x: f64) -> f64 {
    let mut acc = x;
    loop {
        acc = acc * 0.5;
        if acc < 1.0 {
            break;
        }
    }
    acc
}

fn main() {}
