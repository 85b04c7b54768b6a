//! MNIST with a 784-128-10 perceptron (ReLU, mean softmax cross-entropy, Adam with step size
//! 2e-3 divided by 3 after the fourth epoch), 32 images per step as the columns of one input
//! matrix, so that both layers run as matrix products (`paralens::gemm`). Reads the original
//! IDX files from `--data DIR`.
//!
//! ```text
//! cargo run --release --example mnist_mlp -- --data ../shared/data/mnist
//! ```

use paralens::prelude::*;

#[path = "shared/mnist.rs"]
pub mod shared;

/// Images per step: [`shared::SHARDS`] shards of [`shared::COLUMNS`] images, each the
/// columns of one input matrix (the model takes any number of columns).
pub const BATCH: usize = shared::SHARDS * shared::COLUMNS;

para! {
    /// 784 pixels -> 128 hidden units (ReLU) -> 10 digit scores, for a batch of images.
    pub struct Mlp { l1: Dense<784, 128>, l2: Dense<128, 10> }
    fn forward<const B: usize>(&self, x: HeapMatrix<f32, 784, B>) -> HeapMatrix<f32, 10, B> {
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
    Ok(shared::train_batched(
        model(),
        &m,
        epochs,
        2e-3,
        4,
        verbose,
        None,
    ))
}

fn main() {
    shared::main(
        "mnist_mlp",
        "MNIST (or Fashion-MNIST) with a 784-128-10 perceptron (ReLU), Adam, 32 images per step.",
        9,
        model,
        2e-3,
        4,
    );
}
