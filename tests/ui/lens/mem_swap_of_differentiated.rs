// `std::mem::swap(&mut a, &mut b)` of differentiated values, also imported as `swap`, and a
// function of the user's given `&mut`: one error at each call saying to assign the bindings
// or return the new value (it was two, one per `&mut`, saying references are only supported
// as method arguments).
use paralens::prelude::*;
use std::mem::swap;

#[lens]
fn swapped(x: f64, y: f64) -> f64 {
    let mut a = x * 2.0;
    let mut b = y;
    std::mem::swap(&mut a, &mut b);
    a - b
}

#[lens]
fn swapped_imported(x: f64, y: f64) -> f64 {
    let mut a = x * 2.0;
    let mut b = y;
    swap(&mut a, &mut b);
    a - b
}

fn double_in_place(v: &mut f64) {
    *v *= 2.0;
}

#[lens]
fn changed_in_place(x: f64) -> f64 {
    let mut a = x.sin();
    double_in_place(&mut a);
    a
}

fn main() {}
