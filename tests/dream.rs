//! The `dream` example's claims: on the trained digits CNN, a dream from a blank image makes
//! the classifier at least 99% sure of every target class; and bounded steps on the same
//! input port flip more images the larger the ball.

#[allow(dead_code)]
#[path = "../examples/dream.rs"]
mod dream;

#[test]
#[cfg_attr(
    debug_assertions,
    ignore = "trains the CNN, minutes in a debug build; CI runs it with `cargo test --release --test dream`"
)]
fn dreams_convince_the_classifier_and_larger_balls_flip_more() {
    let t = dream::digits_cnn::train(0, 10, false);
    assert!(t.report.test_accuracy >= 0.95, "{}", t.report.test_accuracy);
    let d = dream::dream(&t, 200, 0.05);
    for (c, p) in d.confidence.iter().enumerate() {
        assert!(*p >= 0.99, "dream of {c}: confidence {p}");
    }
    let png = std::env::temp_dir().join("paralens_dreams_test.png");
    dream::write_png(&png, &d.images).unwrap();
    let bytes = std::fs::read(&png).unwrap();
    assert_eq!(&bytes[1..4], b"PNG");
    let (small, large) = (
        dream::flipped_share(&t, 0.1, 10),
        dream::flipped_share(&t, 0.2, 10),
    );
    assert!(
        0.0 < small && small < large,
        "flipped {small} at 0.1, {large} at 0.2"
    );
}
