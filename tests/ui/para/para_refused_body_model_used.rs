// A `para!` model whose body is refused (a closure in `map`), used as a model after it:
// the refusal is the one error. The model keeps its parameters, `Init` and `Para` (bodies
// that never run), so `init`, `forward` and a `Learner` on it add nothing (they were three
// more errors: "no method named `init`", "no method named `forward`", "`Scaled` cannot
// take an input").
use paralens::prelude::*;

para! {
    pub struct Scaled { l1: Dense<4, 3> }
    fn forward(&self, x: SVector<f32, 4>) -> SVector<f32, 3> {
        self.l1(x).map(|v| v * 2.0)
    }
}

fn main() {
    let model = Scaled { l1: Dense::new() };
    let params = model.init(0);
    let y = model.forward(&params, SVector::<f32, 4>::zeros());
    let mut learner = Learner::new(model, params, SoftmaxCrossEntropy, Adam::new(0.01));
    let _ = learner.step(&SVector::<f32, 4>::zeros(), &1);
    println!("{y}");
}
