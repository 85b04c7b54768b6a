// `m[0][1]` of a matrix: `m[0]` is an entry (a float), and indexing it again is rustc's
// "cannot index into a value of type `f64`", reported once at the second brackets (it was
// three errors, one at `#[lens]` naming `IndexRule<_>`). A matrix's entry is `m[(0, 1)]`.
use nalgebra::SMatrix;
use paralens::prelude::*;

#[lens]
fn corner(m: SMatrix<f64, 2, 2>) -> f64 {
    m[0][1] * 2.0
}

fn main() {}
