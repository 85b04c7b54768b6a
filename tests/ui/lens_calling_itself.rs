// A `#[lens]` function calling itself: one error at the call, saying to write a loop (rustc
// said only "cannot resolve opaque type" at `#[lens]`).
use paralens::prelude::*;

#[lens]
fn repeated_sin(x: f64, #[nodiff] depth: u32) -> f64 {
    if depth == 0 { x } else { repeated_sin(x.sin(), depth - 1) }
}

fn main() {}
