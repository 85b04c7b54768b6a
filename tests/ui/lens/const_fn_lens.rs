// A `const fn` cannot be a lens: its reverse is not a constant function.
use paralens::prelude::*;

#[lens]
const fn double(x: f64) -> f64 {
    x * 2.0
}

fn main() {}
