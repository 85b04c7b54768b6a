// A braced struct has no value to shadow the unit value of a generic lens type's name: the
// check goes through a pattern `Gain { .. }` as well, and this is still one error at the
// function, naming `#[lens(name = ...)]`, not a `Gain` that silently means the user's struct.
use paralens::prelude::*;

/// The user's own `Gain`, a braced struct.
pub struct Gain {
    pub level: f64,
}

#[lens]
fn gain<const N: usize>(#[param] g: SVector<f64, N>, x: SVector<f64, N>) -> SVector<f64, N> {
    g.component_mul(&x)
}

fn main() {
    let _ = Gain { level: 1.0 }.level;
}
