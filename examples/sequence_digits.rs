//! The 8x8 digits (shipped with the crate, no download) read row by row by a GRU: eight
//! steps of eight pixels, one cell shared by the steps in a differentiated loop of `para!`,
//! then a dense readout of the last state; softmax cross-entropy, Adam, a seeded stratified
//! 80/20 split.
//!
//! ```text
//! cargo run --release --example sequence_digits -- --seed 0 --epochs 20
//! ```

use clap::Parser;
use paralens::data::{digits, stratified_split};
use paralens::prelude::*;
use paralens::recurrent::GruCell;
use paralens::train::{Control, Eval, Fit, fit};

/// Hidden units.
const HIDDEN: usize = 32;

/// An image as its eight rows.
pub type Rows = [SVector<f32, 8>; 8];

para! {
    /// Eight rows through a GRU cell, then ten scores from the last state.
    pub struct RowReader {
        cell: GruCell<8, HIDDEN, f32>,
        out: Dense<HIDDEN, 10>,
    }
    fn forward(&self, rows: Rows) -> SVector<f32, 10> {
        let mut h = SVector::<f32, HIDDEN>::zeros();
        for t in 0..8 {
            h = self.cell(rows[t], h);
        }
        self.out(h)
    }
}

/// The model, ready for `init`.
pub fn model() -> RowReader {
    RowReader {
        cell: GruCell::new(),
        out: Dense::glorot(),
    }
}

/// What one run gives.
pub struct Report {
    /// Test accuracy.
    pub test_accuracy: f64,
    /// Mean training loss per epoch.
    pub epoch_losses: Vec<f32>,
}

/// Trains on a seeded stratified 80/20 split and tests.
pub fn run(seed: u64, epochs: usize, verbose: bool) -> Report {
    let data = digits();
    let (train, test) = stratified_split(&data.labels, 0.2, seed);
    let rows = |i: usize| -> Rows {
        core::array::from_fn(|r| {
            SVector::<f32, 8>::from_fn(|c, _| data.images[i][r * 8 + c] as f32 / 16.0)
        })
    };
    let (xs, ys): (Vec<Rows>, Vec<usize>) =
        train.iter().map(|&i| (rows(i), data.labels[i])).unzip();
    let (tx, ty): (Vec<Rows>, Vec<usize>) = test.iter().map(|&i| (rows(i), data.labels[i])).unzip();
    let model = model();
    let mut learner = Learner::new(
        model,
        model.init(seed),
        SoftmaxCrossEntropy,
        Adam::new(0.002),
    );
    // The library's loop: one image per step, in a new seeded order each epoch; the test
    // accuracy after each epoch when verbose.
    let cfg = Fit {
        epochs,
        batch: 1,
        seed: seed ^ 0x6a7,
        patience: None,
        keep_best: false,
        progress: false,
    };
    let history = fit(
        &mut learner,
        xs.len(),
        &cfg,
        |idx| (xs[idx[0]], ys[idx[0]]),
        |l| Eval {
            loss: f64::NAN,
            accuracy: if verbose { l.accuracy(&tx, &ty) } else { 0.0 },
        },
        |_, e| {
            if verbose {
                println!(
                    "epoch {:3}  train loss {:.4}  test accuracy {:.3}  ({:.0} ms)",
                    e.epoch,
                    e.train_loss,
                    e.eval.accuracy,
                    e.seconds * 1e3
                );
            }
            Control::Continue
        },
    )
    .unwrap_or_else(|e| panic!("training stopped: {e}"));
    let epoch_losses = history.epochs.iter().map(|e| e.train_loss as f32).collect();
    Report {
        test_accuracy: learner.accuracy(&tx, &ty),
        epoch_losses,
    }
}

/// The 8x8 digits read row by row by a GRU (eight steps of eight pixels, one cell shared by
/// the steps), a dense readout of the last state; softmax cross-entropy and Adam on a seeded
/// stratified 80/20 split.
#[derive(Parser, Debug)]
#[command(name = "sequence_digits", version)]
struct Args {
    /// Seed of the split, the initial weights and the order.
    #[arg(long, value_name = "N", default_value_t = 0)]
    seed: u64,
    /// Passes over the training images.
    #[arg(long, value_name = "N", default_value_t = 20)]
    epochs: usize,
}

fn main() {
    let Args { seed, epochs } = Args::parse();
    println!(
        "8x8 digits read row by row by a GRU ({HIDDEN} hidden), stratified 80/20 split (seed {seed})"
    );
    let r = run(seed, epochs, true);
    println!("test accuracy {:.3}", r.test_accuracy);
}
