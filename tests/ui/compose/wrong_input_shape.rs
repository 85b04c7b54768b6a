// A 4-input layer fed a 3-vector.
use paralens::prelude::*;

fn main() {
    let layer = Dense::<4, 2>::new();
    let p = layer.init(0);
    let _ = Para::forward(&layer, &p, SVector::<f32, 3>::zeros());
}
