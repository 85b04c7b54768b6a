// A `para!` model of two inputs, called as a sub-model with one: one error, at the argument,
// saying the sub-model takes the pair. It was one per body of the caller (three, two of them
// at the caller's signature rather than at the call).
use paralens::prelude::*;

para! {
    pub struct Two { l: Dense<2, 1, f64> }
    fn forward(&self, x: SVector<f64, 2>, y: SVector<f64, 2>) -> SVector<f64, 1> {
        self.l(x + y)
    }
}

para! {
    pub struct Outer { t: Two }
    fn forward(&self, x: SVector<f64, 2>) -> SVector<f64, 1> {
        self.t(x)
    }
}

fn main() {}
