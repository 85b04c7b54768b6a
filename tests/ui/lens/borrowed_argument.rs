// A borrowed argument cannot give a change back: refused (it used to get a silent zero),
// unless it is marked `#[nodiff]` as data.
use paralens::prelude::*;

#[lens]
fn weighted(x: SVector<f64, 3>, w: &SVector<f64, 3>) -> f64 {
    x.dot(w)
}

#[lens]
fn scaled(x: SVector<f64, 3>, #[nodiff] w: &SVector<f64, 3>) -> f64 {
    x.dot(w)
}

fn main() {}
