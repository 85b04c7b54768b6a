// A `#[lens]` type whose parameters' type names the function's scalar `T` has no `Init` (it
// has `InitAt<T>`, through which a `para!` model initialises it at the model's scalar): where
// `Init` is asked for, the error says why and what to write.
use paralens::prelude::*;

#[lens]
fn affine<T: Real, const N: usize>(#[param] w: SVector<T, N>, x: SVector<T, N>) -> T {
    w.dot(&x)
}

fn needs_init<M: Init>(_: M) {}

fn main() {
    needs_init(Affine::<3>);
}
