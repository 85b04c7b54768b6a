//! Models of real size on an ordinary stack: the MNIST perceptron of `examples/mnist_mlp.rs`
//! (784-128-10, batch 32, Adam: 10^5 parameters) built, trained and asked for predictions on
//! a thread with a main thread's stack (8 MiB), in the debug build (`cargo test`; it
//! overflowed before parameter changes went into the learner's buffer) and in the release
//! build (`cargo test --release`). The default test thread (2 MiB) is not reached yet: see
//! docs/ARCHITECTURE.md, "Where values live".

use paralens::prelude::*;

const BATCH: usize = 32;

para! {
    /// 784 pixels -> 128 hidden units (ReLU) -> 10 scores, for a batch of images.
    pub struct Mlp { l1: Dense<784, 128>, l2: Dense<128, 10> }
    fn forward(&self, x: SMatrix<f32, 784, BATCH>) -> SMatrix<f32, 10, BATCH> {
        self.l2(relu(self.l1(x)))
    }
}

/// Builds a learner, runs three steps and a prediction; returns the losses.
fn train_mlp() -> [f32; 3] {
    let model = Mlp {
        l1: Dense::new(),
        l2: Dense::glorot(),
    };
    let params = model.init(0);
    let mut learner = Learner::new(
        model,
        params,
        PerColumn(SoftmaxCrossEntropy),
        Adam::new(1e-3),
    );
    // The input is boxed: 100 KB, as a caller holding a batch would keep it.
    let x = Box::new(SMatrix::<f32, 784, BATCH>::from_fn(|i, j| {
        ((i * 7 + j * 3) % 17) as f32 / 17.0
    }));
    let y: [usize; BATCH] = core::array::from_fn(|j| j % 10);
    let losses = core::array::from_fn(|_| learner.step(&x, &y));
    let out = learner.predict(&x);
    assert!(out.iter().all(|v| v.is_finite()));
    losses
}

fn on_stack(bytes: usize) -> [f32; 3] {
    std::thread::Builder::new()
        .stack_size(bytes)
        .spawn(train_mlp)
        .expect("a thread")
        .join()
        .expect("training finished without overflowing the stack")
}

#[test]
fn mnist_mlp_trains_on_an_8_mib_stack() {
    let losses = on_stack(8 << 20);
    assert!(losses[2] < losses[0], "losses {losses:?}");
}
