// A float field of a `para!` model without `#[nodiff]`: one error at its type, saying how to
// mark a configuration value and where a learned scalar goes (it was some seventy errors
// about `Init` and the parameter struct). A `bool` or a count needs no marker.
use paralens::prelude::*;

para! {
    pub struct Scaled { l: Dense<2, 2, f64>, scale: f64, twice: bool, steps: usize }
    fn forward(&self, x: SVector<f64, 2>) -> SVector<f64, 2> {
        let h = self.l(x) * self.scale;
        let h = if self.steps > 2 { h * 0.5 } else { h };
        if self.twice { h * 2.0 } else { h }
    }
}

fn main() {}
