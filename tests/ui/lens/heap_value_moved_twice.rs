// A `HeapMatrix` (not `Copy`) moved twice by one operation: one error, rustc's "use of moved
// value: `h`" of the function as written (the sweeps gave two more, naming their clone
// `__cl3_2` and suggesting `h ref + h`).
use paralens::prelude::*;

#[lens]
fn doubled(w: HeapMatrix<f32, 4, 4>, x: HeapMatrix<f32, 4, 1>) -> HeapMatrix<f32, 4, 1> {
    let h = w * x;
    h + h
}

fn main() {}
