// `.then(relu)`, the function, where its lens type `Relu` composes: the errors (at `init`,
// `new` and `step`, where the chain is used) say to write `Relu`.
use paralens::prelude::*;

fn main() {
    let model = Dense::<4, 8>::new().then(relu).then(Dense::<8, 3>::new());
    let params = model.init(0);
    let mut learner = Learner::new(model, params, SoftmaxCrossEntropy, Adam::new(0.01));
    learner.step(&SVector::<f32, 4>::zeros(), &0);
}
