// `#[lens(init = draw)]` where `draw` takes one generator type (`&mut StdRng`), not any
// `R: Rng + ?Sized`: one error, at `draw` (it was over the whole attribute).
use paralens::prelude::*;

#[lens(init = draw)]
fn affine(#[param] w: SVector<f64, 2>, x: SVector<f64, 2>) -> f64 {
    w.dot(&x)
}

fn draw(rng: &mut paralens::rand::rngs::StdRng) -> SVector<f64, 2> {
    let _ = rng;
    SVector::<f64, 2>::zeros()
}

fn main() {}
