// Parentheses or braces around a differentiated operation, linted (here denied): rustc's help
// removes them and keeps the operation (`let y = x * 2.0;`). It was `let y = * ;`, which
// `cargo fix` would have written: the operation's value was spanned at its operator alone.
#![deny(unused_parens, unused_braces)]
use paralens::prelude::*;

#[lens]
fn paren(x: f64) -> f64 {
    let y = (x * 2.0);
    y
}

#[lens]
fn block_sum(x: SVector<f64, 4>) -> f64 {
    let mut f = 0.0;
    for i in 0..4 {
        f = { f + x[i] * x[i] };
    }
    f
}

fn main() {}
