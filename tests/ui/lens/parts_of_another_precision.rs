// A value built from parts, one of them an argument of another precision: one error each,
// at that part (there was a second at the argument's declaration, suggesting
// `fn arr(x: f64, y.into(): f32)`, which cannot be written).
use nalgebra::SVector;
use paralens::prelude::*;

#[derive(Clone, Copy, Debug, Tangent)]
struct Point {
    a: f64,
    b: f64,
}

#[lens]
fn array(x: f64, y: f32) -> [f64; 2] {
    [x * 2.0, y]
}

#[lens]
fn make_point(x: f64, y: f32) -> Point {
    Point { a: x * 2.0, b: y }
}

#[lens]
fn vector(x: f64, y: f32) -> SVector<f64, 2> {
    SVector::<f64, 2>::new(x * 2.0, y)
}

fn main() {}
