//! Criterion benchmarks. One binary; each area is a module. Run with
//! `cargo bench --bench paralens` (add `RUSTFLAGS="-C target-cpu=native"` for the native build).

// The MNIST step benchmarks include both MNIST examples, each with its shared helpers.
#![allow(clippy::duplicate_mod)]

use criterion::criterion_group;

mod circuits;
mod generated;
mod iris_step;
mod lstm_hand;
mod mnist_hand;
mod mnist_steps;
mod spans;

criterion_group!(
    benches,
    iris_step::bench,
    generated::bench,
    circuits::bench,
    spans::bench,
    mnist_steps::bench,
    lstm_hand::bench
);
criterion::criterion_main!(benches);
