// A value read by name and then assigned later in the same expression: the lowering would read
// the new value. Refused at the operation that reads it.
use paralens::prelude::*;

#[lens]
fn f(x: f64) -> f64 {
    let mut a = x;
    let b = a * {
        a = a * 2.0;
        a
    };
    b
}

fn main() {}
