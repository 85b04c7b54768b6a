//! The 8x8 digits (shipped with the crate, no download) with a small convolutional network
//! built from span layers: conv 3x3 x16, bias, ReLU, average pooling 2x2, dense 144 -> 10,
//! softmax cross-entropy, Adam. Seeded stratified 80/20 split.
//!
//! ```text
//! cargo run --release --example digits_cnn -- --seed 0 --epochs 30 --save cnn.safetensors
//! cargo run --release --example digits_cnn -- --seed 0 --load cnn.safetensors
//! cargo run --release --example digits_cnn -- --seed 0 --plot curves.svg
//! ```

use clap::{CommandFactory, Parser};
use paralens::data::{digits, stratified_split};
use paralens::prelude::*;
use paralens::span::{Bias, SpanLayer};
use paralens::train::{Control, Eval, Fit, History, fit};
use std::path::PathBuf;

para! {
    /// 1x8x8 -> conv 3x3 -> 16x6x6 -> avg pool 2 -> 16x3x3 -> 10 scores.
    #[derive(Clone, Debug)]
    pub struct DigitsCnn {
        conv: SpanLayer<f32, 64, 576, 144>,
        bias: Bias<576>,
        pool: SpanLayer<f32, 576, 144, 0>,
        fc: Dense<144, 10>,
    }
    fn forward(&self, x: SVector<f32, 64>) -> SVector<f32, 10> {
        let h = relu(self.bias(self.conv(x)));
        self.fc(self.pool(h))
    }
}

/// What one run gives.
pub struct Report {
    /// Test accuracy.
    pub test_accuracy: f64,
    /// Mean training loss per epoch.
    pub epoch_losses: Vec<f32>,
    /// Every epoch's report (held-out scores only when verbose).
    pub history: History,
}

/// A trained network and the split it was tested on.
pub struct Trained {
    /// The model.
    pub model: DigitsCnn,
    /// Its trained parameters.
    pub params: DigitsCnnParams,
    /// Test images (pixels scaled to 0..1) and labels.
    pub test: (Vec<SVector<f32, 64>>, Vec<usize>),
    /// The report of the run.
    pub report: Report,
}

/// Trains on a seeded stratified 80/20 split and tests.
pub fn run(seed: u64, epochs: usize, verbose: bool) -> Report {
    train(seed, epochs, verbose).report
}

/// [`run`], keeping the trained network.
pub fn train(seed: u64, epochs: usize, verbose: bool) -> Trained {
    let data = digits();
    let (train, test) = stratified_split(&data.labels, 0.2, seed);
    let x = |i: usize| SVector::<f32, 64>::from_fn(|j, _| data.images[i][j] as f32 / 16.0);
    let (xs, ys): (Vec<_>, Vec<_>) = train.iter().map(|&i| (x(i), data.labels[i])).unzip();
    let (tx, ty): (Vec<_>, Vec<_>) = test.iter().map(|&i| (x(i), data.labels[i])).unzip();
    let (model, params) = fresh(seed);
    let mut learner = Learner::new(model.clone(), params, SoftmaxCrossEntropy, Adam::new(0.005));
    // The library's loop: one image per step, in a new seeded order each epoch; when
    // verbose, the training and test scores after each epoch (the test split is this
    // example's only held-out data).
    let cfg = Fit {
        epochs,
        batch: 1,
        seed: seed ^ 0xd161,
        patience: None,
        keep_best: false,
        progress: false,
    };
    let mean_loss = |l: &Learner<_, _, _, _>, xs: &[SVector<f32, 64>], ys: &[usize]| {
        let total: f64 = xs
            .iter()
            .zip(ys)
            .map(|(x, y)| f64::from(l.try_loss(x, y).unwrap_or(f32::NAN)))
            .sum();
        total / xs.len() as f64
    };
    let history = fit(
        &mut learner,
        xs.len(),
        &cfg,
        |idx| (xs[idx[0]], ys[idx[0]]),
        |l| {
            if verbose {
                Eval {
                    loss: mean_loss(l, &tx, &ty),
                    accuracy: l.accuracy(&tx, &ty),
                }
            } else {
                Eval {
                    loss: f64::NAN,
                    accuracy: 0.0,
                }
            }
        },
        |l, e| {
            if verbose {
                println!(
                    "epoch {:3}  train loss {:.4}  train accuracy {:.3}  test accuracy {:.3}  ({:.0} ms)",
                    e.epoch,
                    e.train_loss,
                    l.accuracy(&xs, &ys),
                    e.eval.accuracy,
                    e.seconds * 1e3
                );
            }
            Control::Continue
        },
    )
    .unwrap_or_else(|e| panic!("training stopped: {e}"));
    let epoch_losses = history.epochs.iter().map(|e| e.train_loss as f32).collect();
    let report = Report {
        test_accuracy: learner.accuracy(&tx, &ty),
        epoch_losses,
        history,
    };
    Trained {
        model,
        params: learner.params().clone(),
        test: (tx, ty),
        report,
    }
}

