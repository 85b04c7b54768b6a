// A `let` without a value, assigned later in each branch: one error, at the `let`, saying
// what to write (the assignments after it were two more errors, "not a local binding").
use paralens::prelude::*;

#[lens]
fn pick(x: f64, flag: bool) -> f64 {
    let y;
    if flag {
        y = x * x;
    } else {
        y = x;
    }
    y + 1.0
}

fn main() {}
