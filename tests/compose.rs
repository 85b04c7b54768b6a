//! Layers, composites and losses: generated reverse derivatives against finite differences.

use nalgebra::{SMatrix, SVector};
use paralens::prelude::*;
use paralens::{GradCheck, check_gradient};

const H: f64 = 1e-6;
const TOL: f64 = 1e-7;

fn assert_ok(name: &str, r: GradCheck) {
    assert!(r.passes(TOL), "{name}: {r}");
}

/// Checks a parametric lens jointly in its parameter and its input.
fn check_para<M, X>(name: &str, model: &M, p: M::Param, x: X)
where
    M: Para<X>,
    M::Param: Flat<f64>,
    M::Out: Flat<f64>,
    X: Flat<f64>,
{
    let r = check_gradient(
        |(p, x): (M::Param, X)| model.forward(&p, x),
        |(p, x): (M::Param, X), d| model.changes(&p, x, d),
        (p, x),
        H,
    );
    assert_ok(name, r);
}

fn v<const N: usize>(seed: f64) -> SVector<f64, N> {
    SVector::from_fn(|i, _| (i as f64 * 1.3 + seed).sin())
}

#[test]
fn dense_layer() {
    // y = W x + b: dW = d x^T, db = d, dx = W^T d
    let layer = Dense::<3, 4, f64>::new();
    check_para("dense", &layer, layer.init(1), v::<3>(0.2));
}

#[test]
fn sequential_composite_mlp() {
    let mlp = Dense::<3, 5, f64>::new()
        .then(Tanh)
        .then(Dense::<5, 2, f64>::glorot())
        .then(Sigmoid);
    check_para("mlp", &mlp, mlp.init(2), v::<3>(0.4));
    // Forward equals the stages run by hand.
    let p = mlp.init(2);
    let x = v::<3>(0.4);
    let h = (*p.0.0.0.w * x + p.0.0.0.b).map(f64::tanh);
    let z = *p.0.1.w * h + p.0.1.b;
    let want = z.map(|z| 1.0 / (1.0 + (-z).exp()));
    assert!((mlp.forward(&p, x) - want).norm() < 1e-12);
}

#[test]
fn every_activation_lens() {
    let x = v::<4>(0.7);
    check_para("relu", &Relu, (), x);
    check_para("leaky", &LeakyRelu(0.2), (), x);
    check_para("sigmoid", &Sigmoid, (), x);
    check_para("tanh", &Tanh, (), x);
    check_para("softplus", &Softplus, (), x);
    check_para("gelu", &Gelu, (), x);
    check_para("softmax", &Softmax, (), x);
    check_para("log_softmax", &LogSoftmax, (), x);
    // Entry-wise lenses also take scalars and matrices.
    check_para("tanh scalar", &Tanh, (), 0.3_f64);
    check_para(
        "gelu matrix",
        &Gelu,
        (),
        SMatrix::<f64, 2, 3>::from_fn(|i, j| i as f64 - j as f64 + 0.5),
    );
}

#[test]
fn parallel_composite() {
    let both = Dense::<2, 3, f64>::new().par(Dense::<4, 1, f64>::new().then(Tanh));
    check_para("par", &both, both.init(3), (v::<2>(0.1), v::<4>(0.9)));
}

#[test]
fn shared_weights_add_their_changes() {
    // f(W, x) = W (W x + b) + b uses W twice: dW is the sum of both uses' changes.
    let layer = Dense::<3, 3, f64>::new();
    let p = layer.init(4);
    let shared = layer.share(layer);
    check_para("share", &shared, p.clone(), v::<3>(0.3));

    // The shared change equals the sum of the untied model's two parameter changes.
    let untied = layer.then(layer);
    let x = v::<3>(0.3);
    let d = v::<3>(1.1);
    let (dp_shared, dx_shared) = shared.changes(&p, x, d);
    let ((dp1, dp2), dx_untied) = untied.changes(&(p.clone(), p.clone()), x, d);
    let mut sum = dp1;
    sum.accumulate(&dp2);
    assert!((*dp_shared.w - *sum.w).norm() < 1e-12);
    assert!((dp_shared.b - sum.b).norm() < 1e-12);
    assert_eq!(dx_shared, dx_untied);
}

/// `s -> DenseParams { w: s * W0, b: b0 }`: a one-scalar reparametrisation of a layer.
struct ScaleOf {
    w0: SMatrix<f64, 2, 3>,
    b0: SVector<f64, 2>,
}

