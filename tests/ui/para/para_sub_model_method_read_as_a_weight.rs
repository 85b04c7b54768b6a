// A sub-model's weights read through a method it does not have (`self.l1.weights() * x`)
// instead of calling the sub-model (`self.l1(x)`): one error, rustc's "no method named
// `weights`" at the method. It was two, the second at the later, correct `self.l2(h)`
// ("`Dense<8, 3>` cannot take an input of type `SVector<f32, 4>`"): the operator's guard made
// the missing method's result an `f32`. A sub-model's method has a declared type and is not
// guarded (as a field of `self` is not, `para_sub_model_weight_read_as_a_field`).
use paralens::prelude::*;

para! {
    pub struct Model {
        l1: Dense<4, 8>,
        l2: Dense<8, 3>,
    }
    fn forward(&self, x: SVector<f32, 4>) -> SVector<f32, 3> {
        let h = relu(self.l1.weights() * x);
        self.l2(h)
    }
}

fn main() {}
