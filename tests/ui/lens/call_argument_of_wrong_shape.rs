// A row where `softmax` takes a column: one error, at the argument. The sweep's changes of
// the call are read at the argument's type, so its reverse reports nothing more (there was a
// second error, at the transpose's pullback, with the impossible help `x.*transpose()`).
use paralens::prelude::*;

#[lens]
fn f(x: SVector<f64, 4>) -> f64 {
    softmax(x.transpose()).sum()
}

fn main() {}
