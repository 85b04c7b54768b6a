// A parallel composite fed a pair whose second half has the wrong length.
use paralens::prelude::*;

fn main() {
    let both = Dense::<2, 2>::new().par(Dense::<3, 1>::new());
    let p = both.init(0);
    let _ = Para::forward(&both, &p, (SVector::<f32, 2>::zeros(), SVector::<f32, 2>::zeros()));
}
