// The optimizer given where the loss goes and the loss where the optimizer goes. rustc
// reports each bound that fails (five errors; the learner's type carries the optimizer's
// bound too); each says what is not a loss or an optimizer and notes the order of
// `Learner::new`'s arguments (it said "the trait bound `Adam<{float}>: Loss<_>` is not
// satisfied" and listed the types implementing `Loss`).
use paralens::prelude::*;

fn main() {
    let model = Dense::<4, 16>::new()
        .then(Relu)
        .then(Dense::<16, 3>::glorot());
    let params = model.init(0);
    let mut learner = Learner::new(model, params, Adam::new(0.01), SoftmaxCrossEntropy);
    let _ = learner.step(&SVector::<f32, 4>::zeros(), &1);
}
