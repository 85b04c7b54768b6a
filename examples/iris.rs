//! Iris: a 4-16-3 MLP (ReLU) with softmax cross-entropy and Adam. The model is declared with
//! `para!`, whose reverse pass is generated at compile time; one training step is the
//! composite `model ; loss ; learning rate` run forward and back, with Adam on the parameter
//! port. The data ships with the crate; `--seed N` fixes split, weights and order.
//!
//! ```text
//! cargo run --release --example iris -- --seed 0 --epochs 30 --splits 10
//! ```

use clap::Parser;
use paralens::data::{Standardizer, iris, stratified_split};
use paralens::prelude::*;
use paralens::train::{Control, Eval, Fit, fit};

para! {
    /// 4 measurements -> 16 hidden units (ReLU) -> 3 class scores.
    pub struct IrisMlp { l1: Dense<4, 16>, l2: Dense<16, 3> }
    fn forward(&self, x: SVector<f32, 4>) -> SVector<f32, 3> {
        let h = relu(self.l1(x));
        self.l2(h)
    }
}

fn main() {
    let args = Args::parse();
    let report = run(args.seed, args.epochs, true);
    println!(
        "test accuracy {:.3} on split {} ({} of {})",
        report.test_accuracy, args.seed, report.test_hits, report.test_size
    );
    // `--epochs 0` takes no step: no time per step to divide out.
    if report.steps == 0 {
        println!("no epochs run");
    } else {
        println!(
            "time per training step {:.1} ns ({} steps, batch 1, Adam)",
            report.ns_per_step, report.steps
        );
    }
    // Thirty test flowers make one split's accuracy move in steps of 3.3%: the mean over
    // several seeded splits is the figure to compare.
    // The seeds after `--seed`, wrapping past `u64::MAX` (`seed..seed + splits` overflowed
    // into an empty range and a mean of NaN).
    let last = args.seed.wrapping_add(args.splits - 1);
    let accs: Vec<f64> = (0..args.splits)
        .map(|k| run(args.seed.wrapping_add(k), args.epochs, false).test_accuracy)
        .collect();
    let mean = accs.iter().sum::<f64>() / accs.len() as f64;
    println!(
        "mean test accuracy over {} stratified 80/20 splits (seeds {} to {last}): {mean:.3}",
        accs.len(),
        args.seed,
    );
}

/// What one seeded run of the recipe gives.
pub struct Report {
    /// Fraction of test flowers classified correctly.
    pub test_accuracy: f64,
    /// Number of test flowers classified correctly.
    pub test_hits: usize,
    /// Number of test flowers.
    pub test_size: usize,
    /// Mean training loss of each epoch.
    pub epoch_losses: Vec<f32>,
    /// Training steps taken.
    pub steps: u64,
    /// Wall time per step.
    pub ns_per_step: f64,
}

/// Trains the 4-16-3 MLP on a seeded stratified 80/20 split and tests it.
pub fn run(seed: u64, epochs: usize, verbose: bool) -> Report {
    let data = iris();
    let (train, test) = stratified_split(&data.labels, 0.2, seed);
    let rows: Vec<[f64; 4]> = train.iter().map(|&i| data.features[i]).collect();
    let scale = Standardizer::fit(&rows);
    let to_x = |i: usize| {
        let row = scale.apply(&data.features[i]);
        SVector::<f32, 4>::from_fn(|j, _| row[j] as f32)
    };
    let (x_train, y_train): (Vec<_>, Vec<_>) =
        train.iter().map(|&i| (to_x(i), data.labels[i])).unzip();
    let (x_test, y_test): (Vec<_>, Vec<_>) =
        test.iter().map(|&i| (to_x(i), data.labels[i])).unzip();
    if verbose {
        println!(
            "iris: {} train / {} test examples (stratified, seed {seed})",
            x_train.len(),
            x_test.len()
        );
    }

    // He initialisation before the ReLU, Glorot for the class scores.
    let model = IrisMlp {
        l1: Dense::new(),
        l2: Dense::glorot(),
    };
    let params = model.init(seed);
    let mut learner = Learner::new(model, params, SoftmaxCrossEntropy, Adam::new(0.01));

    // The library's loop: one example per step, in a new seeded order each epoch.
    let cfg = Fit {
        epochs,
        batch: 1,
        seed: seed ^ 0x5eed,
        patience: None,
        keep_best: false,
        progress: false,
    };
    let history = fit(
        &mut learner,
        x_train.len(),
        &cfg,
        |idx| (x_train[idx[0]], y_train[idx[0]]),
        // The training accuracy, printed per epoch (not a held-out score: the test split
        // is used once, at the end).
        |l| Eval {
            loss: f64::NAN,
            accuracy: if verbose {
                l.accuracy(&x_train, &y_train)
            } else {
                0.0
            },
        },
        |_, e| {
            if verbose {
                println!(
                    "epoch {:3}  train loss {:.4}  train accuracy {:.3}",
                    e.epoch, e.train_loss, e.eval.accuracy
                );
            }
            Control::Continue
        },
    )
    .unwrap_or_else(|e| panic!("training stopped: {e}"));
    let epoch_losses: Vec<f32> = history.epochs.iter().map(|e| e.train_loss as f32).collect();
    let steps = (history.epochs.len() * x_train.len()) as u64;
    let busy: f64 = history.epochs.iter().map(|e| e.seconds).sum();
    let test_accuracy = learner.accuracy(&x_test, &y_test);
    Report {
        test_accuracy,
        test_hits: (test_accuracy * x_test.len() as f64).round() as usize,
        test_size: x_test.len(),
        epoch_losses,
        steps,
        ns_per_step: busy * 1e9 / steps.max(1) as f64,
    }
}

/// Iris: a 4-16-3 MLP (ReLU) declared with `para!`, trained with softmax cross-entropy and
/// Adam on a seeded stratified 80/20 split, then the mean test accuracy over several splits.
#[derive(Parser, Debug)]
#[command(name = "iris", version)]
pub struct Args {
    /// Seed of the first split (its weights and order too); the other splits follow it.
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub seed: u64,
    /// Passes over the 120 training flowers.
    #[arg(long, value_name = "N", default_value_t = 30)]
    pub epochs: usize,
    /// Seeded splits to average the test accuracy over.
    #[arg(long, value_name = "N", default_value_t = 10,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub splits: u64,
}
