//! The learner: bad input, minibatches, input learning and the Iris recipe.

use nalgebra::SVector;
use paralens::prelude::*;
use paralens::{Argmax, LabelError, StepError};

#[allow(dead_code)]
#[path = "../examples/iris.rs"]
mod iris_example;

type X = SVector<f32, 4>;

fn mlp() -> paralens::Then<paralens::Then<Dense<4, 8>, Relu>, Dense<8, 3>> {
    Dense::<4, 8>::new()
        .then(Relu)
        .then(Dense::<8, 3>::glorot())
}

fn x(seed: f32) -> X {
    X::from_fn(|i, _| (i as f32 * 0.9 + seed).sin())
}

#[test]
fn label_out_of_range_is_an_error_and_changes_nothing() {
    let model = mlp();
    let mut l = Learner::new(model, model.init(0), SoftmaxCrossEntropy, Adam::new(0.01));
    let before = l.params().clone();
    let e = l.try_step(&x(0.0), &3).unwrap_err();
    assert_eq!(
        e,
        StepError::Label {
            index: 0,
            error: LabelError::OutOfRange {
                label: 3,
                classes: 3
            }
        }
    );
    assert_eq!(
        e.to_string(),
        "example 0: label 3 is out of range: the model has 3 classes (0..3)"
    );
    assert_eq!(l.params(), &before);
    // In a batch the error names the example.
    let e = l
        .try_step_batch::<2>(&[x(0.0), x(1.0)], &[1, 9])
        .unwrap_err();
    assert!(e.to_string().starts_with("example 1: label 9"), "{e}");
    assert_eq!(l.params(), &before);
}

#[test]
#[should_panic(expected = "label 5 is out of range")]
fn step_panics_with_the_same_message() {
    let model = mlp();
    let mut l = Learner::new(model, model.init(0), SoftmaxCrossEntropy, Sgd::new(0.1));
    l.step(&x(0.0), &5);
}

#[test]
fn non_finite_loss_is_refused() {
    let model = mlp();
    let mut l = Learner::new(model, model.init(0), SoftmaxCrossEntropy, Adam::new(0.01));
    let before = l.params().clone();
    let mut bad = x(0.0);
    bad[2] = f32::NAN;
    let e = l.try_step(&bad, &1).unwrap_err();
    assert!(matches!(e, StepError::NonFiniteLoss { .. }), "{e}");
    assert!(e.to_string().contains("the step was not applied"));
    assert_eq!(l.params(), &before);
    // The optimizer state did not advance either: the next good step is a first step.
    assert_eq!(l.optimizer_state().beta1_t, 1.0);
}

#[test]
fn non_finite_gradient_is_refused() {
    // A huge input overflows the parameter change (dW = dy x^T) while the loss stays finite.
    let model = Dense::<1, 2>::new();
    // The input type is named: `Dense` also takes batches on the heap.
    let mut l = Learner::<_, SVector<f32, 1>, _, _>::new(model, model.init(0), Mse, Sgd::new(1.0));
    let before = l.params().clone();
    let big = SVector::<f32, 1>::new(1e30);
    let e = l
        .try_step(&big, &SVector::<f32, 2>::new(0.0, 0.0))
        .unwrap_err();
    assert!(
        matches!(
            e,
            StepError::NonFiniteLoss { .. } | StepError::NonFiniteGradient
        ),
        "{e}"
    );
    assert_eq!(l.params(), &before);
    // A finite loss (5e37) with an overflowing change: dW = 1e19 * 1e20 overflows f32.
    let mut l = Learner::<_, SVector<f32, 1>, _, _>::new(model, model.init(0), Mse, Sgd::new(1.0));
    l.params_mut().w.fill(0.0);
    l.params_mut().b.fill(0.0);
    let e = l
        .try_step(
            &SVector::<f32, 1>::new(1e20),
            &SVector::<f32, 2>::new(1e19, 0.0),
        )
        .unwrap_err();
    assert_eq!(e, StepError::NonFiniteGradient);
}

#[test]
fn mis_sized_batches_are_refused() {
    let model = mlp();
    let mut l = Learner::new(model, model.init(0), SoftmaxCrossEntropy, Sgd::new(0.1));
    let e = l.try_step_batch::<4>(&[x(0.0); 3], &[0; 3]).unwrap_err();
    assert_eq!(
        e.to_string(),
        "batch size mismatch: a step takes 4 examples, and 3 are given"
    );
    let e = l.try_step_batch::<2>(&[x(0.0); 2], &[0; 3]).unwrap_err();
    assert_eq!(
        e.to_string(),
        "2 inputs and 3 labels: each input takes one label"
    );
    assert!(l.try_mean_loss(&[x(0.0); 2], &[0; 1]).is_err());
}

