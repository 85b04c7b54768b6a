// A `#[lens]` function's type as a stage of `then` after a layer whose output it cannot take:
// one error in the traits' words, "cannot take an input of type" (it was E0271, "type
// mismatch resolving `<Dense<..> as Para<..>>::Out == ..`").
use paralens::prelude::*;

#[lens]
fn sq(x: SVector<f64, 3>) -> f64 {
    x.norm_squared()
}

fn main() {
    let m = Dense::<2, 2, f64>::new().then(Sq);
    let p = m.init(1);
    let _ = m.forward(&p, SVector::<f64, 2>::zeros());
}
