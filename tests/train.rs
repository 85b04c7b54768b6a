//! The training loop `train::fit`: seeded shuffles, whole batches only, early stopping, the
//! best epoch's parameters put back, the caller stopping the loop, a refused step reported,
//! and `Learner::reset_optimizer`.

use paralens::StepError;
use paralens::prelude::*;
use paralens::train::{Control, Eval, Fit, fit};
use std::cell::RefCell;

type V = SVector<f64, 1>;

fn learner() -> Learner<Dense<1, 1, f64>, V, Mse, Adam<f64>> {
    let model = Dense::<1, 1, f64>::new();
    Learner::new(model, model.init(0), Mse, Adam::new(0.05))
}

fn cfg(epochs: usize, batch: usize, seed: u64) -> Fit {
    Fit {
        epochs,
        batch,
        seed,
        patience: None,
        keep_best: false,
        progress: false,
    }
}

/// An evaluation that scores nothing (the tests that do not look at it).
fn no_eval<Lr>(_: &Lr) -> Eval {
    Eval {
        loss: 0.0,
        accuracy: 0.0,
    }
}

/// An epoch callback that never stops the loop.
fn carry_on<Lr>(_: &mut Lr, _: &paralens::train::EpochReport) -> Control {
    Control::Continue
}

/// `y = 2x - 1` at `x = i / n`.
fn example(i: usize, n: usize) -> (V, V) {
    let x = i as f64 / n as f64;
    (V::new(x), V::new(2.0 * x - 1.0))
}

fn loss_on(l: &Learner<Dense<1, 1, f64>, V, Mse, Adam<f64>>, n: usize) -> f64 {
    (0..n)
        .map(|i| {
            let (x, y) = example(i, n);
            l.try_loss(&x, &y).unwrap()
        })
        .sum::<f64>()
        / n as f64
}

#[test]
fn shuffles_are_seeded_and_epochs_see_every_whole_batch_once() {
    // 10 examples in batches of 3: three steps an epoch, the tenth example's batch dropped.
    let run = |seed| {
        let seen = RefCell::new(Vec::new());
        let mut l = learner();
        fit(
            &mut l,
            10,
            &cfg(2, 3, seed),
            |idx| {
                assert_eq!(idx.len(), 3);
                seen.borrow_mut().extend_from_slice(idx);
                example(idx[0], 10)
            },
            no_eval,
            carry_on,
        )
        .unwrap();
        (seen.into_inner(), *l.params().w)
    };
    let (a, wa) = run(7);
    let (b, wb) = run(7);
    let (c, _) = run(8);
    assert_eq!(a.len(), 18);
    assert_eq!((&a, wa), (&b, wb), "the same seed gives the same run");
    assert_ne!(a, c, "another seed, another order");
    for epoch in a.chunks(9) {
        let mut e = epoch.to_vec();
        e.sort_unstable();
        e.dedup();
        assert_eq!(e.len(), 9, "an example twice in one epoch: {epoch:?}");
    }
}

#[test]
fn it_learns_and_reports_every_epoch() {
    let mut l = learner();
    let mut reports = Vec::new();
    let h = fit(
        &mut l,
        64,
        &cfg(30, 1, 0),
        |idx| example(idx[0], 64),
        |l| {
            let loss = loss_on(l, 64);
            Eval {
                loss,
                accuracy: -loss,
            }
        },
        |_, e| {
            reports.push(*e);
            Control::Continue
        },
    )
    .unwrap();
    assert_eq!(reports, h.epochs);
    assert_eq!(h.epochs.len(), 30);
    assert!(h.epochs[29].eval.loss < 1e-3, "{:?}", h.epochs[29]);
    assert!(h.epochs[29].train_loss < h.epochs[0].train_loss);
}

