//! `para!`: models of sub-models, their generated reverse against finite differences, weight
//! sharing and learning. Generated code must not warn.
#![deny(warnings)]

use paralens::prelude::*;
use paralens::{GradCheck, check_gradient};

fn ok(name: &str, r: GradCheck) {
    assert!(r.passes(1e-7), "{name}: {r}");
}

para! {
    /// A two-layer perceptron.
    pub struct Mlp { l1: Dense<3, 5, f64>, l2: Dense<5, 2, f64> }
    fn forward(&self, x: SVector<f64, 3>) -> SVector<f64, 2> {
        let h = tanh(self.l1(x));
        self.l2(h)
    }
}

para! {
    /// One layer applied twice: its weights are shared, so their changes add.
    pub struct Twice { l: Dense<3, 3, f64> }
    fn forward(&self, x: SVector<f64, 3>) -> SVector<f64, 3> {
        let h = sigmoid(self.l(x));
        self.l(h) + x
    }
}

para! {
    /// Two inputs, a branch and an untouched sub-model.
    pub struct Gate { a: Dense<2, 2, f64>, b: Dense<2, 2, f64>, unused: Dense<2, 2, f64> }
    fn forward(&self, x: SVector<f64, 2>, y: SVector<f64, 2>) -> f64 {
        let s = if x.sum() > 0.0 { self.a(x) } else { self.b(x) * 2.0 };
        s.dot(&y)
    }
}

fn x3() -> SVector<f64, 3> {
    SVector::<f64, 3>::new(0.5, -1.0, 0.25)
}

#[test]
fn two_layer_model_matches_finite_differences_and_the_composite() {
    let m = Mlp::default();
    let p = m.init(3);
    ok(
        "mlp",
        check_gradient(
            |(p, x): (MlpParams, SVector<f64, 3>)| m.forward(&p, x),
            |(p, x), d| m.changes(&p, x, d),
            (p.clone(), x3()),
            1e-6,
        ),
    );
    // The same model written with combinators gives the same values and changes.
    let c = Dense::<3, 5, f64>::new()
        .then(Tanh)
        .then(Dense::<5, 2, f64>::new());
    let cp = ((p.l1.clone(), ()), p.l2.clone());
    let d = SVector::<f64, 2>::new(1.0, -0.5);
    let y = m.forward(&p, x3());
    let (dp, dx) = m.changes(&p, x3(), d);
    let yc = c.forward(&cp, x3());
    let (dpc, dxc) = c.changes(&cp, x3(), d);
    assert!((y - yc).norm() < 1e-12);
    assert!((dx - dxc).norm() < 1e-12);
    assert!((*dp.l1.w - *dpc.0.0.w).norm() < 1e-12);
    assert!((dp.l2.b - dpc.1.b).norm() < 1e-12);
    assert_eq!(m.forward(&p, x3()), y);
}

#[test]
fn calling_a_sub_model_twice_shares_its_weights() {
    let m = Twice::default();
    let p = m.init(4);
    ok(
        "twice",
        check_gradient(
            |(p, x): (TwiceParams, SVector<f64, 3>)| m.forward(&p, x),
            |(p, x), d| m.changes(&p, x, d),
            (p, x3()),
            1e-6,
        ),
    );
}

#[test]
fn branches_several_inputs_and_unused_sub_models() {
    let m = Gate::default();
    let p = m.init(5);
    for x in [
        SVector::<f64, 2>::new(0.5, 0.2),
        SVector::<f64, 2>::new(-0.5, 0.2),
    ] {
        let y = SVector::<f64, 2>::new(0.3, -0.7);
        ok(
            "gate",
            check_gradient(
                |(p, x, y): (GateParams, SVector<f64, 2>, SVector<f64, 2>)| m.forward(&p, (x, y)),
                |(p, x, y), d| {
                    let (dp, (dx, dy)) = m.changes(&p, (x, y), d);
                    (dp, dx, dy)
                },
                (p.clone(), x, y),
                1e-6,
            ),
        );
        // The unused sub-model gets a zero change.
        let (dp, _) = m.changes(&p, (x, y), 1.0);
        assert_eq!(*dp.unused.w, SMatrix::<f64, 2, 2>::zeros());
    }
}

para! {
    /// The Iris model of the examples, in f32.
    pub struct IrisMlp { l1: Dense<4, 16>, l2: Dense<16, 3> }
    fn forward(&self, x: SVector<f32, 4>) -> SVector<f32, 3> {
        self.l2(relu(self.l1(x)))
    }
}

#[test]
fn para_models_train_with_the_learner() {
    let model = IrisMlp {
        l1: Dense::new(),
        l2: Dense::glorot(),
    };
    let mut learner = Learner::new(model, model.init(0), SoftmaxCrossEntropy, Adam::new(0.02));
    let data = [
        (SVector::<f32, 4>::new(1.0, 0.0, 0.0, 0.5), 0),
        (SVector::<f32, 4>::new(0.0, 1.0, 0.5, 0.0), 1),
        (SVector::<f32, 4>::new(0.0, 0.0, 1.0, 1.0), 2),
    ];
    let (xs, ys): (Vec<_>, Vec<_>) = data.iter().copied().unzip();
    let before = learner.try_mean_loss(&xs, &ys).unwrap();
    for _ in 0..100 {
        for (x, y) in &data {
            learner.step(x, y);
        }
    }
    assert!(learner.try_mean_loss(&xs, &ys).unwrap() < before / 10.0);
    assert_eq!(learner.accuracy(&xs, &ys), 1.0);
}
