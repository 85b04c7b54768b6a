// An enum's variant holding a differentiated value (`Some(x)`, `Shape::Circle(x)`): one error
// at the variant saying it carries no change (it was "cannot find function, tuple struct or
// tuple variant `Some_vjp`"). A tuple struct deriving `Tangent` is built (tests/building.rs).
use paralens::prelude::*;

pub enum Shape {
    Circle(f64),
}

#[lens]
fn maybe(x: f64) -> f64 {
    let m = Some(x * 2.0);
    m.unwrap_or(0.0)
}

#[lens]
fn circle(r: f64) -> f64 {
    let s = Shape::Circle(r);
    match s {
        Shape::Circle(r) => r,
    }
}

fn main() {}
