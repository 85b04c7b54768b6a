// A model with two scalars initialises its `#[lens]` layers generic over their scalar at the
// first (`T`); one such layer called at the second (`U`) is a type mismatch at the call's
// argument, reported once (the three bodies check the input in one form; it was once per
// body), and its output, at `T`, is not the forward function's at `U`: two errors.
use paralens::prelude::*;

#[lens]
fn layer<T: Real, const I: usize, const O: usize>(
    #[param] w: SMatrix<T, O, I>,
    x: SVector<T, I>,
) -> SVector<T, O> {
    tanh(w * x)
}

para! {
    pub struct Model<T: Real, U: Real> { a: Layer<3, 1>, b: Dense<2, 1, U>, _s: core::marker::PhantomData<T> }
    fn forward(&self, y: SVector<U, 3>) -> SVector<U, 1> {
        self.a(y)
    }
}

fn main() {}
