//! Iris: a 4-16-3 MLP (ReLU) with softmax cross-entropy and Adam. The model is declared with
//! `para!`, whose reverse pass is generated at compile time; one training step is the
//! composite `model ; loss ; learning rate` run forward and back, with Adam on the parameter
//! port. The data ships with the crate; `--seed N` fixes split, weights and order.
//!
//! ```text
//! cargo run --release --example iris -- --seed 0 --epochs 30 --splits 10
//! ```

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
    let args = match Args::parse(std::env::args().skip(1)) {
        Ok(a) => a,
        Err(msg) => {
            eprintln!("error: {msg}\nusage: iris [--seed N] [--epochs N] [--splits N]");
            std::process::exit(2);
        }
    };
    let report = run(args.seed, args.epochs, true);
    println!(
        "test accuracy {:.3} on split {} ({} of {})",
        report.test_accuracy, args.seed, report.test_hits, report.test_size
    );
    println!(
        "time per training step {:.1} ns ({} steps, batch 1, Adam)",
        report.ns_per_step, report.steps
    );
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

struct Args {
    seed: u64,
    epochs: usize,
    splits: u64,
}

impl Args {
    fn parse(mut it: impl Iterator<Item = String>) -> Result<Self, String> {
        let mut args = Self {
            seed: 0,
            epochs: 30,
            splits: 10,
        };
        while let Some(flag) = it.next() {
            let mut value = |name: &str| it.next().ok_or_else(|| format!("{name} needs a value"));
            match flag.as_str() {
                "--seed" => {
                    let v = value("--seed")?;
                    args.seed = v
                        .parse()
                        .map_err(|_| format!("--seed: `{v}` is not a whole number"))?;
                }
                "--epochs" => {
                    let v = value("--epochs")?;
                    args.epochs = v
                        .parse()
                        .map_err(|_| format!("--epochs: `{v}` is not a whole number"))?;
                }
                "--splits" => {
                    let v = value("--splits")?;
                    args.splits =
                        v.parse().ok().filter(|&n| n > 0).ok_or_else(|| {
                            format!("--splits: `{v}` is not a positive whole number")
                        })?;
                }
                other => return Err(format!("unknown argument `{other}`")),
            }
        }
        Ok(args)
    }
}