#[test]
fn early_stopping_and_the_best_parameters_put_back() {
    // The evaluation is best after epoch 2 and worse after: with patience 2 the loop stops
    // after epoch 4, and the parameters are those after epoch 2.
    let mut l = learner();
    let mut at_two = None;
    let scores = [0.1, 0.5, 0.4, 0.3, 0.2, 0.1];
    let epoch = RefCell::new(0);
    let h = fit(
        &mut l,
        16,
        &Fit {
            patience: Some(2),
            keep_best: true,
            ..cfg(6, 4, 1)
        },
        |idx| example(idx[0], 16),
        |_| {
            let mut e = epoch.borrow_mut();
            *e += 1;
            Eval {
                loss: 1.0,
                accuracy: scores[*e - 1],
            }
        },
        |l, e| {
            if e.epoch == 2 {
                at_two = Some(l.params().clone());
            }
            Control::Continue
        },
    )
    .unwrap();
    assert!(h.stopped_early);
    assert_eq!(h.epochs.len(), 4);
    assert_eq!(h.best().unwrap().epoch, 2);
    let at_two = at_two.unwrap();
    assert_eq!((*l.params().w, l.params().b), (*at_two.w, at_two.b));
}

#[test]
fn the_caller_can_stop_and_a_refused_step_is_reported() {
    let mut l = learner();
    let h = fit(
        &mut l,
        8,
        &cfg(10, 2, 0),
        |idx| example(idx[0], 8),
        no_eval,
        |_, e| {
            if e.epoch == 3 {
                Control::Stop
            } else {
                Control::Continue
            }
        },
    )
    .unwrap();
    assert_eq!(h.epochs.len(), 3);
    assert!(!h.stopped_early);
    let before = l.params().clone();
    let e = fit(
        &mut l,
        8,
        &cfg(1, 2, 0),
        |_| (V::new(f64::NAN), V::new(0.0)),
        no_eval,
        carry_on,
    )
    .unwrap_err();
    assert!(matches!(e, StepError::NonFiniteLoss { .. }), "{e}");
    assert_eq!(*l.params().w, *before.w, "a refused step changes nothing");
}

#[test]
fn the_optimizer_state_resets() {
    let mut l = learner();
    let (x, y) = example(3, 8);
    l.step(&x, &y);
    assert!(l.optimizer_state().beta1_t < 1.0);
    let p = l.params().clone();
    l.reset_optimizer();
    assert_eq!(l.optimizer_state().beta1_t, 1.0);
    assert_eq!(l.optimizer_state().m.b, SVector::<f64, 1>::zeros());
    assert_eq!(*l.params().w, *p.w, "the parameters stay");
}

/// The points of the SVG polylines drawn in `color` (plotters writes one `<polyline>` per
/// series), as pixel pairs.
fn polylines(svg: &str, color: &str) -> Vec<Vec<(f64, f64)>> {
    svg.lines()
        .filter(|l| l.starts_with("<polyline") && l.contains(&format!("stroke=\"{color}\"")))
        .map(|l| {
            let pts = l
                .split("points=\"")
                .nth(1)
                .unwrap()
                .split('"')
                .next()
                .unwrap();
            pts.split_whitespace()
                .map(|p| {
                    let (x, y) = p.split_once(',').unwrap();
                    (x.parse().unwrap(), y.parse().unwrap())
                })
                .collect()
        })
        .collect()
}

