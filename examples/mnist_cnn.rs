//! MNIST (or Fashion-MNIST) with a small convolutional network: conv 5x5 x16, ReLU, max
//! pooling 2, conv 5x5 x32, ReLU, max pooling 2, dense 512 -> 10; softmax cross-entropy,
//! Adam with a step size lowered every second epoch, one image per step. The convolutions
//! use the fast path (direct loops, tested equal to the span form).
//!
//! ```text
//! cargo run --release --example mnist_cnn -- --data ../shared/data/mnist --epochs 4
//! cargo run --release --example mnist_cnn -- --data ../shared/data/fashion-mnist --epochs 4
//! ```

use paralens::data::{Images, load_mnist};
use paralens::prelude::*;
use paralens::span::{Bias, Conv2d, MaxPool2d};
use rand::{SeedableRng, rngs::StdRng, seq::SliceRandom};
use std::path::PathBuf;
use std::time::Instant;

para! {
    /// 1x28x28 -> 16x24x24 -> 16x12x12 -> 32x8x8 -> 32x4x4 -> 10.
    #[derive(Clone, Debug)]
    pub struct Cnn {
        c1: Conv2d<f32, 784, 9216, 400>,
        b1: Bias<9216>,
        p1: MaxPool2d<9216, 2304>,
        c2: Conv2d<f32, 2304, 2048, 12800>,
        b2: Bias<2048>,
        p2: MaxPool2d<2048, 512>,
        fc: Dense<512, 10>,
    }
    fn forward(&self, x: SVector<f32, 784>) -> SVector<f32, 10> {
        let h = self.p1(relu(self.b1(self.c1(x))));
        let h = self.p2(relu(self.b2(self.c2(h))));
        self.fc(h)
    }
}

fn inputs(images: &Images) -> Vec<SVector<f32, 784>> {
    (0..images.count)
        .map(|i| SVector::from_iterator(images.image(i).iter().map(|&v| f32::from(v) / 255.0)))
        .collect()
}

/// Trains for `epochs` epochs on the folder `dir` (MNIST layout); returns the test accuracy.
///
/// # Errors
/// The data cannot be read.
pub fn run(
    dir: &std::path::Path,
    epochs: usize,
    verbose: bool,
) -> Result<f64, paralens::data::DataError> {
    let m = load_mnist(dir)?;
    let (xs, ts) = (inputs(&m.train_images), inputs(&m.test_images));
    let ys: Vec<usize> = m.train_labels.iter().map(|&l| l as usize).collect();
    let ty: Vec<usize> = m.test_labels.iter().map(|&l| l as usize).collect();
    let model = Cnn {
        c1: Conv2d::new::<1, 28, 28, 16, 5, 1, 0>(),
        b1: Bias::new(),
        p1: MaxPool2d::new::<16, 24, 24, 2, 2>(),
        c2: Conv2d::new::<16, 12, 12, 32, 5, 1, 0>(),
        b2: Bias::new(),
        p2: MaxPool2d::new::<32, 8, 8, 2, 2>(),
        fc: Dense::glorot(),
    };
    let params = model.init(0);
    let mut learner = Learner::new(model, params, SoftmaxCrossEntropy, Adam::new(1e-3));
    let mut order: Vec<usize> = (0..xs.len()).collect();
    let mut rng = StdRng::seed_from_u64(0);
    for epoch in 1..=epochs {
        learner.optimizer_mut().lr = 1e-3 / 3f32.powi(((epoch - 1) / 2) as i32);
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
    let mut epochs = 4usize;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--data" => data = args.next().map(PathBuf::from),
            "--epochs" => epochs = args.next().and_then(|v| v.parse().ok()).unwrap_or(epochs),
            other => {
                eprintln!(
                    "error: unknown argument `{other}`\nusage: mnist_cnn --data DIR [--epochs N]"
                );
                std::process::exit(2);
            }
        }
    }
    let Some(dir) = data else {
        eprintln!(
            "error: give the data folder with --data DIR (in this project: ../shared/data/mnist or ../shared/data/fashion-mnist)"
        );
        std::process::exit(2);
    };
    // The activations (up to 9216 values) and their pullbacks live on the stack.
    let result = std::thread::Builder::new()
        .stack_size(256 << 20)
        .spawn(move || run(&dir, epochs, true))
        .expect("a thread")
        .join()
        .expect("training finished");
    match result {
        Ok(acc) => println!("test accuracy {acc:.4}"),
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(1);
        }
    }
}
