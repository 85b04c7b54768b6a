// A capitalised `#[lens]` function: a call `Scale(x)` in another `#[lens]` body would be read
// as building a tuple struct, never reaching its reverse; refused at its name.
use paralens::prelude::*;

#[lens]
#[allow(non_snake_case)]
fn Scale(x: f64) -> f64 {
    2.0 * x
}

fn main() {}
