//! Criterion benchmarks. One binary; each area is a module. Run with
//! `cargo bench --bench paralens` (add `RUSTFLAGS="-C target-cpu=native"` for the native build).

// The MNIST step benchmarks include both MNIST examples, each with its shared helpers.
#![allow(clippy::duplicate_mod)]

use criterion::criterion_group;

mod circuits;
mod generated;
mod iris_step;
mod mnist_steps;
mod spans;

criterion_group!(
    benches,
    iris_step::bench,
    generated::bench,
    circuits::bench,
    spans::bench,
    mnist_steps::bench
);
// `criterion_main!` with the benchmarks on a thread with a 512 MB stack: the batched MNIST
// steps move megabytes of activations and changes by value.
fn main() {
    std::thread::Builder::new()
        .stack_size(512 << 20)
        .spawn(|| {
            benches();
            criterion::Criterion::default()
                .configure_from_args()
                .final_summary();
        })
        .expect("spawn the benchmark thread")
        .join()
        .expect("the benchmarks ran");
}
