// `Point::new(a, b)` of a struct deriving `Tangent`: `T::new(..)` is differentiated entry by
// entry for nalgebra matrices only; one error at the call saying to write a struct literal.
use paralens::prelude::*;

#[derive(Clone, Copy, Debug, Tangent)]
pub struct Point {
    pub x: f64,
    pub y: f64,
}

impl Point {
    pub fn new(x: f64, y: f64) -> Self {
        Self { x, y }
    }
}

#[lens]
fn lift(a: f64) -> Point {
    Point::new(a, a * a)
}

fn main() {}
