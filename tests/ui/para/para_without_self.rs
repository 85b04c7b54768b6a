// The forward function of `para!` must take `&self` first, to reach its sub-models.
use paralens::prelude::*;

para! {
    pub struct Mlp { l1: Dense<4, 3> }
    fn forward(x: SVector<f32, 4>) -> SVector<f32, 3> {
        x
    }
}

fn main() {}