#[test]
fn minibatch_step_is_the_mean_of_single_steps() {
    // With SGD, one batch step moves by -lr times the mean gradient; check that against
    // the gradients of the single examples accumulated by hand.
    let model = mlp();
    let p0 = model.init(3);
    let xs = [x(0.0), x(1.0), x(2.0), x(3.0)];
    let ys = [0, 2, 1, 2];
    let mut batch = Learner::new(model, p0.clone(), SoftmaxCrossEntropy, Sgd::new(0.5));
    let loss = batch.step_batch::<4>(&xs, &ys);

    let mut grad = p0.clone();
    grad.scale(0.0);
    let mut total = 0.0;
    for (xi, yi) in xs.iter().zip(&ys) {
        let (out, pull) = model.vjp(&p0, *xi);
        let (l, pull_loss) = SoftmaxCrossEntropy.vjp(out, yi);
        total += l;
        pull(pull_loss(1.0), &mut grad);
    }
    assert!((loss - total / 4.0).abs() < 1e-6);
    let mut want = p0.clone();
    for (w, g) in want.slices_mut().zip(grad.slices()) {
        for (a, b) in w.iter_mut().zip(g) {
            *a -= 0.5 * b / 4.0;
        }
    }
    for (a, b) in batch
        .params()
        .slices()
        .flatten()
        .zip(want.slices().flatten())
    {
        assert!((a - b).abs() < 1e-6, "{a} vs {b}");
    }
}

#[test]
fn learning_an_input_moves_the_output_to_the_chosen_class() {
    // Train a classifier, then fix its parameters and optimise the input instead
    // (the input port opened): the learned input is classified as the target class.
    let report = iris_example::run(0, 30, false);
    assert!(report.test_accuracy > 0.9);
    let model = mlp();
    let mut l = Learner::new(model, model.init(1), SoftmaxCrossEntropy, Adam::new(0.02));
    let data = [(x(0.0), 0), (x(1.5), 1), (x(3.0), 2)];
    for _ in 0..300 {
        for (xi, yi) in &data {
            l.step(xi, yi);
        }
    }
    let start = data[0].0;
    assert_eq!(l.predict_class(&start), 0);
    let before = l.try_loss(&start, &2).unwrap();
    let dreamed = l.try_learn_input(start, &2, &Adam::new(0.05), 200).unwrap();
    assert_eq!(l.predict_class(&dreamed), 2);
    assert!(l.try_loss(&dreamed, &2).unwrap() < before);
    // The parameters were not touched.
    assert_eq!(l.predict_class(&start), 0);
}

#[test]
fn iris_recipe_reaches_95_percent_on_average() {
    // One split has 30 test flowers (steps of 3.3%): the claim is the mean over ten seeded
    // stratified splits, as the example prints it.
    let accs: Vec<f64> = (0..10)
        .map(|s| iris_example::run(s, 30, false).test_accuracy)
        .collect();
    let mean = accs.iter().sum::<f64>() / 10.0;
    assert!(mean >= 0.95, "mean test accuracy {mean} over {accs:?}");
    // Deterministic for a seed.
    let a = iris_example::run(3, 5, false);
    let b = iris_example::run(3, 5, false);
    assert_eq!(a.epoch_losses, b.epoch_losses);
    // And training makes progress.
    assert!(a.epoch_losses[4] < a.epoch_losses[0]);
}

#[test]
fn a_refused_step_leaves_no_change_behind() {
    // The change buffer is cleared by the optimizer as it reads it, so a refused step (whose
    // change was never read) must clear it too: the next good step is the same as on a
    // learner that never saw the bad input.
    let model = mlp();
    let mut a = Learner::new(model, model.init(0), SoftmaxCrossEntropy, Adam::new(0.01));
    let mut b = Learner::new(model, model.init(0), SoftmaxCrossEntropy, Adam::new(0.01));
    let mut bad = x(0.5);
    bad[1] = f32::INFINITY;
    assert!(a.try_step(&bad, &2).is_err());
    for k in 0..5 {
        let (la, lb) = (
            a.step(&x(k as f32), &(k % 3)),
            b.step(&x(k as f32), &(k % 3)),
        );
        assert_eq!(la.to_bits(), lb.to_bits());
    }
    assert_eq!(a.params(), b.params());
}

