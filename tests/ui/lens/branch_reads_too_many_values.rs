// A branch whose pullback would add into more than twelve outside values is refused at the
// branch, saying how to group them.
use paralens::prelude::*;

#[lens]
#[allow(clippy::too_many_arguments)]
fn many(
    a: f64, b: f64, c: f64, d: f64, e: f64, f: f64, g: f64,
    h: f64, i: f64, j: f64, k: f64, l: f64, m: f64, flag: bool,
) -> f64 {
    let mut s = 0.0;
    if flag {
        s = a + b + c + d + e + f + g + h + i + j + k + l + m;
    }
    s
}

fn main() {}
