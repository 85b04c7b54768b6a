// `[x; N]` of a differentiated value is refused with the form to write instead.
use paralens::prelude::*;

#[lens]
fn spread(x: f64) -> f64 {
    let a = [x; 3];
    a[0] + a[2]
}

fn main() {}
