// `l3` is not one of the model's sub-models.
use paralens::prelude::*;

para! {
    pub struct Mlp { l1: Dense<4, 16>, l2: Dense<16, 3> }
    fn forward(&self, x: SVector<f32, 4>) -> SVector<f32, 3> {
        self.l3(relu(self.l1(x)))
    }
}

fn main() {}
