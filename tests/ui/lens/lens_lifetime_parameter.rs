// A named lifetime on a `#[lens]` function: one error at it, saying to elide it (borrowed
// arguments are allowed; it said "take values, not borrows").
use paralens::prelude::*;

#[lens]
fn scaled<'a>(x: f64, #[nodiff] k: &'a f64) -> f64 {
    x * k
}

fn main() {}