#[test]
fn curves_are_plotted_one_point_per_epoch_and_bad_histories_are_refused() {
    use paralens::train::{History, PlotError};
    let mut l = learner();
    let h = fit(
        &mut l,
        64,
        &cfg(12, 1, 1),
        |idx| example(idx[0], 64),
        |l| {
            let loss = loss_on(l, 64);
            Eval {
                loss,
                accuracy: 1.0 / (1.0 + loss),
            }
        },
        carry_on,
    )
    .unwrap();
    let path = std::env::temp_dir().join(format!("paralens_curves_{}.svg", std::process::id()));
    h.plot(&path, "y = 2x - 1").unwrap();
    let svg = std::fs::read_to_string(&path).unwrap();
    std::fs::remove_file(&path).unwrap();
    assert!(svg.starts_with("<svg") && svg.contains("y = 2x - 1"));
    // Training loss (blue), held-out loss (red), held-out accuracy (green): one line each,
    // one point per epoch, epochs left to right.
    for color in ["#0000FF", "#FF0000", "#00FF00"] {
        let lines = polylines(&svg, color);
        let line = lines
            .iter()
            .find(|l| l.len() == h.epochs.len())
            .unwrap_or_else(|| panic!("no {color} curve of {} points: {lines:?}", h.epochs.len()));
        assert!(
            line.windows(2).all(|w| w[0].0 < w[1].0),
            "{color}: {line:?}"
        );
    }
    // The held-out loss falls, so its curve ends lower on the page (larger y) than it starts;
    // accuracy rises, so its curve ends higher (smaller y).
    let red = &polylines(&svg, "#FF0000")
        .into_iter()
        .find(|l| l.len() == h.epochs.len())
        .unwrap();
    let green = &polylines(&svg, "#00FF00")
        .into_iter()
        .find(|l| l.len() == h.epochs.len())
        .unwrap();
    assert!(h.epochs[11].eval.loss < h.epochs[0].eval.loss);
    assert!(red[11].1 > red[0].1 && green[11].1 < green[0].1);

    let empty = History {
        epochs: vec![],
        stopped_early: false,
    };
    assert!(matches!(empty.plot(&path, "t"), Err(PlotError::Empty)));
    let mut nan = h.clone();
    nan.epochs[3].eval.loss = f64::NAN;
    let err = nan.plot(&path, "t").unwrap_err();
    assert!(matches!(
        err,
        PlotError::NotFinite {
            epoch: 4,
            curve: "held-out loss"
        }
    ));
    assert_eq!(
        err.to_string(),
        "cannot plot: the held-out loss of epoch 4 is not finite"
    );
    assert!(!path.exists(), "nothing is written for a refused history");
    // An evaluation without a loss (NaN at every epoch): that curve is left out.
    let mut accuracy_only = h.clone();
    for e in &mut accuracy_only.epochs {
        e.eval.loss = f64::NAN;
    }
    accuracy_only.plot(&path, "t").unwrap();
    let svg = std::fs::read_to_string(&path).unwrap();
    std::fs::remove_file(&path).unwrap();
    assert!(polylines(&svg, "#FF0000").is_empty());
    assert_eq!(polylines(&svg, "#0000FF")[0].len(), 12);
    // Nor an accuracy (a regression): the losses alone, over the whole width.
    let mut loss_only = h.clone();
    for e in &mut loss_only.epochs {
        e.eval.accuracy = f64::NAN;
    }
    loss_only.plot(&path, "t").unwrap();
    let svg = std::fs::read_to_string(&path).unwrap();
    std::fs::remove_file(&path).unwrap();
    assert!(polylines(&svg, "#00FF00").is_empty());
    let wide = &polylines(&svg, "#FF0000")[0];
    assert_eq!(wide.len(), 12);
    assert!(wide[11].0 - wide[0].0 > red[11].0 - red[0].0, "{wide:?}");
    // An accuracy missing at one epoch only is refused, as a loss is.
    let mut one_missing = h.clone();
    one_missing.epochs[5].eval.accuracy = f64::NAN;
    assert!(matches!(
        one_missing.plot(&path, "t"),
        Err(PlotError::NotFinite {
            epoch: 6,
            curve: "held-out accuracy"
        })
    ));
    let missing = std::env::temp_dir()
        .join("no_such_dir_paralens")
        .join("c.svg");
    let err = h.plot(&missing, "t").unwrap_err();
    assert!(matches!(err, PlotError::Draw(_)));
    assert!(err.to_string().contains("no_such_dir_paralens"), "{err}");
}

