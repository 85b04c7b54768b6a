// A `#[lens]` function whose body is refused, used as a sub-model of `para!` and called by
// another `#[lens]` function: the body's error alone (its lens type and companions are still
// generated, with bodies that never run, so their users report nothing of their own; there
// were two E0053 errors from the model's parameter struct).
use paralens::prelude::*;

#[lens]
fn scale(#[param] w: SVector<f64, 2>, x: SVector<f64, 2>) -> SVector<f64, 2> {
    let y = &x;
    w.component_mul(&*y)
}

para! {
    pub struct Model { s: Scale }
    fn forward(&self, x: SVector<f64, 2>) -> SVector<f64, 2> {
        self.s(x)
    }
}

#[lens]
fn outer(w: SVector<f64, 2>, x: SVector<f64, 2>) -> f64 {
    scale(w, x).sum()
}

fn main() {}
