// The first layer outputs 16 values, the second takes 8.
use paralens::prelude::*;

fn main() {
    let model = Dense::<4, 16>::new().then(Relu).then(Dense::<8, 3>::new());
    let params = model.init(0);
    let _ = Learner::new(model, params, SoftmaxCrossEntropy, Adam::new(0.01))
        .step(&SVector::<f32, 4>::zeros(), &0);
}
