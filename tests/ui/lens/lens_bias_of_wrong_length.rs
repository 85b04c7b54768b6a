// A bias of the wrong length for `add_bias`: one error, at the bias, naming `add_bias` (the
// sweeps call `add_bias_vjp`, written at `add_bias`'s place, so rustc reports it once).
use paralens::prelude::*;

#[lens]
fn layer(
    #[param] w: SMatrix<f64, 2, 4>,
    #[param] b: SVector<f64, 3>,
    #[nodiff] x: SMatrix<f64, 4, 5>,
) -> f64 {
    add_bias(w * x, b).norm_squared()
}

fn main() {}
