// Heap weights times a static input whose inner sizes differ (4 columns, 5 rows): one error,
// at the operator.
use paralens::prelude::*;

#[lens]
fn layer(w: HeapMatrix<f64, 3, 4>, x: SVector<f64, 5>) -> f64 {
    (w * x).sum()
}

fn main() {}
