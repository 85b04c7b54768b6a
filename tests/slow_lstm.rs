//! The MNIST row LSTM reaches 98% test accuracy after 3 epochs. A long training (five
//! minutes in release), run only when asked: `cargo test --release --test slow_lstm --
//! --ignored`; refused in a debug build, where it would take hours. Without the shared data
//! it is counted as ignored, naming `PARALENS_DATA` (`common/trials.rs`).
//!
//! A step of this model runs on a default 2 MiB thread (the cells on heap activations;
//! `tests/stack.rs`).

#![allow(clippy::duplicate_mod)]

mod common;
#[path = "common/trials.rs"]
mod trials;

#[allow(dead_code)]
#[path = "../examples/mnist_lstm.rs"]
mod mnist_lstm;

fn main() -> std::process::ExitCode {
    let data = common::shared_data().filter(|_| !cfg!(debug_assertions));
    let name = "mnist_lstm_reaches_98_percent";
    let trial = if cfg!(debug_assertions) {
        libtest_mimic::Trial::ignorable_test(name, || {
            Ok(libtest_mimic::Completion::ignored_with(
                "trains for hours in a debug build: run it with --release",
            ))
        })
    } else {
        trials::needs_data(name, data, |data| {
            let (acc, _, _) = mnist_lstm::run(&data.join("mnist"), 3, false, None).unwrap();
            assert!(acc >= 0.98, "test accuracy {acc}");
        })
    };
    trials::run(vec![trial.with_ignored_flag(true)])
}
