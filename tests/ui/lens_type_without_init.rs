// A `#[lens]` type whose parameters' type names the function's scalar `T` has no `Init`:
// where one is asked for, the error says why and what to write (as a `para!` sub-model the
// same error is repeated once per use of its parameter type: noted on the issue).
use paralens::prelude::*;

#[lens]
fn affine<T: Real, const N: usize>(#[param] w: SVector<T, N>, x: SVector<T, N>) -> T {
    w.dot(&x)
}

fn needs_init<M: Init>(_: M) {}

fn main() {
    needs_init(Affine::<3>);
}
