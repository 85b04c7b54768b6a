// An argument marked both as a parameter and as data.
use paralens::prelude::*;

#[lens]
fn scaled(x: f64, #[param] #[nodiff] w: f64) -> f64 {
    w * x
}

fn main() {}
