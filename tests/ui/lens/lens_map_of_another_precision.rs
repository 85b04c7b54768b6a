// `map` given a `#[lens]` function of another scalar type than the entries: one error, at the
// function, as `v.map(square)` gives without `#[lens]`; nothing from the reverse sweep.
use paralens::prelude::*;

#[lens]
fn square(x: f32) -> f32 {
    x * x
}

#[lens]
fn total(v: SVector<f64, 3>) -> f64 {
    v.map(square).sum()
}

fn main() {}
