// `f64::to_radians(x)` of a differentiated `x`: one error at the method, listing what is
// supported, as the method form `x.to_radians()` says (rustc said "no function
// `to_radians_vjp`").
use paralens::prelude::*;

#[lens]
fn angle(x: f64) -> f64 {
    f64::to_radians(x).sin()
}

fn main() {}
