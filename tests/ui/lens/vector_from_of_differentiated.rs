// `SVector::from([a, b])` of differentiated values: one error at `from` naming the
// constructors that are differentiated (it was "no function or associated item named
// `from_vjp`" and thirty lines of nalgebra's constructors).
use paralens::prelude::*;

#[lens]
fn pair(a: f64, b: f64) -> f64 {
    SVector::<f64, 2>::from([a, b * 2.0]).norm()
}

fn main() {}
