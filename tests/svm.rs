//! The `svm` example's claim: a linear SVM (hinge loss) on the 8x8 digits tests as well as
//! logistic regression on the same splits, within a point on average over three seeds.

#[allow(dead_code)]
#[path = "../examples/svm.rs"]
mod svm;

#[test]
#[cfg_attr(
    debug_assertions,
    ignore = "trains six models, a minute in a debug build; CI runs it with `cargo test --release --test svm`"
)]
fn linear_svm_is_within_a_point_of_logistic_regression() {
    let runs: Vec<svm::Report> = (0..3).map(|seed| svm::run(seed, 40)).collect();
    let mean = |f: fn(&svm::Report) -> f64| runs.iter().map(f).sum::<f64>() / runs.len() as f64;
    let (s, l) = (mean(|r| r.svm), mean(|r| r.logistic));
    assert!(s >= 0.95 && l >= 0.95, "svm {s:.3}, logistic {l:.3}");
    assert!((s - l).abs() <= 0.01, "svm {s:.3}, logistic {l:.3}");
}
