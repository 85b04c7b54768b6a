// A `#[lens]` function's type as a `para!` sub-model, given an input of the wrong shape: one
// error, at the call, in the traits' own words. With one impl, rustc read it as a mismatch
// against that impl's input, once in each sweep (three errors, two at the signature's `x`).
use paralens::prelude::*;

#[lens]
fn affine(#[param] w: SVector<f64, 2>, #[param] b: f64, x: SVector<f64, 2>) -> f64 {
    w.dot(&x) + b
}

para! {
    pub struct Model { a: Affine }
    fn forward(&self, x: SVector<f64, 3>) -> f64 {
        self.a(x)
    }
}

fn main() {}
