// A sub-model of two inputs given a computed second input of the wrong shape: one error for
// the three bodies of the model, at the call.
use paralens::prelude::*;

para! {
    pub struct Two { l: Dense<2, 1, f64> }
    fn forward(&self, x: SVector<f64, 2>, y: SVector<f64, 2>) -> SVector<f64, 1> {
        self.l(x + y)
    }
}

para! {
    pub struct Outer { t: Two }
    fn forward(&self, x: SVector<f64, 2>, v: SVector<f64, 3>) -> SVector<f64, 1> {
        self.t(x * 2.0, v * 0.5)
    }
}

fn main() {}
