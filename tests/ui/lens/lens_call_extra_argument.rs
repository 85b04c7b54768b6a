// A `#[lens]` function called with an argument too many: one error, at the call, with
// rustc's own help (the reverse sweep spreads the callee's changes through
// `guard::Spread`, not a tuple pattern of the call's arity).
use paralens::prelude::*;

#[lens]
fn inner(x: f64, y: f64) -> f64 {
    x * y
}

#[lens]
fn outer(x: f64, y: f64) -> f64 {
    inner(x, y, x) + x
}

#[lens]
fn single(x: f64) -> f64 {
    x.sin()
}

#[lens]
fn outer_of_single(x: f64, y: f64) -> f64 {
    single(x, y)
}

// Thirteen parameters, fourteen arguments.
#[lens]
#[allow(clippy::too_many_arguments)]
fn wide(a: f64, b: f64, c: f64, d: f64, e: f64, f: f64, g: f64, h: f64, i: f64, j: f64, k: f64, l: f64, m: f64) -> f64 {
    a + b + c + d + e + f + g + h + i + j + k + l + m
}

#[lens]
fn outer_of_wide(x: f64) -> f64 {
    wide(x, x, x, x, x, x, x, x, x, x, x, x, x, x)
}

// Eighteen parameters, nineteen arguments (`guard::Spread` goes to 32; a tuple pattern of
// the call's arity was a second error).
#[lens]
#[allow(clippy::too_many_arguments)]
fn wider(a: f64, b: f64, c: f64, d: f64, e: f64, f: f64, g: f64, h: f64, i: f64, j: f64, k: f64, l: f64, m: f64, n: f64, o: f64, p: f64, q: f64, r: f64) -> f64 {
    a + b + c + d + e + f + g + h + i + j + k + l + m + n + o + p + q + r
}

#[lens]
fn outer_of_wider(x: f64) -> f64 {
    wider(x, x, x, x, x, x, x, x, x, x, x, x, x, x, x, x, x, x, x)
}

fn main() {}
