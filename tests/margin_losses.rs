//! The dot-product and multi-class hinge losses: reverse derivatives against finite
//! differences away from the kink, the subgradient at and around the kink, label checks, and
//! both per column of a batch.

use paralens::prelude::*;
use paralens::{GradCheck, check_gradient};

const H: f64 = 1e-6;

fn ok(name: &str, r: GradCheck) {
    assert!(r.passes(1e-7), "{name}: {r}");
}

#[test]
fn dot_product_is_minus_the_inner_product() {
    let y = SVector::<f64, 4>::new(0.3, -1.2, 0.8, 2.0);
    let t = SVector::<f64, 4>::new(0.0, 1.0, 0.5, -0.25);
    assert_eq!(DotProduct.loss(&y, &t), -y.dot(&t));
    ok(
        "dot",
        check_gradient(
            |y| DotProduct.loss(&y, &t),
            |y, d| DotProduct.vjp(y, &t).1(d),
            y,
            H,
        ),
    );
    let bad = SVector::<f64, 2>::new(0.0, f64::INFINITY);
    let e = DotProduct.check_label(&bad).unwrap_err();
    assert!(e.to_string().contains("inf"), "{e}");
}

#[test]
fn hinge_matches_finite_differences_away_from_the_kink() {
    // Each class as the label, with the margin violated (loss > 0) or met by far (loss 0).
    let ys = [
        SVector::<f64, 4>::new(0.3, -1.2, 0.8, 2.0),
        SVector::<f64, 4>::new(5.0, -1.0, 0.5, 1.0),
    ];
    for y in ys {
        for c in 0..4 {
            ok(
                "hinge",
                check_gradient(|y| Hinge.loss(&y, &c), |y, d| Hinge.vjp(y, &c).1(d), y, H),
            );
        }
    }
}

#[test]
fn hinge_subgradient_at_the_kink_is_zero_and_one_sided_around_it() {
    // Class 0 beats the strongest other class (1.0) by exactly the margin 1: the kink.
    let y = SVector::<f64, 3>::new(2.0, 1.0, -1.0);
    assert_eq!(Hinge.loss(&y, &0), 0.0);
    assert_eq!(Hinge.vjp(y, &0).1(1.0), SVector::<f64, 3>::zeros());
    // Just inside the margin: +1 to the strongest wrong class, -1 to the label.
    let inside = SVector::<f64, 3>::new(1.9, 1.0, -1.0);
    assert!((Hinge.loss(&inside, &0) - 0.1).abs() < 1e-12);
    assert_eq!(
        Hinge.vjp(inside, &0).1(1.0),
        SVector::<f64, 3>::new(-1.0, 1.0, 0.0)
    );
    // Ties among wrong classes: the first takes the change.
    let tie = SVector::<f64, 3>::new(0.0, 0.5, 0.5);
    assert_eq!(
        Hinge.vjp(tie, &0).1(2.0),
        SVector::<f64, 3>::new(-2.0, 2.0, 0.0)
    );
}

#[test]
fn hinge_labels_are_checked() {
    let e = <Hinge as Loss<SVector<f32, 3>>>::check_label(&Hinge, &3).unwrap_err();
    assert_eq!(
        e.to_string(),
        "label 3 is out of range: the model has 3 classes (0..3)"
    );
}

#[test]
fn both_losses_per_column_of_a_batch() {
    let y = SMatrix::<f64, 3, 2>::new(0.2, 1.5, -0.4, 0.3, 0.9, -1.0);
    let labels = [2, 0];
    let loss = PerColumn(Hinge);
    let per = (Hinge.loss(&y.column(0).into_owned(), &2)
        + Hinge.loss(&y.column(1).into_owned(), &0))
        / 2.0;
    assert!((loss.loss(&y, &labels) - per).abs() < 1e-15);
    ok(
        "hinge per column",
        check_gradient(
            |y| loss.loss(&y, &labels),
            |y, d| loss.vjp(y, &labels).1(d),
            y,
            H,
        ),
    );
    let (column, _) = Loss::<SMatrix<f64, 3, 2>>::check_labels(&loss, &[0, 5]).unwrap_err();
    assert_eq!(column, 1);
    let targets = [
        SVector::<f64, 3>::new(1.0, 0.0, 0.0),
        SVector::<f64, 3>::new(0.0, 0.0, 1.0),
    ];
    let dots = PerColumn(DotProduct);
    ok(
        "dot per column",
        check_gradient(
            |y| dots.loss(&y, &targets),
            |y, d| dots.vjp(y, &targets).1(d),
            y,
            H,
        ),
    );
}
