// An operation of another precision bound by a typed `let`, or a part of an array or a
// vector: one error, the function as written's, over the whole operation with rustc's help
// for it (`(y * 3.0).into()`; it was `y *.into() 3.0`). The sweep's copy of it is spread the
// same way and merged with it (an array's was a third error), and a rule's pullback takes its
// change read at its own type (`change_witness`): the change of the bound type handed to it
// was a second error, at the operator, with a note pointing into the rule's definition.
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
