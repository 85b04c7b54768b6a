// A sub-model called by its method's name (`self.l.forward(x)`) in `para!`: one error saying
// to call it through its field, `self.l(x)` (it was "no reverse rule for the method
// `forward`; ... call it as `forward(x)`").
use paralens::prelude::*;

para! {
    pub struct Model { l: Dense<2, 2, f64> }
    fn forward(&self, x: SVector<f64, 2>) -> SVector<f64, 2> {
        self.l.forward(x)
    }
}

fn main() {}
