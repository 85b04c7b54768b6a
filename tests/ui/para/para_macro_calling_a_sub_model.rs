// A macro in a `para!` body that calls a sub-model (`println!("{}", self.l(x))`): its
// parameters would get no change through the macro's tokens, so the call is refused, one
// error at it.
use paralens::prelude::*;

para! {
    pub struct Logged { l: Dense<2, 2, f64> }
    fn forward(&self, x: SVector<f64, 2>) -> f64 {
        println!("{}", self.l(x));
        x.sum()
    }
}

fn main() {}
