//! Layers on batches (a static matrix whose columns are examples): equal to running each
//! column alone, with the parameter changes summed; the batched passes that go through the
//! matrix product checked against finite differences; the per-column loss and a learner
//! stepping on whole batches.

use paralens::prelude::*;
use paralens::span::{Bias, Conv2d, MaxPool2d, SpanLayer};
use paralens::{StepError, check_gradient};

fn vals<const R: usize, const C: usize>(seed: f64) -> SMatrix<f64, R, C> {
    SMatrix::from_fn(|i, j| ((i * 31 + j * 17) as f64 * 0.37 + seed).sin())
}

/// `model` on the batch `x` equals `model` on each column: outputs, input changes and
/// summed parameter changes.
fn columns_agree<M, const I: usize, const O: usize, const B: usize>(
    model: &M,
    p: &<M as Para<SVector<f64, I>>>::Param,
    tol: f64,
) where
    M: Para<SVector<f64, I>, Out = SVector<f64, O>>
        + Para<
            SMatrix<f64, I, B>,
            Out = SMatrix<f64, O, B>,
            Param = <M as Para<SVector<f64, I>>>::Param,
        >,
    <M as Para<SVector<f64, I>>>::Param: Flat<f64> + Tangent,
{
    let x = vals::<I, B>(0.1);
    let dy = vals::<O, B>(0.7);
    let (y, pull) = Para::<SMatrix<f64, I, B>>::vjp(model, p, x);
    let mut dp = <M as Para<SVector<f64, I>>>::Param::zeros();
    let dx = pull(dy, &mut dp);
    // Column by column, each pullback adding into one buffer: the sum of the columns' changes.
    let mut dp_sum = <M as Para<SVector<f64, I>>>::Param::zeros();
    for b in 0..B {
        let (yb, pullb) = Para::<SVector<f64, I>>::vjp(model, p, x.column(b).into_owned());
        let dxb = pullb(dy.column(b).into_owned(), &mut dp_sum);
        assert!((yb - y.column(b)).amax() < tol, "output of column {b}");
        assert!(
            (dxb - dx.column(b)).amax() < tol,
            "input change of column {b}"
        );
    }
    for (g, w) in dp.slices().zip(dp_sum.slices()) {
        for (a, b) in g.iter().zip(w.iter()) {
            assert!(
                (a - b).abs() < tol * (1.0 + b.abs()),
                "parameter change {a} vs {b}"
            );
        }
    }
}

#[test]
fn dense_on_a_batch_is_dense_on_each_column() {
    // Through the matrix product (8 columns, 16 wide and more) and through nalgebra.
    let big = Dense::<24, 40, f64>::new();
    columns_agree::<_, 24, 40, 8>(&big, &big.init(1), 1e-12);
    columns_agree::<_, 24, 40, 33>(&big, &big.init(2), 1e-12);
    let small = Dense::<4, 3, f64>::new();
    columns_agree::<_, 4, 3, 5>(&small, &small.init(3), 1e-12);
}

#[test]
fn span_layers_bias_and_pooling_on_a_batch_are_per_column() {
    // The gemm convolution (with stride, padding and dilation) and the gather form.
    let conv = Conv2d::<f64, 98, 32, 36>::with_dilation(2, 7, 7, 2, 3, 2, 2, 2);
    columns_agree::<_, 98, 32, 3>(&conv, &conv.init(4), 1e-12);
    let span = SpanLayer::<f64, 64, 144, 36>::conv2d::<1, 8, 8, 4, 3, 1, 0>();
    columns_agree::<_, 64, 144, 4>(&span, &span.init(5), 1e-12);
    let bias = Bias::<6, f64>::new();
    columns_agree::<_, 6, 6, 3>(&bias, &SVector::from_fn(|i, _| i as f64), 1e-15);
    let pool = MaxPool2d::<32, 8>::new::<2, 4, 4, 2, 2>();
    let x = vals::<32, 3>(0.3);
    let (y, pull) = pool.apply_vjp(x);
    let dx = pull(vals::<8, 3>(0.9));
    for b in 0..3 {
        let (yb, pullb) = pool.apply_vjp(x.column(b).into_owned());
        assert_eq!(yb, y.column(b));
        assert_eq!(
            pullb(vals::<8, 3>(0.9).column(b).into_owned()),
            dx.column(b)
        );
    }
}

