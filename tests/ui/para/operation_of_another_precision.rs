// An operation or method whose value is of another precision than where it goes: one error,
// over the whole expression as written, with rustc's help for it (`(y * 3.0).into()`). The
// function as written ran it as a call spanned at the operator, where rustc inserted
// `.into()` (`y *.into() 3.0`). As a call's argument, the sweep spreads its value over the
// same extent in the same form, so that its copy of the error is the same one.
use paralens::prelude::*;

#[lens]
fn returned(y: f32) -> f64 {
    y * 3.0
}

#[lens]
fn method_argument(x: f64, y: f32) -> f64 {
    x.max(y * 2.0)
}

#[lens]
fn mix(a: f64, b: f64) -> f64 {
    a * b
}

#[lens]
fn call_argument(x: f64, y: f32) -> f64 {
    mix(y * 2.0, x) + mix(y.sin(), x)
}

#[lens]
fn in_loop(x: f64, y: f32, flag: bool) -> f64 {
    let mut acc = x;
    for _ in 0..3 {
        let z = if flag { acc * 2.0 } else { y * 3.0 };
        acc = acc + z;
    }
    acc
}

para! {
    pub struct M { l: Dense<2, 2, f64> }
    fn forward(&self, x: SVector<f64, 2>, y: f32) -> f64 {
        let h = self.l(x).sum();
        if h > 0.0 { h * 2.0 } else { y * 3.0 }
    }
}

fn main() {}
