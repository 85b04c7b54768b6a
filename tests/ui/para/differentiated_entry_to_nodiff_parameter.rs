// A differentiated entry `h[1]` passed to a `#[nodiff]` parameter, inside `para!`: one error,
// at the entry's brackets (it was at the name of the function called).
use paralens::prelude::*;

#[lens]
fn scaled(x: f64, #[nodiff] k: f64) -> f64 {
    x * k
}

para! {
    pub struct Model { l: Dense<2, 2, f64> }
    fn forward(&self, x: SVector<f64, 2>) -> f64 {
        let h = self.l(x);
        scaled(h[0], h[1])
    }
}

fn main() {}