#[test]
fn batched_passes_through_the_matrix_product_match_finite_differences() {
    // Input changes of the batched dense layer and convolution: R_x against differences.
    let dense = Dense::<16, 16, f64>::new();
    let p = dense.init(6);
    let r = check_gradient(
        |x: SMatrix<f64, 16, 8>| Para::forward(&dense, &p, x),
        |x, d| Para::changes(&dense, &p, x, d).1,
        vals::<16, 8>(0.2),
        1e-6,
    );
    assert!(r.passes(1e-7), "{r}");
    // Parameter changes: R_w against differences of the weights.
    let x = vals::<16, 8>(0.4);
    let r = check_gradient(
        |w: SMatrix<f64, 16, 16>| {
            let q = DenseParams {
                w: Box::new(w),
                b: p.b,
            };
            Para::forward(&dense, &q, x)
        },
        |w, d| {
            let q = DenseParams {
                w: Box::new(w),
                b: p.b,
            };
            *Para::changes(&dense, &q, x, d).0.w
        },
        *p.w,
        1e-6,
    );
    assert!(r.passes(1e-7), "{r}");
    let conv = Conv2d::<f64, 50, 18, 36>::new::<2, 5, 5, 2, 3, 1, 0>();
    let w = conv.init(7);
    let x = vals::<50, 2>(0.5);
    let r = check_gradient(
        |x: SMatrix<f64, 50, 2>| Para::forward(&conv, &w, x),
        |x, d| Para::changes(&conv, &w, x, d).1,
        x,
        1e-6,
    );
    assert!(r.passes(1e-7), "{r}");
    let r = check_gradient(
        |w: SVector<f64, 36>| Para::forward(&conv, &w, x),
        |w, d| Para::changes(&conv, &w, x, d).0,
        w,
        1e-6,
    );
    assert!(r.passes(1e-7), "{r}");
}

#[test]
fn the_per_column_loss_is_the_mean_and_names_the_bad_column() {
    let y = vals::<3, 4>(0.2);
    let labels = [0, 2, 1, 1];
    let (l, pull) = PerColumn(SoftmaxCrossEntropy).vjp(y, &labels);
    let d = pull(1.0);
    let mut mean = 0.0;
    for (b, label) in labels.iter().enumerate() {
        let (lb, pb) = SoftmaxCrossEntropy.vjp(y.column(b).into_owned(), label);
        mean += lb / 4.0;
        assert!((pb(0.25) - d.column(b)).amax() < 1e-15);
    }
    assert!((l - mean).abs() < 1e-15);
    // And against finite differences of the batch's mean loss.
    let r = check_gradient(
        |y: SMatrix<f64, 3, 4>| PerColumn(SoftmaxCrossEntropy).loss(&y, &labels),
        |y, dl| PerColumn(SoftmaxCrossEntropy).vjp(y, &labels).1(dl),
        y,
        1e-6,
    );
    assert!(r.passes(1e-8), "{r}");
    // A learner on batches reports the column of a bad label.
    let model = Dense::<3, 3, f64>::new();
    let mut learner = Learner::new(
        model,
        model.init(0),
        PerColumn(SoftmaxCrossEntropy),
        Sgd::new(0.1),
    );
    let e = learner
        .try_step(&vals::<3, 4>(0.1), &[0, 1, 5, 0])
        .unwrap_err();
    assert!(matches!(e, StepError::Label { index: 2, .. }), "{e}");
    assert!(
        e.to_string().contains("example 2: label 5 is out of range"),
        "{e}"
    );
}

#[test]
fn a_learner_steps_on_whole_batches() {
    // Two linearly separable classes; a batch of 16 per step through the
    // matrix product (16 wide hidden layer).
    let model = Dense::<2, 16, f32>::new()
        .then(Relu)
        .then(Dense::<16, 16, f32>::new())
        .then(Relu)
        .then(Dense::<16, 2, f32>::glorot());
    let mut learner = Learner::new(
        model,
        model.init(1),
        PerColumn(SoftmaxCrossEntropy),
        Adam::new(0.02),
    );
    let point = |i: usize| {
        let t = i as f32 * 0.618;
        let (a, b) = ((t * 7.1).sin(), (t * 3.3).cos());
        (SVector::<f32, 2>::new(a, b), usize::from(a + b > 0.0))
    };
    let batch = |k: usize| {
        let x = SMatrix::<f32, 2, 16>::from_fn(|r, c| point(k * 16 + c).0[r]);
        let y: [usize; 16] = core::array::from_fn(|c| point(k * 16 + c).1);
        (x, y)
    };
    let first = {
        let (x, y) = batch(0);
        learner.try_loss(&x, &y).unwrap()
    };
    for _epoch in 0..40 {
        for k in 0..8 {
            let (x, y) = batch(k);
            learner.step(&x, &y);
        }
    }
    let (x, y) = batch(100);
    let out = learner.predict(&x);
    let right = (0..16)
        .filter(|&c| out.column(c).argmax().0 == y[c])
        .count();
    assert!(right >= 15, "{right}/16 held-out points right");
    assert!(
        {
            let (x, y) = batch(0);
            learner.try_loss(&x, &y).unwrap()
        } < first / 4.0
    );
}
