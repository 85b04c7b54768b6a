//! MNIST read row by row: an LSTM with 128 hidden units reads the 28 rows of 28 pixels of a
//! batch of 32 images (one row per step of a differentiated loop, the cell's parameters
//! shared by the steps), and a dense layer scores the last hidden state.
//!
//! ```text
//! cargo run --release --example mnist_lstm -- --data ../shared/data/mnist --save lstm.safetensors
//! cargo run --release --example mnist_lstm -- --data ../shared/data/mnist --load lstm.safetensors
//! ```

use paralens::ShardedLearner;
use paralens::prelude::*;
use paralens::recurrent::LstmCell;
use paralens::train::{Control, Eval, Fit, History, fit_sharded};

#[path = "shared/mnist.rs"]
#[allow(dead_code)]
pub mod shared;

/// Images per step: [`shared::SHARDS`] shards of [`shared::COLUMNS`] images (the model takes
/// any number of columns).
pub const BATCH: usize = shared::SHARDS * shared::COLUMNS;
/// Hidden units.
pub const HIDDEN: usize = 128;

/// The rows of a batch: step `t` reads row `t` of every image, one image per column. Rows,
/// states and the cell's activations are heap matrices (blocks of a per-thread pool, reused
/// from step to step), so that a training step runs on a default 2 MiB thread.
pub type Rows<const B: usize = BATCH> = [HeapMatrix<f32, 28, B>; 28];

para! {
    /// An LSTM over the 28 rows, then 10 digit scores from its last hidden state.
    pub struct RowLstm { cell: LstmCell<28, HIDDEN, f32>, out: Dense<HIDDEN, 10> }
    fn forward<const B: usize>(&self, rows: Rows<B>) -> HeapMatrix<f32, 10, B> {
        let mut h = HeapMatrix::<f32, HIDDEN, B>::zeros();
        let mut c = HeapMatrix::<f32, HIDDEN, B>::zeros();
        for t in 0..28 {
            let (h2, c2) = self.cell(rows[t].clone(), h, c);
            h = h2;
            c = c2;
        }
        self.out(h)
    }
}

/// The model, ready for `init`.
#[must_use]
pub fn model() -> RowLstm {
    RowLstm {
        cell: LstmCell::new(),
        out: Dense::glorot(),
    }
}

/// The rows of the images `idx` (pixels in `0..=1`), in the batch layout.
pub fn rows<const B: usize>(images: &[SVector<f32, 784>], idx: &[usize]) -> Rows<B> {
    std::array::from_fn(|t| HeapMatrix::from_fn(|c, j| images[idx[j]][t * 28 + c]))
}

/// Test accuracy over whole batches of the test set.
pub fn accuracy(
    model: &RowLstm,
    params: &RowLstmParams,
    xs: &[SVector<f32, 784>],
    ys: &[usize],
) -> f64 {
    let mut right = 0;
    let batches = xs.len() / BATCH;
    for k in 0..batches {
        let idx: Vec<usize> = (k * BATCH..(k + 1) * BATCH).collect();
        let scores = model.forward(params, rows::<BATCH>(xs, &idx));
        for (j, &i) in idx.iter().enumerate() {
            if scores.column(j).argmax().0 == ys[i] {
                right += 1;
            }
        }
    }
    f64::from(right) / (batches * BATCH) as f64
}

/// The `--load PATH` path: the parameters saved at `path` (names, shapes and dtype checked)
/// and the fraction of `xs` they classify right.
///
/// # Errors
/// The file cannot be read or does not hold this model's parameters.
pub fn predict_saved(
    path: &std::path::Path,
    xs: &[SVector<f32, 784>],
    ys: &[usize],
) -> Result<f64, paralens::checkpoint::CheckpointError> {
    let model = model();
    let mut params = model.init(0);
    paralens::checkpoint::load_model(path, &model, &mut params)?;
    Ok(accuracy(&model, &params, xs, ys))
}

/// Trains for `epochs` epochs with the library's loop (`train::fit`: seeded shuffles, Adam,
/// step size divided by 3 after every two epochs) and returns the test accuracy, the trained
/// parameters and the history of the epochs.
///
/// # Errors
/// The data cannot be read.
pub fn run(
    dir: &std::path::Path,
    epochs: usize,
    verbose: bool,
    threads: Option<usize>,
) -> Result<(f64, RowLstmParams, History), paralens::data::DataError> {
    let m = shared::load(dir)?;
    let (xs, ts) = (
        shared::inputs(&m.train_images),
        shared::inputs(&m.test_images),
    );
    let ys: Vec<usize> = m.train_labels.iter().map(|&l| l as usize).collect();
    let ty: Vec<usize> = m.test_labels.iter().map(|&l| l as usize).collect();
    let model = model();
    let lr = 2e-3;
    let learner = Learner::new(
        model,
        model.init(0),
        PerColumn(SoftmaxCrossEntropy),
        Adam::new(lr),
    );
    // Shards of `COLUMNS` images, on `threads` threads (`None`: the cores, if faster).
    let mut learner = match threads {
        Some(n) => ShardedLearner::with_threads(learner, shared::SHARDS, n),
        None => ShardedLearner::new(learner, shared::SHARDS),
    };
    let cfg = Fit {
        epochs,
        batch: BATCH,
        seed: 0,
        patience: None,
        keep_best: false,
        progress: verbose,
    };
    let history = fit_sharded(
        &mut learner,
        xs.len(),
        &cfg,
        |idx| {
            (
                rows::<{ shared::COLUMNS }>(&xs, idx),
                std::array::from_fn(|j| ys[idx[j]]),
            )
        },
        |l| Eval {
            loss: f64::NAN,
            accuracy: accuracy(l.model(), l.params(), &ts, &ty),
        },
        |l, e| {
            l.optimizer_mut().lr = lr / 3f32.powi((e.epoch / 2) as i32);
            if verbose {
                shared::print_epoch(e);
            }
            Control::Continue
        },
    )
    .unwrap_or_else(|e| panic!("training stopped: {e}"));
    if verbose {
        println!("trained on {} thread(s)", learner.threads());
    }
    let learner = learner.learner();
    Ok((
        accuracy(learner.model(), learner.params(), &ts, &ty),
        learner.params().clone(),
        history,
    ))
}

fn main() {
    let a = shared::args(
        "mnist_lstm",
        "MNIST read row by row: an LSTM with 128 hidden units reads the 28 rows of 28 pixels, \
         a dense layer scores its last hidden state.",
        4,
    );
    let fail = |e: &dyn std::fmt::Display| -> ! {
        eprintln!("error: {e}");
        std::process::exit(1)
    };
    if let Some(path) = &a.load {
        let m = shared::load(&a.dir).unwrap_or_else(|e| fail(&e));
        let ty: Vec<usize> = m.test_labels.iter().map(|&l| l as usize).collect();
        let acc = predict_saved(path, &shared::inputs(&m.test_images), &ty)
            .unwrap_or_else(|e| fail(&e.to_string()));
        println!("loaded {}; test accuracy {acc:.4}", path.display());
        return;
    }
    let (acc, params, history) =
        run(&a.dir, a.epochs, true, a.threads).unwrap_or_else(|e| fail(&e));
    println!("test accuracy {acc:.4}");
    if let Some(path) = &a.plot {
        shared::plot(&history, path, "mnist_lstm").unwrap_or_else(|e| fail(&e));
    }
    if let Some(path) = &a.save {
        paralens::checkpoint::save_model(path, &model(), &params)
            .unwrap_or_else(|e| fail(&e.to_string()));
        println!("saved the parameters to {}", path.display());
    }
}
