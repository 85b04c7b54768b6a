// `#[lens] fn model` generates a lens type `Model`; another item of that name is reported at
// the function, naming `#[lens(name = ...)]`.
use paralens::prelude::*;

/// The user's own `Model`.
pub struct Model;

#[lens]
fn model(x: f64) -> f64 {
    x * x
}

fn main() {}
