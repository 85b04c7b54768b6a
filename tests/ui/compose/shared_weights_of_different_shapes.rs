// Weight sharing needs both stages to take the same parameter.
use paralens::prelude::*;

fn main() {
    let tied = Dense::<2, 2>::new().share(Dense::<2, 3>::new());
    let p = Dense::<2, 2>::new().init(0);
    let _ = Para::forward(&tied, &p, SVector::<f32, 2>::zeros());
}
