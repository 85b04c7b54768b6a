// `#[lens]` takes only `name = TypeName`.
use paralens::prelude::*;

#[lens(rename = Foo)]
fn f(x: f64) -> f64 {
    x * x
}

fn main() {}
