// A field of the model's own scalar type (`gain: T`) without `#[nodiff]`: one error at its
// type, as for `f64` (it was some seventy errors about `Init` and the parameter struct).
use paralens::prelude::*;

para! {
    pub struct Gained<T: Real> { l: Dense<2, 2, T>, gain: T }
    fn forward(&self, x: SVector<T, 2>) -> SVector<T, 2> {
        self.l(x) * self.gain
    }
}

fn main() {}
