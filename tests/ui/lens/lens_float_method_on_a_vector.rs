// A float method on a vector: one error, at the method (the float methods are
// differentiated on scalars; `map` takes a matrix entry by entry).
use paralens::prelude::*;

#[lens]
fn f(v: SVector<f64, 3>) -> f64 {
    v.sin().sum()
}

fn main() {}
