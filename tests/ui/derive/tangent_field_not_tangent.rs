// A field whose type is not `Tangent` in a struct deriving it: one error, at the field's type
// (the derived `zeros`; neither derived impl is bounded by a field type that names none of
// the struct's generics, so they add none).
use paralens::prelude::*;

#[derive(Clone, Debug, Tangent)]
pub struct Params {
    w: SMatrix<f64, 2, 3>,
    name: String,
}

fn main() {}
