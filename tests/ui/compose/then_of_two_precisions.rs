// A `then` chain of an f64 layer and an f32 one (`Dense<8, 3>` is f32) in an f64 learner.
// The parameters of another scalar are named as a whole, once per bound
// (`((DenseParams<f64, 4, 8>, ()), DenseParams<f32, 8, 3>)`), not once per array of each
// layer (nine errors, six of them naming single matrices); the layer that cannot take the
// f64 values is named at `new` and at `step`.
use paralens::prelude::*;

fn main() {
    let model = Dense::<4, 8, f64>::new()
        .then(Relu)
        .then(Dense::<8, 3>::new());
    let params = model.init(0);
    let mut learner = Learner::new(model, params, SoftmaxCrossEntropy, Adam::new(0.01_f64));
    learner.step(&SVector::<f64, 4>::zeros(), &0);
}
