// A method that changes its receiver in place (`*_assign`, `fill`, `swap`) on a differentiated
// value: one error at the method saying to assign a new value instead (it was the general
// "no reverse rule ...; call it as `component_mul_assign(x)`", which cannot be written).
use paralens::prelude::*;

#[lens]
fn scaled(w: SVector<f64, 3>, v: SVector<f64, 3>) -> f64 {
    let mut w = w;
    w.component_mul_assign(&v);
    w.sum()
}

#[lens]
fn filled(x: f64) -> f64 {
    let mut v = SVector::<f64, 3>::zeros();
    v.fill(x);
    v.sum()
}

#[lens]
fn swapped(x: SVector<f64, 3>) -> f64 {
    let mut a = x * 2.0;
    a.swap_rows(0, 1);
    a[0]
}

fn main() {}
