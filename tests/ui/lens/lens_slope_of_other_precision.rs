// `leaky_relu`'s slope in another precision than its input: one error, at the slope.
use paralens::prelude::*;

#[lens]
fn f(x: SVector<f64, 3>, #[nodiff] alpha: f32) -> f64 {
    leaky_relu(x, alpha).sum()
}

fn main() {}
