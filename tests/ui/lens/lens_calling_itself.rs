// A `#[lens]` function calling itself with a differentiated value: one error at the call,
// saying to write a loop (rustc said only "cannot resolve opaque type" at `#[lens]`); also
// through a turbofish. A call on data alone is data (`tests/lens_macro.rs`).
use paralens::prelude::*;

#[lens]
fn repeated_sin(x: f64, #[nodiff] depth: u32) -> f64 {
    if depth == 0 { x } else { repeated_sin(x.sin(), depth - 1) }
}

#[lens]
fn repeated_cos<T: Real>(x: T, #[nodiff] depth: u32) -> T {
    if depth == 0 { x } else { repeated_cos::<T>(x.cos(), depth - 1) }
}

fn main() {}
