//! The `sequence_digits` example's claim: a GRU reading the 8x8 digits row by row reaches at
//! least 95% test accuracy.

#[allow(dead_code)]
#[path = "../examples/sequence_digits.rs"]
mod sequence_digits;

#[test]
#[cfg_attr(
    debug_assertions,
    ignore = "trains for minutes in a debug build; CI runs it with `cargo test --release --test sequence`"
)]
fn gru_reading_rows_reaches_95_percent() {
    let r = sequence_digits::run(0, 20, false);
    assert!(r.test_accuracy >= 0.95, "test accuracy {}", r.test_accuracy);
    // The loss fell: the shared cell was trained through the loop.
    assert!(
        r.epoch_losses[19] < 0.5 * r.epoch_losses[0],
        "{:?}",
        r.epoch_losses
    );
}
