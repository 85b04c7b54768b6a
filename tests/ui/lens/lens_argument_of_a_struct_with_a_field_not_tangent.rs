// A struct deriving `Tangent` with a field that is not `Tangent` (`n: usize`), used as a
// differentiated argument of `#[lens]`: one error, at the field's type. It was two: the
// derive's (its impl bounded by `usize: Tangent`, an error where the struct is written) and
// again at `#[lens]`, "required for `P` to implement `Tangent`", naming its internal
// `zeros_of`. The derived impl is no longer bounded by a field type that names none of the
// struct's generics; the field's `zeros` is the one error.
use paralens::prelude::*;

#[derive(Clone, Tangent)]
struct P {
    w: f64,
    n: usize,
}

#[lens]
fn f(p: P) -> f64 {
    p.w * 2.0
}

fn main() {}
