// The second layer takes 8 inputs but is given the first layer's 16 outputs.
use paralens::prelude::*;

para! {
    pub struct Mlp { l1: Dense<4, 16>, l2: Dense<8, 3> }
    fn forward(&self, x: SVector<f32, 4>) -> SVector<f32, 3> {
        let h = relu(self.l1(x));
        self.l2(h)
    }
}

fn main() {}
