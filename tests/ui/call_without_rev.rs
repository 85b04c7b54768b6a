// `helper` is an ordinary function: it has no generated reverse (`helper_vjp`).
use paralens::prelude::*;

fn helper(x: f64) -> f64 {
    x * 3.0
}

#[lens]
fn f(x: f64) -> f64 {
    helper(x) + x
}

fn main() {}
