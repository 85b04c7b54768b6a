// `let s: f64 = b;` where `b` is an `f32` part of a tuple: one error, at `b` in that
// statement, with rustc's suggestion there (`b.into()`). The sweep reads `b` as the declared
// type (`guard::Types`); before, it reported the mismatch again at `b`'s pattern, suggesting
// `let (a, b.into()) = ..`.
use paralens::prelude::*;

#[lens]
fn typed_part(x: f64, y: f32) -> f64 {
    let (a, b) = (x * 2.0, y);
    let s: f64 = b;
    a + s
}

fn main() {}
