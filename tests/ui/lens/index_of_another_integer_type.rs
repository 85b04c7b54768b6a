// An index of another integer type than `usize`: one error, rustc's "cannot be indexed by
// `i32`" at the index (there were four, two at `#[lens]` naming `IndexRule<i32>`). An index
// of several tokens (`k + 1`) too: the sweep's read spans the whole index, as rustc reports
// it (there were two errors, the second at `k` alone).
use paralens::prelude::*;

#[lens]
fn entry(v: SVector<f64, 3>, k: i32) -> f64 {
    v[k] * 2.0
}

#[lens]
fn matrix_entry(m: SMatrix<f64, 3, 3>, r: i32) -> f64 {
    m[(r, 1)] * 2.0
}

#[lens]
fn entry_after(v: SVector<f64, 3>, k: i32) -> f64 {
    v[k + 1] * 2.0
}

#[lens]
fn array_entry(a: [f64; 3], k: u32) -> f64 {
    a[2 * k] * 2.0
}

fn main() {}
