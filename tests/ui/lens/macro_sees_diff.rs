// Only macros that read their arguments (printing, assertions, panics) may see a
// differentiated value; `vec!` would copy it out of the reverse sweep's sight.
use paralens::prelude::*;

#[lens]
fn f(x: f64) -> f64 {
    println!("x = {x}, 2x = {}", x * 2.0);
    let v = vec![x, x];
    x * (v.len() as f64)
}

fn main() {}
