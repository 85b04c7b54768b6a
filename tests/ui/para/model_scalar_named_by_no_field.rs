// A model generic over its scalar whose sub-models are all `#[lens]` layers generic over
// theirs names `T` in no field: one error at `T`, saying what to add (rustc's own E0392 came
// with two more errors from the derives, and its hint did not say the marker is data).
use paralens::prelude::*;

#[lens]
fn layer<T: Real, const I: usize, const O: usize>(
    #[param] w: SMatrix<T, O, I>,
    x: SVector<T, I>,
) -> SVector<T, O> {
    tanh(w * x)
}

para! {
    pub struct Model<T: Real> { l1: Layer<3, 4>, l2: Layer<4, 2> }
    fn forward(&self, x: SVector<T, 3>) -> SVector<T, 2> {
        self.l2(self.l1(x))
    }
}

fn main() {}
