// Static weights times a heap batch whose inner sizes differ (4 columns, 5 rows): one error,
// at the operator.
use paralens::prelude::*;

#[lens]
fn layer(w: SMatrix<f64, 3, 4>, x: HeapMatrix<f64, 5, 2>) -> f64 {
    (w * x).sum()
}

fn main() {}
