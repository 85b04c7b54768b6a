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
/// `PARALENS_COUNT=workload:n` runs one workload `n` times and nothing else, for counting
/// its instructions under valgrind (`benches/count.sh`, which subtracts a run with `n = 0`);
/// otherwise, criterion's benchmarks.
fn main() {
    if let Ok(spec) = std::env::var("PARALENS_COUNT") {
        let (which, n) = spec
            .split_once(':')
            .and_then(|(w, n)| Some((w, n.parse::<usize>().ok()?)))
            .unwrap_or_else(|| panic!("PARALENS_COUNT is `workload:n`, found `{spec}`"));
        let known = match which.strip_prefix("iris_") {
            Some(w) => iris_step::count(w, n),
            None => generated::count(which, n),
        };
        assert!(known, "PARALENS_COUNT: no workload `{which}`");
        return;
    }
    benches();
    criterion::Criterion::default()
        .configure_from_args()
        .final_summary();
}
