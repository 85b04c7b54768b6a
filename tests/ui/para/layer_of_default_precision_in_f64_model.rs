// `Dense<3, 3>` is `f32`; in a model on `f64` it cannot take the input, and the note says how
// to give the layer its scalar.
use paralens::prelude::*;

para! {
    pub struct Model { l: Dense<3, 3> }
    fn forward(&self, x: SVector<f64, 3>) -> SVector<f64, 3> {
        self.l(x)
    }
}

fn main() {}
