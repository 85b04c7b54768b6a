// `#[lens]` takes `name = TypeName` and `init = path`; anything else is named in the error.
use paralens::prelude::*;

#[lens(rename = Foo)]
fn f(x: f64) -> f64 {
    x * x
}

fn main() {}
