// `std::mem::swap(&mut a, &mut b)` of differentiated values: one error at the call saying to
// assign the bindings (it was two, one per `&mut`, saying references are only supported as
// method arguments).
use paralens::prelude::*;

#[lens]
fn swapped(x: f64, y: f64) -> f64 {
    let mut a = x * 2.0;
    let mut b = y;
    std::mem::swap(&mut a, &mut b);
    a - b
}

fn main() {}