#[test]
fn clearing_while_reading_is_the_same_update() {
    use paralens::optim::{AdamW, Optimizer};
    // Adam's and AdamW's one-pass update-and-clear against update, then clear.
    let p0 = (SVector::<f64, 5>::from_fn(|i, _| i as f64 - 2.0), 0.3);
    let dp = (SVector::<f64, 5>::from_fn(|i, _| (i as f64).sin()), -0.7);
    for opt in [AdamW::new(0.01, 0.0), AdamW::new(0.01, 0.1)] {
        let (mut p1, mut p2) = (p0, p0);
        let (mut s1, mut s2) = (opt.init_state(&p1), opt.init_state(&p2));
        for _ in 0..3 {
            opt.update(&mut s1, &mut p1, &dp);
            let mut d = dp;
            opt.update_and_clear(&mut s2, &mut p2, &mut d);
            assert_eq!(d, (SVector::zeros(), 0.0));
        }
        assert_eq!(p1, p2);
        assert_eq!(s1, s2);
    }
    // Plain descent's one-pass update-and-clear, through a tuple, a matrix and a scalar.
    let sgd = paralens::optim::Sgd::new(0.1);
    let (mut p1, mut p2) = (p0, p0);
    for _ in 0..3 {
        sgd.update(&mut (), &mut p1, &dp);
        let mut d = dp;
        sgd.update_and_clear(&mut (), &mut p2, &mut d);
        assert_eq!(d, (SVector::zeros(), 0.0));
    }
    assert_eq!(p1, p2);
}

#[test]
fn a_step_on_an_owned_input_is_the_same_step() {
    let model = mlp();
    let mut a = Learner::new(model, model.init(0), SoftmaxCrossEntropy, Adam::new(0.01));
    let mut b = Learner::new(model, model.init(0), SoftmaxCrossEntropy, Adam::new(0.01));
    for k in 0..4 {
        let x = x(k as f32);
        assert_eq!(
            a.step(&x, &(k % 3)).to_bits(),
            b.step_owned(x, &(k % 3)).to_bits()
        );
    }
    assert_eq!(a.params(), b.params());
    assert!(b.try_step_owned(x(0.0), &7).is_err());
}

#[test]
fn an_output_of_nan_only_names_no_class_and_is_a_miss() {
    let model = mlp();
    let mut l: Learner<_, X, _, _> =
        Learner::new(model, model.init(0), SoftmaxCrossEntropy, Adam::new(0.01));
    // NaN weights in the last layer: every output entry NaN, whatever the input.
    l.params_mut().1.w.fill(f32::NAN);
    let xs = [x(0.0), x(1.0)];
    let out = l.predict(&xs[0]);
    assert!(out.iter().all(|v| v.is_nan()), "{out}");
    assert_eq!(out.class(), None);
    assert_eq!(l.predict_class(&xs[0]), 0);
    // Not a hit for any label (it was class 2 before, a hit for label 2).
    for label in 0..3 {
        assert_eq!(l.accuracy(&xs, &[label, label]), 0.0, "label {label}");
    }
    // One NaN entry is never chosen over a number.
    let some = SVector::<f32, 3>::new(f32::NAN, -1.0, -2.0);
    assert_eq!((some.class(), Argmax::argmax(&some)), (Some(1), 1));
}

#[test]
fn a_cloned_learner_trains_apart_and_prints() {
    let model = mlp();
    let mut a: Learner<_, X, _, _> =
        Learner::new(model, model.init(0), SoftmaxCrossEntropy, Adam::new(0.01));
    a.step(&x(0.0), &1);
    let mut b = a.clone();
    assert_eq!(a.params(), b.params());
    // The same step from the same state (Adam's moments cloned too) gives the same result.
    a.step(&x(1.0), &2);
    b.step(&x(1.0), &2);
    assert_eq!(a.params(), b.params());
    // Apart: a step of one leaves the other.
    let before = b.params().clone();
    a.step(&x(2.0), &0);
    assert_eq!(b.params(), &before);
    assert_ne!(a.params(), b.params());
    let shown = format!("{b:?}");
    assert!(
        shown.starts_with("Learner {") && shown.contains("Adam"),
        "{shown}"
    );
}

/// Runs one step of `mlp()` with optimizer `o` and returns its error, checking that nothing
/// changed; then checks that the learner trains again once the setting is mended by `mend`.
fn refused<O>(o: O, mend: impl FnOnce(&mut O)) -> StepError
where
    O: paralens::optim::Optimizer<
            <paralens::Then<paralens::Then<Dense<4, 8>, Relu>, Dense<8, 3>> as Para<X>>::Param,
            Scalar = f32,
        >,
{
    let model = mlp();
    let mut l = Learner::new(model, model.init(0), SoftmaxCrossEntropy, o);
    let before = l.params().clone();
    let e = l.try_step(&x(0.0), &1).unwrap_err();
    assert_eq!(l.params(), &before, "{e}");
    let e2 = l
        .try_step_batch::<2>(&[x(0.0), x(1.0)], &[1, 2])
        .unwrap_err();
    assert_eq!(e.to_string(), e2.to_string()); // NaN is not equal to itself
    assert_eq!(l.params(), &before);
    mend(l.optimizer_mut());
    l.try_step(&x(0.0), &1).unwrap();
    assert_ne!(l.params(), &before);
    e
}

