// A sub-model called without `self.` in `para!`: one error saying to write `self.l1(..)`
// (rustc said "cannot find function `l1_vjp`"), also where the call is a method's receiver.
use paralens::prelude::*;

para! {
    pub struct Mlp { l1: Dense<4, 16>, l2: Dense<16, 3> }
    fn forward(&self, x: SVector<f32, 4>) -> SVector<f32, 3> {
        let h = relu(l1(x));
        self.l2(h)
    }
}

para! {
    pub struct Summed { l1: Dense<4, 2> }
    fn forward(&self, x: SVector<f32, 4>) -> f32 {
        l1(x).sum()
    }
}

fn main() {}
