// An operation of another precision bound by a typed `let`, or a part of an array or a
// vector: the function as written's error is over the whole operation, with rustc's help
// for it (`(y * 3.0).into()`; it was `y *.into() 3.0`), and the sweep's copy of it, spread
// the same way, is merged with it (an array's was a third error). Each still has a second
// error, at an operator, not fixed here: the sweep hands an operation's pullback a change of
// the type the value was bound or built at, not the operation's own.
use paralens::prelude::*;

#[lens]
fn annotated(x: f64, y: f32) -> f64 {
    let s: f64 = y * 3.0;
    s + x
}

#[lens]
fn array(x: f64, y: f32) -> f64 {
    let a = [x * 2.0, y * 3.0];
    a[0] + a[1]
}

#[lens]
fn vector(x: f64, y: f32) -> f64 {
    SVector::<f64, 2>::new(x, y * 2.0).sum()
}

fn main() {}
