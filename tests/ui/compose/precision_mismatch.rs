// An f64 optimizer on an f32 model.
use paralens::prelude::*;

fn main() {
    let model = Dense::<4, 3>::new();
    let params = model.init(0);
    let mut learner = Learner::new(model, params, SoftmaxCrossEntropy, Sgd::new(0.1_f64));
    learner.step(&SVector::<f32, 4>::zeros(), &0);
}
