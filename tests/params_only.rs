//! `Para::vjp_params`, the pullback onto the parameter only (what a learner runs: the input is
//! data), gives exactly the parameter change of the full pullback, for the layers that skip
//! their input change, every combinator and `para!` models (sub-models on the arguments run
//! their own `vjp_params`). Generated code must not warn.
#![deny(warnings)]

use paralens::prelude::*;
use paralens::span::{Bias, Conv2d, MaxPool2d};

/// The parameter change by both pullbacks, from the same point and output change.
fn both<M, X>(m: &M, p: &M::Param, x: X, d: M::Out) -> (M::Param, M::Param)
where
    M: Para<X>,
    M::Param: Tangent,
    M::Out: Clone,
    X: Clone,
{
    let (full, _) = m.changes(p, x.clone(), d.clone());
    let mut only = M::Param::zeros();
    let (y, pull) = m.vjp_params(p, x.clone());
    pull(d, &mut only);
    let _ = y;
    (full, only)
}

fn same<P: Flat<f64> + std::fmt::Debug>(name: &str, (a, b): (P, P)) {
    let (a, b): (Vec<f64>, Vec<f64>) = (
        a.slices().flatten().copied().collect(),
        b.slices().flatten().copied().collect(),
    );
    assert!(
        a.iter().any(|v| *v != 0.0),
        "{name}: a zero change proves nothing"
    );
    assert_eq!(a, b, "{name}");
}

fn vals<const R: usize, const C: usize>(s: f64) -> SMatrix<f64, R, C> {
    SMatrix::from_fn(|i, j| ((i * 7 + j * 3) % 11) as f64 * s - 0.4)
}

para! {
    /// Two layers, the first on the argument.
    pub struct Mlp { l1: Dense<6, 5, f64>, l2: Dense<5, 3, f64> }
    fn forward(&self, x: SMatrix<f64, 6, 4>) -> SMatrix<f64, 3, 4> {
        self.l2(tanh(self.l1(x)))
    }
}

para! {
    /// The argument used twice: by a sub-model and in a residual, inside a branch.
    pub struct Residual { a: Dense<3, 3, f64>, b: Dense<3, 3, f64> }
    fn forward(&self, x: SVector<f64, 3>) -> SVector<f64, 3> {
        let mut h = self.a(x);
        if x.sum() > 0.0 {
            h += self.b(h) + x;
        }
        self.a(h)
    }
}

#[test]
fn layers_and_combinators_give_the_full_parameter_change() {
    let x = vals::<6, 4>(0.1);
    let dense = Dense::<6, 5, f64>::new();
    let p = dense.init(1);
    same("dense", both(&dense, &p, x, vals::<5, 4>(0.2)));
    // On the heap (gemm at every size).
    let xh = HeapMatrix::from_matrix(&x);
    let dh = HeapMatrix::from_matrix(&vals::<5, 4>(0.2));
    same("dense on the heap", both(&dense, &p, xh, dh));
    // A batch wide enough for the gemm path.
    let wide = Dense::<16, 16, f64>::new();
    let pw = wide.init(2);
    same(
        "dense gemm",
        both(&wide, &pw, vals::<16, 8>(0.05), vals::<16, 8>(0.3)),
    );

    let conv = Conv2d::<f64, 64, 144, 36>::new::<1, 8, 8, 4, 3, 1, 0>();
    let model = conv
        .then(Bias::<144, f64>::new())
        .then(Relu)
        .then(MaxPool2d::<144, 36>::new::<4, 6, 6, 2, 2>());
    let pc = model.init(3);
    same(
        "conv then",
        both(&model, &pc, vals::<64, 2>(0.1), vals::<36, 2>(0.5)),
    );
    let xh = HeapMatrix::from_matrix(&vals::<64, 2>(0.1));
    let dh = HeapMatrix::from_matrix(&vals::<36, 2>(0.5));
    same("conv on the heap", both(&model, &pc, xh, dh));

    let layer = Dense::<3, 3, f64>::new();
    let pl = layer.init(4);
    let v = SVector::<f64, 3>::new(0.3, -0.2, 0.9);
    same("share", both(&layer.share(layer), &pl, v, v * 2.0));
    let pair = layer.par(layer);
    same(
        "par",
        both(&pair, &(pl.clone(), pl.clone()), (v, v * 0.5), (v, -v)),
    );
    let batch = layer.batch::<3>();
    same("batch", both(&batch, &pl, [v, v * 2.0, -v], [v, v, v]));
}

#[test]
fn para_models_give_the_full_parameter_change() {
    let m = Mlp::default();
    let p = m.init(5);
    same("mlp", both(&m, &p, vals::<6, 4>(0.1), vals::<3, 4>(0.4)));
    let r = Residual::default();
    let p = r.init(6);
    type V = SVector<f64, 3>;
    for x in [V::new(0.3, 0.2, 0.9), V::new(-0.3, 0.2, -0.9)] {
        same("residual", both(&r, &p, x, V::new(1.0, -0.5, 0.25)));
    }
}
