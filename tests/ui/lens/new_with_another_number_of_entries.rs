// `paralens::nalgebra::SVector::<f64, 3>::new` given two differentiated entries (and a matrix given too many):
// one error each, at the entries, saying how many the shape written in the call takes. rustc
// gave it twice (the function as written and the sweep), each suggesting an argument list
// built from the rewritten operands (`new(x, *, /* f64 */)`).
use paralens::prelude::*;

#[lens]
fn too_few(x: f64, y: f64) -> f64 {
    let v = paralens::nalgebra::SVector::<f64, 3>::new(x, y * 2.0);
    v.sum()
}

#[lens]
fn too_many(x: f64, y: f64) -> f64 {
    let m = paralens::nalgebra::Matrix2::new(x, y, x * y, y, x);
    m.sum()
}

#[lens]
fn matrix_by_rows(x: f64, y: f64) -> f64 {
    let m = paralens::nalgebra::SMatrix::<f64, 2, 3>::new(x, y, x, y, x * y);
    m.sum()
}

fn main() {}