/// The model of `train`, with fresh parameters from `seed` (to load a checkpoint into).
pub fn fresh(seed: u64) -> (DigitsCnn, DigitsCnnParams) {
    let model = DigitsCnn {
        conv: SpanLayer::conv2d::<1, 8, 8, 16, 3, 1, 0>(),
        bias: Bias::new(),
        pool: SpanLayer::avg_pool2d::<16, 6, 6, 2, 2>(),
        fc: Dense::glorot(),
    };
    let params = model.init(seed);
    (model, params)
}

/// Test accuracy of `params` on the seed's split.
pub fn test_accuracy(model: &DigitsCnn, params: &DigitsCnnParams, seed: u64) -> f64 {
    let data = digits();
    let (_, test) = stratified_split(&data.labels, 0.2, seed);
    let right = test
        .iter()
        .filter(|&&i| {
            let x = SVector::<f32, 64>::from_fn(|j, _| data.images[i][j] as f32 / 16.0);
            model.forward(params, x).argmax().0 == data.labels[i]
        })
        .count();
    right as f64 / test.len() as f64
}

/// The 8x8 digits (shipped with the crate) with a small convolutional network built from span
/// layers (conv 3x3 x16, bias, ReLU, average pooling, dense 144 -> 10), softmax
/// cross-entropy and Adam, on a seeded stratified 80/20 split.
#[derive(Parser, Debug)]
#[command(name = "digits_cnn", version)]
pub struct Args {
    /// Seed of the split, the initial weights and the order.
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub seed: u64,
    /// Passes over the training images.
    #[arg(long, value_name = "N", default_value_t = 30)]
    pub epochs: usize,
    /// Write the trained parameters as a safetensors checkpoint.
    #[arg(long, value_name = "PATH")]
    pub save: Option<PathBuf>,
    /// Predict with saved parameters instead of training (nothing to save or plot then).
    #[arg(long, value_name = "PATH", conflicts_with_all = ["save", "plot"])]
    pub load: Option<PathBuf>,
    /// Write the loss and accuracy curves as SVG.
    #[arg(long, value_name = "PATH")]
    pub plot: Option<PathBuf>,
}

impl Args {
    /// What clap cannot check: a file to write in a folder that does not exist is refused
    /// now, not after training.
    ///
    /// # Errors
    /// clap's, naming the file.
    pub fn check(self) -> Result<Self, clap::Error> {
        for path in [&self.save, &self.plot].into_iter().flatten() {
            let parent = path.parent().filter(|p| !p.as_os_str().is_empty());
            if parent.is_some_and(|p| !p.is_dir()) {
                return Err(Self::command().error(
                    clap::error::ErrorKind::ValueValidation,
                    format!("cannot write {}: its folder does not exist", path.display()),
                ));
            }
        }
        // Zero epochs draw no curve: refused now, not after training.
        if self.epochs == 0 && self.plot.is_some() {
            return Err(Self::command().error(
                clap::error::ErrorKind::ArgumentConflict,
                "`--plot` draws the epochs' curves, and `--epochs 0` runs none",
            ));
        }
        Ok(self)
    }
}

fn main() {
    let Args {
        seed,
        epochs,
        save,
        load,
        plot,
    } = Args::parse().check().unwrap_or_else(|e| e.exit());
    println!("8x8 digits: 1797 images, stratified 80/20 split (seed {seed})");
    if let Some(path) = load {
        // Predict with a saved model: no training.
        let (model, mut params) = fresh(seed);
        if let Err(e) = paralens::checkpoint::load_model(&path, &model, &mut params) {
            eprintln!("error: {e}");
            std::process::exit(1);
        }
        println!(
            "loaded {}; test accuracy {:.3}",
            path.display(),
            test_accuracy(&model, &params, seed)
        );
        return;
    }
    let t = train(seed, epochs, true);
    println!("test accuracy {:.3}", t.report.test_accuracy);
    if let Some(path) = plot {
        let title = format!("digits_cnn on the 8x8 digits (seed {seed})");
        match t.report.history.plot(&path, &title) {
            Ok(()) => println!("wrote the curves to {}", path.display()),
            Err(e) => {
                eprintln!("error: {}: {e}", path.display());
                std::process::exit(1);
            }
        }
    }
    if let Some(path) = save {
        match paralens::checkpoint::save_model(&path, &t.model, &t.params) {
            Ok(()) => println!("saved the parameters to {}", path.display()),
            Err(e) => {
                eprintln!("error: {e}");
                std::process::exit(1);
            }
        }
    }
}
