// The lost change of `differentiated_argument_to_nodiff_parameter.rs` in a caller generic
// over its scalar: the same one error at the argument, with no suggestion to bound `T` by
// the guard's trait (the guard's bound is on `ChangeOfTheArgument<T>`, not on `T`).
use paralens::prelude::*;

#[lens]
fn scaled<T: Real>(x: T, #[nodiff] k: T) -> T {
    x * k
}

#[lens]
fn outer<T: Real>(x: T, y: T) -> T {
    scaled(x, y) + y
}

fn main() {}
