// A sum of vectors of different lengths in a `#[lens]` body: one error, the rule's, at the
// operator; not "expected `2`, found `3`" at `#[lens]`.
use paralens::prelude::*;

#[lens]
fn sum(v: SVector<f64, 3>, w: SVector<f64, 2>) -> SVector<f64, 3> {
    v + w
}

fn main() {}
