// A sub-model's weight read as a field (`self.l1.w * x`) instead of calling the sub-model
// (`self.l1(x)`): one error, rustc's "no field `w`" at the field. It was two, the second at
// the later, correct `self.l2(h)` ("`Dense<8, 3>` cannot take an input of type
// `SVector<f32, 4>`"): the operator's guard, which gives a forward-only operand whose type
// nothing fixes the scalar of the other operand, made the missing field an `f32`, so `h` was
// a valid `SVector<f32, 4>`. A field of `self` has a declared type and is not guarded.
use paralens::prelude::*;

para! {
    pub struct Model {
        l1: Dense<4, 8>,
        l2: Dense<8, 3>,
    }
    fn forward(&self, x: SVector<f32, 4>) -> SVector<f32, 3> {
        let h = relu(self.l1.w * x);
        self.l2(h)
    }
}

fn main() {}
