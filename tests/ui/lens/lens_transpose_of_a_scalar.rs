// A differentiated `transpose` of a scalar: one error, the rule's, at the method (saying
// what `transpose` takes), and nothing from the rule's result.
use paralens::prelude::*;

#[lens]
fn t(x: f64) -> f64 {
    x.transpose()
}

fn main() {}
