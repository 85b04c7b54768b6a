// An inline format capture reads a differentiated value too: `format!` would turn it into
// forward-only data the reverse sweep cannot follow.
use paralens::prelude::*;

#[lens]
fn f(x: f64) -> f64 {
    let s = format!("{x}");
    let c: f64 = s.parse().unwrap();
    c * x
}

fn main() {}
