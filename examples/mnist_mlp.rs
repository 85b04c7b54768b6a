//! MNIST with a 784-128-10 perceptron (ReLU, softmax cross-entropy, Adam with a step size
//! lowered every third epoch), one example per step. Reads the original IDX files from
//! `--data DIR`.
//!
//! ```text
//! cargo run --release --example mnist_mlp -- --data ../shared/data/mnist
//! ```

use paralens::prelude::*;

#[path = "shared/mnist.rs"]
mod shared;

para! {
    /// 784 pixels -> 128 hidden units (ReLU) -> 10 digit scores.
    pub struct Mlp { l1: Dense<784, 128>, l2: Dense<128, 10> }
    fn forward(&self, x: SVector<f32, 784>) -> SVector<f32, 10> {
        self.l2(relu(self.l1(x)))
    }
}

/// The model with its initialisers (He for the hidden layer, Glorot for the output).
#[must_use]
pub fn model() -> Mlp {
    Mlp {
        l1: Dense::new(),
        l2: Dense::glorot(),
    }
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
    let m = shared::load(dir)?;
    Ok(shared::train(model(), &m, epochs, 3, verbose))
}

fn main() {
    let (dir, epochs) = shared::args("mnist_mlp --data DIR [--epochs N]", 9);
    match shared::with_large_stack(move || run(&dir, epochs, true)) {
        Ok(acc) => println!("test accuracy {acc:.4}"),
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(1);
        }
    }
}
