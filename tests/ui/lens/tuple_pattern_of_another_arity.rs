// `let (a, b, c) = (x * 2.0, y)`: one error, rustc's at the pattern. The sweep reads the
// change it gathers from the pattern's parts as the value's type (`guard::Typed`), where it
// disagreed too, a second error at `#[lens]`.
use paralens::prelude::*;

#[lens]
fn tuple_arity(x: f64, y: f64) -> f64 {
    let (a, b, c) = (x * 2.0, y);
    a + b
}

fn main() {}
