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

#[allow(dead_code)]
#[path = "../examples/logic_mnist.rs"]
mod logic_mnist;

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
        trials::needs_data("mnist_cnn_reaches_99_percent", data.clone(), |data| {
            let acc = mnist_cnn::run(&data.join("mnist"), 4, false).unwrap();
            assert!(acc >= 0.99, "test accuracy {acc}");
        })
        .with_ignored_flag(true),
        // The logic gate network, relaxed then discretised: one epoch (about ten seconds in
        // release on two threads), 92.6% relaxed and 92.3% as a circuit here; the example
        // reaches 93.8% as a circuit in ten.
        trials::needs_data(
            "mnist_logic_gate_network_reaches_92_percent_as_a_circuit",
            data.clone(),
            |data| {
                let (train, test) = logic_mnist::mnist_bits(&data.join("mnist")).unwrap();
                let r = logic_mnist::run::<1568, 8000, _>(
                    logic_mnist::softmax_model::<1568, 8000>(),
                    (&train, &test),
                    1,
                    0.05,
                    None,
                    false,
                    &logic_mnist::Export::default(),
                );
                assert!(r.discrete >= 0.92, "{r:?}");
                assert!(r.relaxed >= 0.92, "{r:?}");
            },
        )
        .with_ignored_flag(true),
        // Six layers of 4-parameter (Walsh) gates, one epoch (about twenty seconds in release
        // on two threads): 95.2% relaxed and 95.05% as a circuit here (half a point of margin
        // for another CPU's rounding); the example reaches 96.3% as a circuit in twenty.
        trials::needs_data(
            "mnist_deep_walsh_network_reaches_94_5_percent_as_a_circuit",
            data,
            |data| {
                let (train, test) = logic_mnist::mnist_bits(&data.join("mnist")).unwrap();
                let r = logic_mnist::run::<1568, 8000, _>(
                    logic_mnist::deep_walsh_model::<1568, 8000>(),
                    (&train, &test),
                    1,
                    0.05,
                    None,
                    false,
                    &logic_mnist::Export::default(),
                );
                assert!(r.discrete >= 0.945, "{r:?}");
                assert!(
                    r.depth <= 12,
                    "six layers of at most two levels each: {r:?}"
                );
            },
        )
        .with_ignored_flag(true),
    ])
}
