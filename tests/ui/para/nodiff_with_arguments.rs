// `#[nodiff(true)]` is a mistake, not a variant of the marker: one error at it (it was
// accepted silently), on an argument and on a `para!` field.
use paralens::prelude::*;

#[lens]
fn scaled(x: f64, #[nodiff(true)] s: f64) -> f64 {
    x * s
}

para! {
    pub struct Scaled { l: Dense<2, 2, f64>, #[nodiff = "yes"] s: f64 }
    fn forward(&self, x: nalgebra::SVector<f64, 2>) -> nalgebra::SVector<f64, 2> {
        self.l(x) * self.s
    }
}

fn main() {}
