//! A linear SVM on the 8x8 digits (shipped with the crate, no download): one dense layer
//! 64 -> 10 trained with the multi-class hinge loss of Crammer and Singer and weight decay
//! (AdamW), beside logistic regression (the same layer with softmax cross-entropy, Adam) on
//! the same seeded stratified 80/20 split. Both are the same parametric lens with a different
//! loss lens after it.
//!
//! ```text
//! cargo run --release --example svm -- --seed 0 --epochs 40
//! ```

use clap::Parser;
use paralens::data::{digits, stratified_split};
use paralens::prelude::*;
use paralens::train::{Control, Eval, Fit, fit};

/// Test accuracies of the two runs.
pub struct Report {
    /// The linear SVM (hinge loss).
    pub svm: f64,
    /// Logistic regression (softmax cross-entropy).
    pub logistic: f64,
}

/// One example set: inputs scaled to [0, 1] and labels.
type Set = (Vec<SVector<f32, 64>>, Vec<usize>);

fn sets(seed: u64) -> (Set, Set) {
    let data = digits();
    let (train, test) = stratified_split(&data.labels, 0.2, seed);
    let x = |i: usize| SVector::<f32, 64>::from_fn(|j, _| data.images[i][j] as f32 / 16.0);
    let pick = |idx: &[usize]| idx.iter().map(|&i| (x(i), data.labels[i])).unzip();
    (pick(&train), pick(&test))
}

/// Trains `learner` for `epochs` seeded shuffled passes over `train`, one example per step,
/// through the library's loop.
fn train<M, L, O>(
    learner: &mut Learner<M, SVector<f32, 64>, L, O>,
    train: &Set,
    epochs: usize,
    seed: u64,
) where
    M: Para<SVector<f32, 64>, Out = SVector<f32, 10>>,
    M::Out: Clone,
    M::Param: Flat<f32> + Clone,
    L: Loss<SVector<f32, 10>, Label = usize, Scalar = f32>,
    O: Optimizer<M::Param, Scalar = f32>,
{
    let cfg = Fit {
        epochs,
        batch: 1,
        seed: seed ^ 0x5f3,
        patience: None,
        keep_best: false,
        progress: false,
    };
    // No held-out score per epoch: the test split is used once, at the end.
    let no_eval = |_: &Learner<M, SVector<f32, 64>, L, O>| Eval {
        loss: f64::NAN,
        accuracy: 0.0,
    };
    fit(
        learner,
        train.0.len(),
        &cfg,
        |idx| (train.0[idx[0]], train.1[idx[0]]),
        no_eval,
        |_, _| Control::Continue,
    )
    .unwrap_or_else(|e| panic!("training stopped: {e}"));
}

/// Trains both models on one split and tests them.
pub fn run(seed: u64, epochs: usize) -> Report {
    let (tr, te) = sets(seed);
    let model = Dense::<64, 10>::glorot();
    let mut svm = Learner::new(model, model.init(seed), Hinge, AdamW::new(0.002, 0.01));
    train(&mut svm, &tr, epochs, seed);
    let mut logistic = Learner::new(
        model,
        model.init(seed),
        SoftmaxCrossEntropy,
        Adam::new(0.002),
    );
    train(&mut logistic, &tr, epochs, seed);
    Report {
        svm: svm.accuracy(&te.0, &te.1),
        logistic: logistic.accuracy(&te.0, &te.1),
    }
}

/// A linear SVM (Crammer-Singer hinge loss, AdamW) beside logistic regression on the 8x8
/// digits: the same dense layer with a different loss lens, on one seeded stratified 80/20
/// split.
#[derive(Parser, Debug)]
#[command(name = "svm", version)]
struct Args {
    /// Seed of the split, the initial weights and the order.
    #[arg(long, value_name = "N", default_value_t = 0)]
    seed: u64,
    /// Passes over the training images.
    #[arg(long, value_name = "N", default_value_t = 40)]
    epochs: usize,
}

fn main() {
    let Args { seed, epochs } = Args::parse();
    println!("8x8 digits: 1797 images, stratified 80/20 split (seed {seed}), {epochs} epochs");
    let r = run(seed, epochs);
    println!(
        "linear SVM (Crammer-Singer hinge, AdamW)      test accuracy {:.3}",
        r.svm
    );
    println!(
        "logistic regression (softmax cross-entropy)   test accuracy {:.3}",
        r.logistic
    );
}
