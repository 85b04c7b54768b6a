// `helper` is an ordinary function: it has no generated reverse (`helper_lens_vjp`, the
// reverse tied to it). rustc names a similar function of the prelude; the crate docs say to
// annotate `helper` with `#[lens]` or give it a reverse with `custom_reverse!`.
use paralens::prelude::*;

fn helper(x: f64) -> f64 {
    x * 3.0
}

#[lens]
fn f(x: f64) -> f64 {
    helper(x) + x
}

fn main() {}
