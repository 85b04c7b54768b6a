//! Long trainings on MNIST, too slow for a debug build: run them with
//! `cargo test --release --test slow -- --ignored`.

// Both examples include their shared MNIST helpers as a module of their own.
#![allow(clippy::duplicate_mod)]

mod common;

#[allow(dead_code)]
#[path = "../examples/mnist_mlp.rs"]
mod mnist_mlp;

#[test]
#[ignore = "trains for about five seconds in release (far longer in debug); run with --release -- --ignored"]
fn mnist_mlp_reaches_98_percent() {
    let Some(data) = common::shared_data() else {
        return;
    };
    // On the test thread itself: weights, changes and activations live on the heap.
    let acc = mnist_mlp::run(&data.join("mnist"), 9, false).unwrap();
    assert!(acc >= 0.98, "test accuracy {acc}");
}

#[allow(dead_code)]
#[path = "../examples/mnist_cnn.rs"]
mod mnist_cnn;

#[test]
#[ignore = "trains for about half a minute in release (far longer in debug); run with --release -- --ignored"]
fn mnist_cnn_reaches_99_percent() {
    let Some(data) = common::shared_data() else {
        return;
    };
    let acc = mnist_cnn::run(&data.join("mnist"), 4, false).unwrap();
    assert!(acc >= 0.99, "test accuracy {acc}");
}

#[allow(dead_code)]
#[path = "../examples/mnist_lstm.rs"]
mod mnist_lstm;

#[test]
#[ignore = "trains for about five minutes in release (far longer in debug); run with --release -- --ignored"]
fn mnist_lstm_reaches_98_percent() {
    let Some(data) = common::shared_data() else {
        return;
    };
    // On a thread of a main thread's size (8 MiB), not on the 2 MiB test thread: the
    // pullback of the 28-step loop holds the carried (h, c) of every step, 28 x 32 KB at
    // batch 32, and is moved out through the model's and the learner's frames; a step needs
    // about 3.5 MiB in release (measured with `ulimit -s` on the example). See the
    // BENCHMARKS section on the row LSTM.
    let acc = std::thread::Builder::new()
        .stack_size(8 << 20)
        .spawn(move || mnist_lstm::run(&data.join("mnist"), 3, false).unwrap())
        .unwrap()
        .join()
        .unwrap();
    assert!(acc >= 0.98, "test accuracy {acc}");
}
