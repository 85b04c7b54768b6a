// A heap matrix's `component_div` by a static matrix: one error, at the method, saying what
// operand it takes.
use paralens::prelude::*;

#[lens]
fn f(h: HeapMatrix<f64, 2, 3>, s: SMatrix<f64, 2, 3>) -> f64 {
    h.component_div(&s).sum()
}

fn main() {}
