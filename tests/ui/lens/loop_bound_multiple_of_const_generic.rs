// `0..N * 2` with `N` a const generic: its storage cannot be sized by `N * 2`; the error
// advises nesting two loops.
use paralens::prelude::*;

#[lens]
fn twice<const N: usize>(x: SVector<f64, N>) -> f64 {
    let mut s = 0.0;
    for i in 0..N * 2 {
        s = s + x[i % N];
    }
    s
}

fn main() {}
