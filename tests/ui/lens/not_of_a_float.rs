// `!x` of a float in a `#[lens]` body: one error, the rule's, saying to write `-x`. The
// function as written runs `!` through the same rule as the sweep (before, rustc's own
// "cannot apply unary operator `!`" came beside it).
use paralens::prelude::*;

#[lens]
fn not_float(x: f64) -> f64 {
    let y = !x;
    y * 2.0
}

fn main() {}
