// `from_fn` reading a differentiated value needs its shape in the call (the loops that fill
// it need constant lengths).
use paralens::prelude::*;

#[lens]
fn f(x: f64) -> f64 {
    let m: SMatrix<f64, 2, 2> = SMatrix::from_fn(|r, c| x * (r + c) as f64);
    m.sum()
}

fn main() {}
