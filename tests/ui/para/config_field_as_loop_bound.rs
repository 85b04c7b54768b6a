// A configuration field is known only when the model runs, so it cannot bound a
// differentiated loop: one error, at the bound (not a second one about `#[nodiff]`).
use paralens::prelude::*;

para! {
    pub struct Repeat {
        l: Dense<2, 2>,
        #[nodiff]
        n: usize,
    }
    fn forward(&self, x: SVector<f32, 2>) -> SVector<f32, 2> {
        let mut h = x;
        for _ in 0..self.n {
            h = self.l(h);
        }
        h
    }
}

fn main() {}
