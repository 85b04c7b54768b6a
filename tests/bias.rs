//! `add_bias`: a layer's bias added to every column (a column per example), for `#[lens]`
//! models on static and heap matrices. Its rule against central finite differences, a
//! `#[lens]` MLP with biases checked whole (values, every change, `vjp_params`), and trained
//! by a learner.
#![deny(warnings)]

use paralens::prelude::*;
use paralens::{GradCheck, check_gradient};

const H: f64 = 1e-6;

fn assert_ok(name: &str, r: GradCheck) {
    assert!(r.passes(1e-7), "{name}: {r}");
}

fn vals<const R: usize, const C: usize>(s: f64) -> SMatrix<f64, R, C> {
    SMatrix::from_fn(|i, j| (((i * 7 + j * 3) % 11) as f64 * s - 0.4).sin())
}

#[test]
fn the_rule_against_finite_differences() {
    // d(m + b 1^T) = (D, D 1): the change of `m` is `d`, the bias's the sum of its columns.
    let (m, b) = (vals::<3, 4>(0.3), SVector::<f64, 3>::new(0.5, -1.0, 2.0));
    assert_ok(
        "add_bias, static",
        check_gradient(
            |(m, b): (SMatrix<f64, 3, 4>, SVector<f64, 3>)| add_bias(m, b),
            |(m, b), d| add_bias_rev(m, b, d),
            (m, b),
            H,
        ),
    );
    assert_ok(
        "add_bias, heap",
        check_gradient(
            |(m, b): (HeapMatrix<f64, 3, 4>, SVector<f64, 3>)| add_bias(m, b),
            |(m, b), d| add_bias_rev(m, b, d),
            (HeapMatrix::from_matrix(&m), b),
            H,
        ),
    );
    // The heap values and changes equal the static ones, and the sums by hand.
    let d = vals::<3, 4>(0.7);
    let (y, (dm, db)) = (add_bias(m, b), add_bias_rev(m, b, d));
    let hy = add_bias(HeapMatrix::from_matrix(&m), b);
    let (hdm, hdb) = add_bias_rev(HeapMatrix::from_matrix(&m), b, HeapMatrix::from_matrix(&d));
    assert_eq!(*hy, y);
    assert_eq!((*hdm, hdb), (dm, db));
    for i in 0..3 {
        assert!((db[i] - (0..4).map(|j| d[(i, j)]).sum::<f64>()).abs() < 1e-12);
        for j in 0..4 {
            assert_eq!(y[(i, j)], m[(i, j)] + b[i]);
        }
    }
}

/// A two-layer heap MLP with biases, written with `#[lens]`.
#[lens(init = draw)]
fn biased_mlp(
    #[param] w1: HeapMatrix<f64, 5, 6>,
    #[param] b1: SVector<f64, 5>,
    #[param] w2: HeapMatrix<f64, 3, 5>,
    #[param] b2: SVector<f64, 3>,
    x: HeapMatrix<f64, 6, 4>,
) -> HeapMatrix<f64, 3, 4> {
    add_bias(w2 * tanh(add_bias(w1 * x, b1)), b2)
}

type Params = (
    HeapMatrix<f64, 5, 6>,
    SVector<f64, 5>,
    HeapMatrix<f64, 3, 5>,
    SVector<f64, 3>,
);

fn draw<R: paralens::rand::Rng + ?Sized>(rng: &mut R) -> Params {
    let mut u = || rng.random_range(-0.5..0.5);
    (
        HeapMatrix::from_fn(|_, _| u()),
        SVector::from_fn(|_, _| u()),
        HeapMatrix::from_fn(|_, _| u()),
        SVector::from_fn(|_, _| u()),
    )
}

#[test]
fn a_lens_mlp_with_biases() {
    let p = BiasedMlp.init(3);
    let x = HeapMatrix::from_matrix(&vals::<6, 4>(0.2));
    let d = HeapMatrix::from_matrix(&vals::<3, 4>(0.5));
    // The value, against nalgebra.
    let (w1, b1, w2, b2) = (*p.0.clone(), p.1, *p.2.clone(), p.3);
    let mut h = w1 * *x;
    for mut c in h.column_iter_mut() {
        c += b1;
    }
    let mut y = w2 * h.map(f64::tanh);
    for mut c in y.column_iter_mut() {
        c += b2;
    }
    let got = biased_mlp(p.0.clone(), p.1, p.2.clone(), p.3, x.clone());
    assert!((*got - y).amax() < 1e-12);
    // Every change against finite differences.
    assert_ok(
        "biased_mlp",
        check_gradient(
            |(p, x): (Params, HeapMatrix<f64, 6, 4>)| biased_mlp(p.0, p.1, p.2, p.3, x),
            |(p, x), d| {
                let (a, b, c, e, dx) = biased_mlp_rev(p.0, p.1, p.2, p.3, x, d);
                ((a, b, c, e), dx)
            },
            (p.clone(), x.clone()),
            H,
        ),
    );
    // `vjp_params` (a learner's: the input is data) gives exactly the full sweep's parameter
    // change.
    let (full, _) = BiasedMlp.changes(&p, x.clone(), d.clone());
    let mut only = <Params as Tangent>::zeros();
    let (_, pull) = BiasedMlp.vjp_params(&p, x);
    pull(d, &mut only);
    assert!(full.1.amax() > 0.0 && full.3.amax() > 0.0);
    assert_eq!(
        (&*full.0, full.1, &*full.2, full.3),
        (&*only.0, only.1, &*only.2, only.3)
    );
}

#[test]
fn a_learner_trains_it() {
    // Four examples, a column each, and their classes: the mean loss falls by a half.
    let x = HeapMatrix::from_matrix(&vals::<6, 4>(0.35));
    let labels = [0usize, 2, 1, 2];
    let mut learner = Learner::new(
        BiasedMlp,
        BiasedMlp.init(1),
        PerColumn(SoftmaxCrossEntropy),
        Adam::new(0.05),
    );
    let first = learner.step(&x, &labels);
    let mut last = first;
    for _ in 0..100 {
        last = learner.step(&x, &labels);
    }
    assert!(
        last.is_finite() && last < 0.5 * first,
        "loss {first} -> {last}"
    );
}
