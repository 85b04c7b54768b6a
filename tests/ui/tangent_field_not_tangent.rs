// A field whose type is not `Tangent` in a struct deriving it: one error, at the derive
// (the derived `Flat` impl is bounded by the fields' `Tangent` too, so it adds none).
use paralens::prelude::*;

#[derive(Clone, Debug, Tangent)]
pub struct Params {
    w: SMatrix<f64, 2, 3>,
    name: String,
}

fn main() {}