impl Lens<f64> for ScaleOf {
    type Out = DenseParams<f64, 3, 2>;
    fn apply_vjp(&self, s: f64) -> (Self::Out, impl FnOnce(Self::Out) -> f64) {
        let p = DenseParams {
            w: Box::new(self.w0 * s),
            b: self.b0,
        };
        // d/ds <s W0, D_w> = <W0, D_w>; b does not depend on s.
        (p, move |d: Self::Out| self.w0.dot(&d.w))
    }
}

#[test]
fn reparametrised_model() {
    let r = ScaleOf {
        w0: SMatrix::from_fn(|i, j| (i + 2 * j) as f64 * 0.3 - 0.5),
        b0: SVector::<f64, 2>::new(0.1, -0.2),
    };
    let model = Dense::<3, 2, f64>::new().reparam::<_, f64>(r);
    check_para("reparam", &model, 0.8, v::<3>(0.5));
}

#[test]
fn batch_sums_parameter_changes() {
    let layer = Dense::<2, 2, f64>::new().then(Tanh);
    let batched = layer.batch::<3>();
    let xs = [v::<2>(0.1), v::<2>(0.5), v::<2>(2.0)];
    check_para("batch", &batched, layer.init(5), xs);
    // Reverse = sum over examples of the single-example reverse.
    let p = layer.init(5);
    let ds = [v::<2>(1.0), v::<2>(-0.3), v::<2>(0.4)];
    let (dp, dxs) = batched.changes(&p, xs, ds);
    let mut want = <(DenseParams<f64, 2, 2>, ())>::zeros();
    for i in 0..3 {
        let (dpi, dxi) = layer.changes(&p, xs[i], ds[i]);
        want.accumulate(&dpi);
        assert_eq!(dxs[i], dxi);
    }
    assert!((*dp.0.w - *want.0.w).norm() < 1e-12);
}

#[test]
fn losses() {
    let y = v::<4>(0.3) * 3.0;
    // Softmax cross-entropy: d = softmax(y) - onehot(c)
    for c in 0..4 {
        let l = SoftmaxCrossEntropy;
        assert_ok(
            "sce",
            check_gradient(|y| l.loss(&y, &c), |y, d| l.vjp(y, &c).1(d), y, H),
        );
    }
    // MSE: d = 2/n (y - t)
    let t = v::<4>(2.0);
    assert_ok(
        "mse",
        check_gradient(|y| Mse.loss(&y, &t), |y, d| Mse.vjp(y, &t).1(d), y, H),
    );
    // BCE from logits: d = (sigma(z) - t) / n
    let t = SVector::<f64, 4>::new(0.0, 1.0, 0.3, 1.0);
    let b = BinaryCrossEntropy;
    assert_ok(
        "bce",
        check_gradient(|y| b.loss(&y, &t), |y, d| b.vjp(y, &t).1(d), y, H),
    );
    // Stable at extreme logits.
    let big = SVector::<f64, 2>::new(800.0, -800.0);
    assert!(SoftmaxCrossEntropy.loss(&big, &1).is_finite());
    assert!(b.loss(&big, &SVector::<f64, 2>::new(0.0, 1.0)).is_finite());
}

#[test]
fn label_checks() {
    let sce = <SoftmaxCrossEntropy as Loss<SVector<f32, 3>>>::check_label;
    assert!(sce(&SoftmaxCrossEntropy, &2).is_ok());
    let e = sce(&SoftmaxCrossEntropy, &3).unwrap_err();
    assert_eq!(
        e.to_string(),
        "label 3 is out of range: the model has 3 classes (0..3)"
    );
    let bad = SVector::<f64, 2>::new(0.5, 1.5);
    let e = BinaryCrossEntropy.check_label(&bad).unwrap_err();
    assert!(e.to_string().contains("1.5"), "{e}");
    let e = Mse
        .check_label(&SVector::<f64, 2>::new(f64::NAN, 0.0))
        .unwrap_err();
    assert!(e.to_string().contains("NaN"), "{e}");
}

#[test]
fn gradient_check_catches_a_wrong_rule() {
    // A rule that forgets the factor 2 of d(x^2) must fail the check.
    let r = check_gradient(|x: f64| x * x, |x: f64, d: f64| x * d, 1.5, H);
    assert!(!r.passes(TOL), "{r}");
}
