//! The MNIST row LSTM reaches 98% test accuracy after 3 epochs. A long training, run only in
//! a release build when asked: `cargo test --release --test slow_lstm -- --ignored` (like the
//! ignored tests of `slow.rs`).
//!
//! This binary has no test harness, so it can say visibly why it skipped. A step of this
//! model runs on a default 2 MiB thread (the cells on heap activations; `tests/stack.rs`).

#![allow(clippy::duplicate_mod)]

mod common;

#[allow(dead_code)]
#[path = "../examples/mnist_lstm.rs"]
mod mnist_lstm;

fn main() {
    let asked = std::env::args().any(|a| a == "--ignored" || a == "--include-ignored");
    if cfg!(debug_assertions) || !asked {
        println!(
            "slow_lstm: skipped (trains for five minutes in release); run `cargo test --release --test slow_lstm -- --ignored`"
        );
        return;
    }
    let Some(data) = common::shared_data() else {
        return;
    };
    let (acc, _, _) = mnist_lstm::run(&data.join("mnist"), 3, false).unwrap();
    assert!(acc >= 0.98, "test accuracy {acc}");
    println!("slow_lstm: test accuracy {acc:.4} after 3 epochs: ok");
}