/// The progress bar is silent when standard error is not a terminal (a log file, a pipe, CI):
/// the test runs itself again as a child process whose standard error is a pipe, the child
/// trains with `progress: true`, and the parent reads everything the child wrote.
#[test]
fn the_progress_bar_is_silent_when_stderr_is_not_a_terminal() {
    const CHILD: &str = "PARALENS_PROGRESS_CHILD";
    const NAME: &str = "the_progress_bar_is_silent_when_stderr_is_not_a_terminal";
    if std::env::var_os(CHILD).is_some() {
        let mut l = learner();
        let mut c = cfg(3, 2, 0);
        c.progress = true;
        let h = fit(&mut l, 40, &c, |idx| example(idx[0], 40), no_eval, carry_on).unwrap();
        // Straight to the pipe (the harness captures `println!`).
        use std::io::Write;
        writeln!(std::io::stdout(), "child trained {} epochs", h.epochs.len()).unwrap();
        return;
    }
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([NAME, "--exact", "--nocapture", "--test-threads=1"])
        .env(CHILD, "1")
        .output()
        .unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(out.status.success(), "the child failed: {stderr}");
    assert!(stdout.contains("child trained 3 epochs"), "{stdout}");
    assert!(
        !stderr.contains("epoch") && !stderr.contains("steps") && !stderr.contains('\r'),
        "the bar was drawn into a pipe: {stderr:?}"
    );
}

/// Fewer examples than one batch: an error before anything runs, not epochs of no steps
/// reporting a training loss of zero.
#[test]
fn fewer_examples_than_a_batch_is_an_error() {
    let mut l = learner();
    let before = l.params().clone();
    let e = fit(
        &mut l,
        5,
        &cfg(3, 8, 0),
        |idx| example(idx[0], 5),
        no_eval,
        carry_on,
    )
    .unwrap_err();
    assert_eq!(
        e,
        StepError::BatchSize {
            expected: 8,
            inputs: 5,
            labels: 5
        }
    );
    assert_eq!(*l.params(), before);
    // Exactly one batch is enough.
    let mut l = learner();
    let h = fit(
        &mut l,
        8,
        &cfg(2, 8, 0),
        |idx| example(idx[0], 8),
        no_eval,
        carry_on,
    )
    .unwrap();
    assert_eq!(h.epochs.len(), 2);
    assert!(h.epochs[0].train_loss > 0.0);
}

#[test]
fn an_evaluation_of_the_loss_alone_keeps_the_best_epoch() {
    // A regression's evaluation: no accuracy (NaN), the held-out loss best after epoch 3.
    // Compared as a number, the NaN made every epoch after the first look worse: the loop
    // stopped after epoch 3 and put back epoch 1.
    let mut l = learner();
    let losses = [0.5, 0.4, 0.3, 0.35, 0.36, 0.37];
    let epoch = RefCell::new(0);
    let h = fit(
        &mut l,
        16,
        &Fit {
            patience: Some(2),
            keep_best: true,
            ..cfg(6, 4, 1)
        },
        |idx| example(idx[0], 16),
        |_| {
            let mut e = epoch.borrow_mut();
            *e += 1;
            Eval {
                loss: losses[*e - 1],
                accuracy: f64::NAN,
            }
        },
        carry_on,
    )
    .unwrap();
    assert_eq!(h.best().unwrap().epoch, 3);
    assert_eq!(h.epochs.len(), 5);
    assert!(h.stopped_early);
}

#[test]
fn a_refused_label_is_named_by_its_example() {
    // Example 5 of 8 has a label out of range; its place in a shuffled batch of one is 0.
    let model = Dense::<2, 3, f64>::new();
    let mut l = Learner::new(model, model.init(0), SoftmaxCrossEntropy, Adam::new(0.01));
    let e = fit(
        &mut l,
        8,
        &cfg(1, 1, 3),
        |idx| {
            let i = idx[0];
            (
                SVector::<f64, 2>::new(i as f64, 1.0),
                if i == 5 { 9 } else { i % 3 },
            )
        },
        no_eval,
        carry_on,
    )
    .unwrap_err();
    assert!(matches!(e, StepError::Label { index: 5, .. }), "{e}");
    assert_eq!(
        e.to_string(),
        "example 5: label 9 is out of range: the model has 3 classes (0..3)"
    );
}

