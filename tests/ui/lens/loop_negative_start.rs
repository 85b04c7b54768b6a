// A differentiated loop's storage is sized by its range's end, so the range starts at 0 or
// later: a negative start is refused at the start, with the rewrite to use, in parentheses
// or as arithmetic of literals too (they passed the check and panicked at run time).
use paralens::prelude::*;

#[lens]
fn signed_counters(x: f64) -> f64 {
    let mut acc = 0.0;
    for k in -2..3 {
        acc = acc + x.powi(k) * k as f64;
    }
    acc
}

#[lens]
fn in_parentheses(x: f64) -> f64 {
    let mut acc = 0.0;
    for k in (-2)..3 {
        acc = acc + x.powi(k);
    }
    acc
}

#[lens]
fn as_a_difference(x: f64) -> f64 {
    let mut acc = 0.0;
    for k in 0 - 2..3 {
        acc = acc + x.powi(k);
    }
    acc
}

#[lens]
fn twice_negated_is_fine(x: f64) -> f64 {
    let mut acc = 0.0;
    for k in -(-1)..3 {
        acc = acc + x.powi(k);
    }
    acc
}

fn main() {
    assert_eq!(twice_negated_is_fine_rev(2.0, 1.0), 1.0 + 2.0 * 2.0);
}
