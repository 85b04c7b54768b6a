// `#[nodiff]` on a `let` in the body: one error saying the marker is for arguments (it was
// rustc's "cannot find attribute `nodiff` in this scope").
use paralens::prelude::*;

#[lens]
fn f(x: f64) -> f64 {
    #[nodiff]
    let s = x * 2.0;
    s * x
}

fn main() {}