// `--epochs 18446744073709551615` (run until the callback stops) reserved a history of that
// many epochs up front and panicked with "capacity overflow" before the first step.
#[test]
fn as_many_epochs_as_there_are_numbers_runs_until_stopped() {
    let mut l = learner();
    let h = fit(
        &mut l,
        8,
        &cfg(usize::MAX, 2, 0),
        |idx| example(idx[0], 8),
        no_eval,
        |_, e| {
            if e.epoch == 2 {
                Control::Stop
            } else {
                Control::Continue
            }
        },
    )
    .unwrap();
    assert_eq!(h.epochs.len(), 2);
}

// Classes are the labels that occur: a label of `usize::MAX` overflowed `max + 1`, and one of
// 300 million scanned the labels once per number below it.
#[test]
fn a_stratified_split_takes_any_labels() {
    let labels = [
        7,
        usize::MAX,
        300_000_000,
        7,
        usize::MAX,
        7,
        7,
        7,
        300_000_000,
        7,
    ];
    let (train, test) = paralens::data::stratified_split(&labels, 0.5, 3);
    let mut all: Vec<usize> = train.iter().chain(&test).copied().collect();
    all.sort_unstable();
    assert_eq!(all, (0..labels.len()).collect::<Vec<_>>());
    // Half of each class, rounded: 3 of the six 7s, 1 of each pair.
    let count = |set: &[usize], c: usize| set.iter().filter(|&&i| labels[i] == c).count();
    assert_eq!(count(&test, 7), 3);
    assert_eq!(count(&test, usize::MAX), 1);
    assert_eq!(count(&test, 300_000_000), 1);
}

/// A batch of 0 was read as 1, and a patience of 0 stopped after the first epoch (always the
/// best so far) reporting an early stop: both are refused before anything runs.
#[test]
fn a_batch_or_patience_of_zero_is_refused_before_anything_runs() {
    let refused = |cfg: Fit| {
        let mut l = learner();
        let before = l.params().clone();
        let e = fit(
            &mut l,
            10,
            &cfg,
            |idx| example(idx[0], 10),
            no_eval,
            carry_on,
        )
        .unwrap_err();
        assert_eq!(*l.params(), before);
        e
    };
    let e = refused(cfg(3, 0, 0));
    assert!(
        matches!(
            e,
            StepError::FitSetting {
                name: "batch",
                value: 0,
                ..
            }
        ),
        "{e}"
    );
    assert_eq!(
        e.to_string(),
        "`Fit::batch` is 0; it must be 1 or more (the examples of one step)"
    );
    let e = refused(Fit {
        patience: Some(0),
        ..cfg(3, 1, 0)
    });
    assert!(
        matches!(
            e,
            StepError::FitSetting {
                name: "patience",
                value: 0,
                ..
            }
        ),
        "{e}"
    );
    assert!(e.to_string().contains("`None` never stops early"), "{e}");
    // A patience of 1 runs until one epoch does not improve.
    let mut l = learner();
    let h = fit(
        &mut l,
        10,
        &Fit {
            patience: Some(1),
            ..cfg(5, 1, 0)
        },
        |idx| example(idx[0], 10),
        no_eval,
        carry_on,
    )
    .unwrap();
    assert_eq!((h.epochs.len(), h.stopped_early), (2, true));
}

// Fitted to no rows, the standardizer was the identity, silently.
#[test]
#[should_panic(expected = "Standardizer::fit of no rows: there is nothing to fit")]
fn a_standardizer_of_no_rows_is_refused() {
    let _ = paralens::data::Standardizer::<2>::fit(&[]);
}
