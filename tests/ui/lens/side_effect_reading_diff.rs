// Forward-only code that reads a differentiated value must not change a binding: the change
// would be invisible to the reverse sweep. A condition that assigns is refused.
use paralens::prelude::*;

#[lens]
fn f(x: f64) -> f64 {
    let mut seen = 0.0;
    if { seen = x; seen } > 1.0 {
        x * seen
    } else {
        x
    }
}

fn main() {}