fn setting(e: StepError) -> (&'static str, f64) {
    match e {
        StepError::Setting(bad) => (bad.name, bad.value),
        other => panic!("expected a setting error, got {other}"),
    }
}

// Adaptive optimizers apply their step size inside the update, where the learner's check of
// the change does not see it: a NaN one made every parameter NaN and the step returned `Ok`.
#[test]
fn an_optimizer_setting_out_of_range_refuses_the_step_and_changes_nothing() {
    let (name, v) = setting(refused(Adam::new(f32::NAN), |o| o.lr = 0.01));
    assert_eq!(name, "lr");
    assert!(v.is_nan());
    assert_eq!(
        setting(refused(Adam::new(f32::INFINITY), |o| o.lr = 0.01)).0,
        "lr"
    );
    let mut adam = Adam::new(0.01);
    adam.beta2 = 1.0;
    assert_eq!(setting(refused(adam, |o| o.beta2 = 0.999)), ("beta2", 1.0));
    adam = Adam::new(0.01);
    adam.beta1 = -0.5;
    assert_eq!(setting(refused(adam, |o| o.beta1 = 0.9)), ("beta1", -0.5));
    adam = Adam::new(0.01);
    adam.eps = 0.0;
    assert_eq!(setting(refused(adam, |o| o.eps = 1e-8)), ("eps", 0.0));
    assert_eq!(
        setting(refused(AdamW::new(0.01, f32::NAN), |o| o.weight_decay = 0.01)).0,
        "weight_decay"
    );
    assert_eq!(
        setting(refused(RmsProp::new(f32::NAN), |o| o.lr = 0.01)).0,
        "lr"
    );
    assert_eq!(
        setting(refused(AdaGrad::new(f32::NAN), |o| o.lr = 0.01)).0,
        "lr"
    );
    assert_eq!(
        setting(refused(Momentum::new(0.1, f32::NAN), |o| o.gamma = 0.9)).0,
        "gamma"
    );
    assert_eq!(
        setting(refused(Nesterov::new(0.1, 1.0), |o| o.gamma = 0.9)),
        ("gamma", 1.0)
    );
    // A negative rate is ascent, not descent.
    let e = refused(Sgd::new(-0.1), |o| o.lr = 0.1);
    assert_eq!(
        e.to_string(),
        "the optimizer's `lr` is -0.10000000149011612; it must be a finite number, 0 or more: the step was not applied"
    );
}

// An empty evaluation set gave a mean loss of 0 (a perfect fit) and an accuracy of 0 (a
// measured failure): neither was measured.
#[test]
fn a_mean_over_no_examples_is_not_a_number() {
    let model = mlp();
    let l: Learner<_, X, _, _> =
        Learner::new(model, model.init(0), SoftmaxCrossEntropy, Adam::new(0.01));
    let e = l.try_mean_loss(&[], &[]).unwrap_err();
    assert_eq!(e, StepError::NoExamples);
    assert_eq!(
        e.to_string(),
        "no examples: a mean over none is not a number"
    );
    assert!(l.accuracy(&[], &[]).is_nan());
    // One example is a mean.
    let one = l.try_mean_loss(&[x(0.0)], &[1]).unwrap();
    assert_eq!(one, l.try_loss(&x(0.0), &1).unwrap());
}

// The Iris example's command line (clap): `--splits 0` averaged over no split (a mean of NaN)
// and is refused, as are an unknown flag and a malformed number; `--epochs 0` trains nothing
// and reports no time per step (there is none to divide out).
#[test]
fn the_iris_example_refuses_a_bad_command_line() {
    use clap::Parser;
    let parse = |line: &str| {
        let argv = std::iter::once("iris").chain(line.split_whitespace());
        iris_example::Args::try_parse_from(argv)
    };
    let ok = parse("").unwrap();
    assert_eq!((ok.seed, ok.epochs, ok.splits), (0, 30, 10));
    for (line, says) in [
        ("--splits 0", "invalid value '0' for '--splits <N>'"),
        ("--seed x", "invalid value 'x' for '--seed <N>'"),
        ("--bogus", "unexpected argument '--bogus'"),
    ] {
        let e = parse(line)
            .err()
            .unwrap_or_else(|| panic!("{line} was accepted"));
        assert_eq!(e.exit_code(), 2, "{line}: {e}");
        assert!(e.to_string().contains(says), "{line}: {e}");
    }
    let r = iris_example::run(0, 0, false);
    assert_eq!((r.steps, r.epoch_losses.len()), (0, 0));
    assert!(r.ns_per_step.is_finite() && r.ns_per_step >= 0.0);
}
