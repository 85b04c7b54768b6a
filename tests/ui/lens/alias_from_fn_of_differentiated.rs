// `from_fn` through a type alias, its entries reading a differentiated value: one error at the
// path, asking for the shape in the call (the loops that fill it need constant lengths).
use paralens::prelude::*;

type V3 = SVector<f64, 3>;

#[lens]
fn spread(x: f64) -> V3 {
    V3::from_fn(|i, _| x * i as f64)
}

fn main() {}
