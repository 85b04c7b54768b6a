//! Models of real size on an ordinary stack: the MNIST perceptron (784-128-10, 10^5
//! parameters), convolutional network (two 5x5 convolutions, 1.2 MB activations) and row
//! LSTM (128 hidden units, 28 steps of a differentiated loop) of the examples, built,
//! trained for three Adam steps on a batch of 32 and asked for predictions
//! on the test thread itself (2 MiB by default) and on a thread spawned with the default stack;
//! a main thread's 8 MiB is then covered too.
//! `cargo test` runs them in the debug build, `cargo test --release --test stack` in the
//! release build; CI runs both.

// Both examples include their shared MNIST helpers as a module of their own.
#![allow(clippy::duplicate_mod)]

use paralens::prelude::*;

#[allow(dead_code)]
#[path = "../examples/mnist_cnn.rs"]
mod mnist_cnn;
#[allow(dead_code)]
#[path = "../examples/mnist_lstm.rs"]
mod mnist_lstm;
#[allow(dead_code)]
#[path = "../examples/mnist_mlp.rs"]
mod mnist_mlp;

const B: usize = mnist_mlp::BATCH;

/// Builds a learner, runs three steps and a prediction; returns the losses.
fn three_steps<M>(model: M) -> [f32; 3]
where
    M: Para<HeapMatrix<f32, 784, B>, Out = HeapMatrix<f32, 10, B>>
        + Init<Param = <M as Para<HeapMatrix<f32, 784, B>>>::Param>,
    <M as Para<HeapMatrix<f32, 784, B>>>::Param: Flat<f32>,
{
    let params = model.init(0);
    let mut learner = Learner::new(
        model,
        params,
        PerColumn(SoftmaxCrossEntropy),
        Adam::new(1e-3),
    );
    let x = HeapMatrix::<f32, 784, B>::from_fn(|i, j| ((i * 7 + j * 3) % 17) as f32 / 17.0);
    let y: [usize; B] = core::array::from_fn(|j| j % 10);
    let losses = core::array::from_fn(|_| learner.step(&x, &y));
    let out = learner.predict(&x);
    assert!(out.iter().all(|v| v.is_finite()));
    losses
}

fn train<M>(model: fn() -> M)
where
    M: Para<HeapMatrix<f32, 784, B>, Out = HeapMatrix<f32, 10, B>>
        + Init<Param = <M as Para<HeapMatrix<f32, 784, B>>>::Param>,
    <M as Para<HeapMatrix<f32, 784, B>>>::Param: Flat<f32>,
{
    let losses = three_steps(model());
    assert!(losses[2] < losses[0], "the loss went down: {losses:?}");
}

// On the test thread itself, which has the default 2 MiB stack: no thread of a chosen size
// anywhere (an 8 MiB main thread is then covered a fortiori).
#[test]
fn mnist_mlp_trains_on_the_default_test_thread() {
    train(mnist_mlp::model);
}

#[test]
fn mnist_cnn_trains_on_the_default_test_thread() {
    train(mnist_cnn::model);
}

/// The row LSTM: three steps and a prediction on a batch of rows.
fn train_lstm() {
    let model = mnist_lstm::model();
    let mut learner = Learner::new(
        model,
        model.init(0),
        PerColumn(SoftmaxCrossEntropy),
        Adam::new(1e-2),
    );
    let rows: mnist_lstm::Rows = core::array::from_fn(|t| {
        HeapMatrix::from_fn(|i, j| ((t * 7 + i * 3 + j) % 17) as f32 / 17.0)
    });
    let y: [usize; B] = core::array::from_fn(|j| j % 10);
    let losses: [f32; 3] = core::array::from_fn(|_| learner.step(&rows, &y));
    assert!(losses[2] < losses[0], "the loss went down: {losses:?}");
    assert!(learner.predict(&rows).iter().all(|v| v.is_finite()));
}

#[test]
fn mnist_lstm_trains_on_the_default_test_thread() {
    train_lstm();
}

// On a thread spawned with `std::thread::spawn`, as an application embedding a learner would:
// the default stack again.
#[test]
fn mnist_models_train_on_a_default_spawned_thread() {
    std::thread::spawn(|| {
        train(mnist_mlp::model);
        train(mnist_cnn::model);
        train_lstm();
    })
    .join()
    .expect("training finished without overflowing the stack");
}

// The sharded learner's pool starts its threads with the default stack as well: the CNN's
// shards train on them.
#[test]
fn mnist_cnn_trains_in_shards_on_default_pool_threads() {
    const C: usize = mnist_cnn::shared::COLUMNS;
    let model = mnist_cnn::model();
    let learner = Learner::new(
        model.clone(),
        model.init(0),
        PerColumn(SoftmaxCrossEntropy),
        Adam::new(1e-3),
    );
    let mut sharded = paralens::ShardedLearner::with_threads(learner, 2, 2);
    let shard = |s: usize| {
        let x =
            HeapMatrix::<f32, 784, C>::from_fn(|i, j| ((i * 7 + (j + s) * 3) % 17) as f32 / 17.0);
        let y: [usize; C] = core::array::from_fn(|j| (j + s) % 10);
        (x, y)
    };
    let losses: [f32; 3] = core::array::from_fn(|_| sharded.step_with(shard));
    assert!(losses[2] < losses[0], "the loss went down: {losses:?}");
}
