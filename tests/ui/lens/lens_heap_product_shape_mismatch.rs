// A product of heap matrices whose inner sizes differ (3x4 times 5x2) in a `#[lens]` body:
// one error, the rule's, at the operator.
use paralens::prelude::*;

#[lens]
fn layer(w: HeapMatrix<f64, 3, 4>, x: HeapMatrix<f64, 5, 2>) -> f64 {
    (w * x).sum()
}

fn main() {}
