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
