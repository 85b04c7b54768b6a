// The blocks of an `if` (or the arms of a `match`) that give values of two types: one error,
// rustc's, in the function as written. The sweep reads every block's value as the first
// block's type (`guard::Types`), so it does not report the mismatch again at `#[lens]`,
// naming the `Either` of the branches' pullbacks (before, 2 errors; 3 with a `match`).
// The error is over the whole operation, method or path call, with rustc's help for it as
// written (`(y * 3.0).into()`, `y.exp().into()`); it was at the operator or method's name,
// with `.into()` inserted there (`y *.into() 3.0`, `y.exp.into()()`).
use paralens::nalgebra::SVector;
use paralens::prelude::*;

#[lens]
fn pick(x: f64, y: f32, flag: bool) -> f64 {
    let z = if flag { x * 2.0 } else { y * 3.0 };
    z
}

#[lens]
fn shape(v: SVector<f64, 3>, w: SVector<f64, 2>, k: usize) -> f64 {
    let u = match k {
        0 => v * 2.0,
        1 => v * 3.0,
        _ => w * 4.0,
    };
    u.sum()
}

#[lens]
fn method(x: f64, y: f32, k: usize) -> f64 {
    match k {
        0 => x.exp(),
        _ => y.exp(),
    }
}

#[lens]
fn path(x: f64, y: f32, flag: bool) -> f64 {
    if flag { f64::max(x, 1.0) } else { f32::max(y, 1.0) }
}

fn main() {}
