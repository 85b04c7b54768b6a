//! Long trainings on MNIST, too slow for a debug build: run them with
//! `cargo test --release --test slow -- --ignored`. Without the shared data they are counted
//! as ignored, naming `PARALENS_DATA` (`common/trials.rs`).

// Both examples include their shared MNIST helpers as a module of their own.
#![allow(clippy::duplicate_mod)]

mod common;
#[path = "common/trials.rs"]
mod trials;

#[allow(dead_code)]
#[path = "../examples/mnist_mlp.rs"]
mod mnist_mlp;

#[allow(dead_code)]
#[path = "../examples/mnist_cnn.rs"]
mod mnist_cnn;

fn main() -> std::process::ExitCode {
    let data = common::shared_data();
    trials::run(vec![
        // About five seconds in release (far longer in debug).
        trials::needs_data("mnist_mlp_reaches_98_percent", data.clone(), |data| {
            // On the test thread itself: weights, changes and activations live on the heap.
            let acc = mnist_mlp::run(&data.join("mnist"), 9, false).unwrap();
            assert!(acc >= 0.98, "test accuracy {acc}");
        })
        .with_ignored_flag(true),
        // About half a minute in release.
        trials::needs_data("mnist_cnn_reaches_99_percent", data, |data| {
            let acc = mnist_cnn::run(&data.join("mnist"), 4, false).unwrap();
            assert!(acc >= 0.99, "test accuracy {acc}");
        })
        .with_ignored_flag(true),
    ])
}
