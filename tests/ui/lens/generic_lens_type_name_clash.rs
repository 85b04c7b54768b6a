// A lens type with sizes of its own (`Gain<const N: usize>`) is checked through a pattern and
// the unit value of its name: another item named `Gain` is one error at the function, naming
// `#[lens(name = ...)]`, not first an error about `Gain`'s generics.
use paralens::prelude::*;

/// The user's own `Gain`.
pub struct Gain;

#[lens]
fn gain<const N: usize>(#[param] g: SVector<f64, N>, x: SVector<f64, N>) -> SVector<f64, N> {
    g.component_mul(&x)
}

fn main() {}
