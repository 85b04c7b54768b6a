// A user's generic struct with the name of the lens type of a function generic over the same
// parameters: one error at the function, naming `#[lens(name = ...)]` (it was "missing
// generics for struct `Gv`", with the help `fn gv<T, N><T: Real, const N: usize>`).
use paralens::prelude::*;

/// The user's own `Gv`.
pub struct Gv<T, const N: usize> {
    pub v: SVector<T, N>,
}

#[lens]
fn gv<T: Real, const N: usize>(x: SVector<T, N>) -> T {
    x.norm_squared()
}

fn main() {
    let _ = Gv::<f64, 2> { v: SVector::<f64, 2>::zeros() }.v;
}
