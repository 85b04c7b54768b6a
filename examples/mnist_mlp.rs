//! MNIST with a 784-128-10 perceptron (ReLU, softmax cross-entropy, Adam with a step size
//! lowered every third epoch), one example per step. Reads the original IDX files from `--data DIR`.
//!
//! ```text
//! cargo run --release --example mnist_mlp -- --data ../shared/data/mnist
//! ```

use paralens::data::{Images, load_mnist};
use paralens::prelude::*;
use rand::{SeedableRng, rngs::StdRng, seq::SliceRandom};
use std::path::PathBuf;
use std::time::Instant;

para! {
    /// 784 pixels -> 128 hidden units (ReLU) -> 10 digit scores.
    pub struct Mlp { l1: Dense<784, 128>, l2: Dense<128, 10> }
    fn forward(&self, x: SVector<f32, 784>) -> SVector<f32, 10> {
        self.l2(relu(self.l1(x)))
    }
}

fn inputs(images: &Images) -> Vec<SVector<f32, 784>> {
    (0..images.count)
        .map(|i| SVector::from_iterator(images.image(i).iter().map(|&v| f32::from(v) / 255.0)))
        .collect()
}

/// Trains for `epochs` epochs on the MNIST folder `dir`; returns the test accuracy.
///
/// # Errors
/// The data cannot be read.
pub fn run(
    dir: &std::path::Path,
    epochs: usize,
    verbose: bool,
) -> Result<f64, paralens::data::DataError> {
    let mnist = load_mnist(dir)?;
    let (xs, ts) = (inputs(&mnist.train_images), inputs(&mnist.test_images));
    let ys: Vec<usize> = mnist.train_labels.iter().map(|&l| l as usize).collect();
    let ty: Vec<usize> = mnist.test_labels.iter().map(|&l| l as usize).collect();
    let model = Mlp {
        l1: Dense::new(),
        l2: Dense::glorot(),
    };
    let params = model.init(0);
    let mut learner = Learner::new(model, params, SoftmaxCrossEntropy, Adam::new(0.001));
    let mut order: Vec<usize> = (0..xs.len()).collect();
    let mut rng = StdRng::seed_from_u64(0);
    for epoch in 1..=epochs {
        // Step size 1e-3, divided by 3 after every third epoch.
        learner.optimizer_mut().lr = 1e-3 / 3f32.powi(((epoch - 1) / 3) as i32);
        order.shuffle(&mut rng);
        let start = Instant::now();
        let mut total = 0.0;
        for &i in &order {
            total += learner.step(&xs[i], &ys[i]);
        }
        if verbose {
            println!(
                "epoch {epoch}  train loss {:.4}  test accuracy {:.4}  ({:.1} s)",
                total / xs.len() as f32,
                learner.accuracy(&ts, &ty),
                start.elapsed().as_secs_f64()
            );
        }
    }
    Ok(learner.accuracy(&ts, &ty))
}

fn main() {
    let mut data = None;
    let mut epochs = 9usize;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--data" => data = args.next().map(PathBuf::from),
            "--epochs" => epochs = args.next().and_then(|v| v.parse().ok()).unwrap_or(epochs),
            other => {
                eprintln!(
                    "error: unknown argument `{other}`\nusage: mnist_mlp --data DIR [--epochs N]"
                );
                std::process::exit(2);
            }
        }
    }
    let Some(dir) = data else {
        eprintln!(
            "error: give the MNIST folder with --data DIR (in this project: ../shared/data/mnist)"
        );
        std::process::exit(2);
    };
    match run(&dir, epochs, true) {
        Ok(acc) => println!("test accuracy {acc:.4}"),
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(1);
        }
    }
}
