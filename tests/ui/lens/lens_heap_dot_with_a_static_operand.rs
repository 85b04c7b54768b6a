// A heap matrix's `dot` with a static matrix as forward-only data: one error, the rule's, at
// the method (the operand must be a matrix of the receiver's kind and shape).
use paralens::prelude::*;

#[lens]
fn d(h: HeapMatrix<f64, 2, 3>, #[nodiff] s: SMatrix<f64, 2, 3>) -> f64 {
    h.dot(&s)
}

fn main() {}
