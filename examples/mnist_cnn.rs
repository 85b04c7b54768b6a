//! MNIST (or Fashion-MNIST) with a small convolutional network: conv 5x5 x16, ReLU, max
//! pooling 2, conv 5x5 x32, ReLU, max pooling 2, dense 512 -> 10; mean softmax
//! cross-entropy, Adam with step size 2e-3 divided by 3 every second epoch, 32 images per
//! step as the columns of one input matrix. The convolutions use the fast path: one matrix
//! product per pass over the batch (`paralens::gemm`, tested equal to the span form).
//!
//! ```text
//! cargo run --release --example mnist_cnn -- --data ../shared/data/mnist --epochs 4
//! cargo run --release --example mnist_cnn -- --data ../shared/data/fashion-mnist --epochs 4
//! ```

use paralens::prelude::*;
use paralens::span::{Bias, Conv2d, MaxPool2d};

#[path = "shared/mnist.rs"]
pub mod shared;

/// Images per step: [`shared::SHARDS`] shards of [`shared::COLUMNS`] images, each the
/// columns of one input matrix (the model takes any number of columns).
pub const BATCH: usize = shared::SHARDS * shared::COLUMNS;

para! {
    /// 1x28x28 -> 16x24x24 -> 16x12x12 -> 32x8x8 -> 32x4x4 -> 10, for a batch of images.
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
    fn forward<const B: usize>(&self, x: HeapMatrix<f32, 784, B>) -> HeapMatrix<f32, 10, B> {
        let h = self.p1(relu(self.b1(self.c1(x))));
        let h = self.p2(relu(self.b2(self.c2(h))));
        self.fc(h)
    }
}

/// The network, its sizes checked at compile time.
#[must_use]
pub fn model() -> Cnn {
    Cnn {
        c1: Conv2d::new::<1, 28, 28, 16, 5, 1, 0>(),
        b1: Bias::new(),
        p1: MaxPool2d::new::<16, 24, 24, 2, 2>(),
        c2: Conv2d::new::<16, 12, 12, 32, 5, 1, 0>(),
        b2: Bias::new(),
        p2: MaxPool2d::new::<32, 8, 8, 2, 2>(),
        fc: Dense::glorot(),
    }
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
    let m = shared::load(dir)?;
    Ok(shared::train_batched(
        model(),
        &m,
        epochs,
        2e-3,
        2,
        verbose,
        None,
    ))
}

fn main() {
    shared::main(
        "mnist_cnn",
        "MNIST (or Fashion-MNIST) with a small convolutional network (two 5x5 convolutions, \
         max pooling, dense 512 -> 10), Adam, 32 images per step.",
        4,
        model,
        2e-3,
        2,
    );
}
