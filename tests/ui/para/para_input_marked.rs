// `#[nodiff]` on an input of a `para!` forward function: one error saying where configuration
// goes (before, the marker was ignored and the input differentiated).

use paralens::prelude::*;

para! {
    pub struct M { l: Dense<2, 2, f64> }
    fn forward(&self, x: nalgebra::SVector<f64, 2>, #[nodiff] k: f64) -> f64 {
        self.l(x).sum() * k
    }
}

fn main() {}
