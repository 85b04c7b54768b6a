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
mod ratio;
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
/// The workload named `which` (`iris_...` or a Rosenbrock gradient), for counting and ratios.
fn workload(which: &str) -> ratio::Workload {
    let found = match which.strip_prefix("iris_") {
        Some(w) => iris_step::workload(w),
        None => generated::workload(which),
    };
    found.unwrap_or_else(|| panic!("no workload `{which}`"))
}

/// `PARALENS_COUNT=workload:n` runs one workload `n` times and nothing else, for counting
/// its instructions under valgrind (`benches/count.sh`, which subtracts a run with `n = 0`);
/// `PARALENS_RATIO=a,b[,rounds]` times workload `a` against `b` interleaved
/// (`benches/ratio.sh`); otherwise, criterion's benchmarks.
fn main() {
    if let Ok(spec) = std::env::var("PARALENS_COUNT") {
        let (which, n) = spec
            .split_once(':')
            .and_then(|(w, n)| Some((w, n.parse::<usize>().ok()?)))
            .unwrap_or_else(|| panic!("PARALENS_COUNT is `workload:n`, found `{spec}`"));
        workload(which)(n);
        return;
    }
    if let Ok(spec) = std::env::var("PARALENS_RATIO") {
        let parts: Vec<&str> = spec.split(',').collect();
        let rounds = match parts.get(2) {
            Some(r) => r
                .parse()
                .ok()
                .filter(|&r: &usize| r > 0)
                .unwrap_or_else(|| panic!("PARALENS_RATIO: rounds `{r}`, a count of 1 or more")),
            None => 400,
        };
        let [a, b] = [0, 1].map(|i| {
            *parts
                .get(i)
                .unwrap_or_else(|| panic!("PARALENS_RATIO is `a,b[,rounds]`, found `{spec}`"))
        });
        let r = ratio::measure(
            workload(a),
            workload(b),
            rounds,
            std::time::Duration::from_millis(1),
        );
        let [q1, m, q3] = r.quartiles;
        println!(
            "{a:<22} {b:<22} {:>9.1} {:>9.1} {m:>7.3} {q1:>7.3} {q3:>7.3} {:>8} {rounds:>6}",
            r.a_ns, r.b_ns, r.calls
        );
        return;
    }
    benches();
    criterion::Criterion::default()
        .configure_from_args()
        .final_summary();
}
