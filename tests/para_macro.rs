//! `para!`: models of sub-models, their generated reverse against finite differences, weight
//! sharing and learning. Generated code must not warn.
#![deny(warnings)]

use paralens::check_gradient;
use paralens::prelude::*;

mod common;
use common::{H, ok};

/// Model `m`'s changes of its parameters and its input at `(p, x)`, against central finite
/// differences in both.
fn model_ok<M, X>(name: &str, m: &M, p: M::Param, x: X)
where
    M: Para<X>,
    M::Param: Flat<f64>,
    M::Out: Flat<f64>,
    X: Flat<f64>,
{
    ok(
        name,
        check_gradient(
            |(p, x): (M::Param, X)| m.forward(&p, x),
            |(p, x), d| m.changes(&p, x, d),
            (p, x),
            H,
        ),
    );
}

para! {
    /// A two-layer perceptron.
    pub struct Mlp { l1: Dense<3, 5, f64>, l2: Dense<5, 2, f64> }
    fn forward(&self, x: SVector<f64, 3>) -> SVector<f64, 2> {
        let h = tanh(self.l1(x));
        self.l2(h)
    }
}

para! {
    /// One layer applied twice: its weights are shared, so their changes add.
    pub struct Twice { l: Dense<3, 3, f64> }
    fn forward(&self, x: SVector<f64, 3>) -> SVector<f64, 3> {
        let h = sigmoid(self.l(x));
        self.l(h) + x
    }
}

para! {
    /// Two inputs, a branch and an untouched sub-model.
    pub struct Gate { a: Dense<2, 2, f64>, b: Dense<2, 2, f64>, unused: Dense<2, 2, f64> }
    fn forward(&self, x: SVector<f64, 2>, y: SVector<f64, 2>) -> f64 {
        let s = if x.sum() > 0.0 { self.a(x) } else { self.b(x) * 2.0 };
        s.dot(&y)
    }
}

fn x3() -> SVector<f64, 3> {
    SVector::<f64, 3>::new(0.5, -1.0, 0.25)
}

#[test]
fn two_layer_model_matches_finite_differences_and_the_composite() {
    let m = Mlp::default();
    let p = m.init(3);
    model_ok("mlp", &m, p.clone(), x3());
    // The same model written with combinators gives the same values and changes.
    let c = Dense::<3, 5, f64>::new()
        .then(Tanh)
        .then(Dense::<5, 2, f64>::new());
    let cp = ((p.l1.clone(), ()), p.l2.clone());
    let d = SVector::<f64, 2>::new(1.0, -0.5);
    let y = m.forward(&p, x3());
    let (dp, dx) = m.changes(&p, x3(), d);
    let yc = c.forward(&cp, x3());
    let (dpc, dxc) = c.changes(&cp, x3(), d);
    assert!((y - yc).norm() < 1e-12);
    assert!((dx - dxc).norm() < 1e-12);
    assert!((*dp.l1.w - *dpc.0.0.w).norm() < 1e-12);
    assert!((dp.l2.b - dpc.1.b).norm() < 1e-12);
    assert_eq!(m.forward(&p, x3()), y);
}

#[test]
fn calling_a_sub_model_twice_shares_its_weights() {
    let m = Twice::default();
    let p = m.init(4);
    model_ok("twice", &m, p, x3());
}

#[test]
fn branches_several_inputs_and_unused_sub_models() {
    let m = Gate::default();
    let p = m.init(5);
    for x in [
        SVector::<f64, 2>::new(0.5, 0.2),
        SVector::<f64, 2>::new(-0.5, 0.2),
    ] {
        let y = SVector::<f64, 2>::new(0.3, -0.7);
        ok(
            "gate",
            check_gradient(
                |(p, x, y): (GateParams, SVector<f64, 2>, SVector<f64, 2>)| m.forward(&p, (x, y)),
                |(p, x, y), d| {
                    let (dp, (dx, dy)) = m.changes(&p, (x, y), d);
                    (dp, dx, dy)
                },
                (p.clone(), x, y),
                1e-6,
            ),
        );
        // The unused sub-model gets a zero change.
        let (dp, _) = m.changes(&p, (x, y), 1.0);
        assert_eq!(*dp.unused.w, SMatrix::<f64, 2, 2>::zeros());
    }
}

para! {
    /// The Iris model of the examples, in f32.
    pub struct IrisMlp { l1: Dense<4, 16>, l2: Dense<16, 3> }
    fn forward(&self, x: SVector<f32, 4>) -> SVector<f32, 3> {
        self.l2(relu(self.l1(x)))
    }
}

#[test]
fn para_models_train_with_the_learner() {
    let model = IrisMlp {
        l1: Dense::new(),
        l2: Dense::glorot(),
    };
    let mut learner = Learner::new(model, model.init(0), SoftmaxCrossEntropy, Adam::new(0.02));
    let data = [
        (SVector::<f32, 4>::new(1.0, 0.0, 0.0, 0.5), 0),
        (SVector::<f32, 4>::new(0.0, 1.0, 0.5, 0.0), 1),
        (SVector::<f32, 4>::new(0.0, 0.0, 1.0, 1.0), 2),
    ];
    let (xs, ys): (Vec<_>, Vec<_>) = data.iter().copied().unzip();
    let before = learner.try_mean_loss(&xs, &ys).unwrap();
    for _ in 0..100 {
        for (x, y) in &data {
            learner.step(x, y);
        }
    }
    assert!(learner.try_mean_loss(&xs, &ys).unwrap() < before / 10.0);
    assert_eq!(learner.accuracy(&xs, &ys), 1.0);
}

para! {
    /// A model generic over its scalar type, whose forward is generic over the batch size.
    pub struct GenericMlp<T: Real> {
        l1: Dense<3, 4, T>,
        l2: Dense<4, 2, T>,
    }
    fn forward<const B: usize>(&self, x: SMatrix<T, 3, B>) -> SMatrix<T, 2, B> {
        let h = tanh(self.l1(x));
        self.l2(h)
    }
}

#[test]
fn generic_scalar_type_and_batch_size() {
    let model = GenericMlp::<f64> {
        l1: Dense::new(),
        l2: Dense::new(),
    };
    let p: GenericMlpParams<f64> = model.init(1);
    let x = SMatrix::<f64, 3, 5>::from_fn(|i, k| (i as f64 - k as f64) * 0.2);
    let dy = SMatrix::<f64, 2, 5>::from_fn(|i, k| 0.1 + (i * k) as f64 * 0.05);
    let (dp, dx) = model.changes(&p, x, dy);
    let score = |p: &GenericMlpParams<f64>, x: SMatrix<f64, 3, 5>| model.forward(p, x).dot(&dy);
    let mut worst: f64 = 0.0;
    for i in 0..3 {
        for k in 0..5 {
            let (mut a, mut b) = (x, x);
            a[(i, k)] += H;
            b[(i, k)] -= H;
            let num = (score(&p, a) - score(&p, b)) / (2.0 * H);
            worst = worst.max((num - dx[(i, k)]).abs());
        }
    }
    for i in 0..2 {
        let (mut a, mut b) = (p.clone(), p.clone());
        a.l2.b[i] += H;
        b.l2.b[i] -= H;
        let num = (score(&a, x) - score(&b, x)) / (2.0 * H);
        worst = worst.max((num - dp.l2.b[i]).abs());
    }
    assert!(worst < 1e-7, "largest error {worst}");
    // The same model at another batch size and in f32.
    let m32 = GenericMlp::<f32> {
        l1: Dense::new(),
        l2: Dense::new(),
    };
    let p32 = m32.init(1);
    let y = m32.forward(&p32, SMatrix::<f32, 3, 1>::repeat(0.5));
    assert!(y.iter().all(|v| v.is_finite()));
}

para! {
    /// Configuration fields beside the sub-models: read as forward-only data.
    pub struct Scaled {
        l: Dense<2, 2, f64>,
        #[nodiff]
        scale: f64,
        #[nodiff]
        twice: bool,
    }
    fn forward(&self, x: SVector<f64, 2>) -> SVector<f64, 2> {
        let mut y = self.l(x) * self.scale;
        if self.twice {
            y = self.l(y);
        }
        y
    }
}

#[test]
fn configuration_fields_are_forward_only_data() {
    for twice in [false, true] {
        let model = Scaled {
            l: Dense::new(),
            scale: 1.5,
            twice,
        };
        let p = model.init(2);
        let x = SVector::<f64, 2>::new(0.3, -0.7);
        let dy = SVector::<f64, 2>::new(1.0, 0.5);
        let (dp, dx) = model.changes(&p, x, dy);
        let score = |p: &ScaledParams, x: SVector<f64, 2>| model.forward(p, x).dot(&dy);
        let mut worst: f64 = 0.0;
        for i in 0..2 {
            let (mut a, mut b) = (x, x);
            a[i] += H;
            b[i] -= H;
            worst = worst.max(((score(&p, a) - score(&p, b)) / (2.0 * H) - dx[i]).abs());
            let (mut pa, mut pb) = (p.clone(), p.clone());
            pa.l.b[i] += H;
            pb.l.b[i] -= H;
            worst = worst.max(((score(&pa, x) - score(&pb, x)) / (2.0 * H) - dp.l.b[i]).abs());
        }
        assert!(worst < 1e-7, "twice = {twice}: largest error {worst}");
    }
}

/// An affine score as a `#[lens]` function with parameters, drawn by `draw_affine`.
#[lens(init = draw_affine)]
fn affine(#[param] w: SVector<f64, 2>, #[param] b: f64, x: SVector<f64, 2>) -> f64 {
    w.dot(&x) + b
}

fn draw_affine<R: paralens::rand::Rng + ?Sized>(rng: &mut R) -> (SVector<f64, 2>, f64) {
    (
        SVector::<f64, 2>::from_fn(|_, _| rng.random_range(-1.0..1.0)),
        0.25,
    )
}

/// The same without an initialiser: its parameters start at zero.
#[lens]
fn offset(#[param] c: f64, x: f64) -> f64 {
    x + c
}

para! {
    /// `#[lens]` functions with parameters as sub-models.
    pub struct WithLensParts {
        score: Affine,
        shift: Offset,
    }
    fn forward(&self, x: SVector<f64, 2>) -> f64 {
        self.shift(self.score(x).tanh())
    }
}

#[test]
fn lens_functions_with_parameters_are_sub_models() {
    let model = WithLensParts {
        score: Affine,
        shift: Offset,
    };
    let p = model.init(7);
    assert_eq!(p.score.1, 0.25);
    assert!(p.score.0.iter().all(|v| v.abs() <= 1.0) && p.score.0.norm() > 0.0);
    assert_eq!(p.shift, 0.0);
    let x = SVector::<f64, 2>::new(0.6, -0.2);
    let (dp, dx) = model.changes(&p, x, 1.0);
    let t = p.score.0.dot(&x) + p.score.1;
    let s = 1.0 - t.tanh() * t.tanh();
    assert!((dp.shift - 1.0).abs() < 1e-12);
    assert!((dp.score.1 - s).abs() < 1e-12);
    assert!((dp.score.0 - x * s).amax() < 1e-12);
    assert!((dx - p.score.0 * s).amax() < 1e-12);
}

/// A gain per entry, for any length: the lens type is `Gain<N>`, one parameter type per
/// length, so it has `Init` (drawn by `draw_gain`) and is a sub-model.
#[lens(init = draw_gain)]
fn gain<const N: usize>(#[param] g: SVector<f64, N>, x: SVector<f64, N>) -> SVector<f64, N> {
    g.component_mul(&x)
}

fn draw_gain<const N: usize, R: paralens::rand::Rng + ?Sized>(rng: &mut R) -> SVector<f64, N> {
    SVector::from_fn(|_, _| rng.random_range(0.5..1.5))
}

/// A hidden width that only the parameters name: `Hidden<H>` fixes it (without the type's
/// own `H` the lens type could not exist), and its parameters start at zero.
#[lens]
fn hidden<const H: usize>(
    #[param] w1: SMatrix<f64, H, 2>,
    #[param] w2: SMatrix<f64, 1, H>,
    x: SVector<f64, 2>,
) -> f64 {
    (w2 * tanh(w1 * x))[0]
}

para! {
    /// Const-generic `#[lens]` functions with parameters as sub-models.
    pub struct Sized3 { gain: Gain<3>, l: Dense<3, 2, f64>, out: Hidden<4> }
    fn forward(&self, x: SVector<f64, 3>) -> f64 {
        self.out(tanh(self.l(self.gain(x))))
    }
}

#[test]
fn const_generic_lens_functions_with_parameters_are_sub_models() {
    let m = Sized3 {
        gain: Gain,
        l: Dense::new(),
        out: Hidden,
    };
    let mut p = m.init(11);
    assert!(
        p.gain.iter().all(|g| (0.5..1.5).contains(g)),
        "drawn by draw_gain"
    );
    assert!(p.out.0.iter().chain(p.out.1.iter()).all(|w| *w == 0.0));
    // Away from zero, so that every parameter's change is checked.
    p.out.0 = SMatrix::from_fn(|i, j| 0.3 * i as f64 - 0.2 * j as f64 + 0.1);
    p.out.1 = SMatrix::from_fn(|_, j| 0.5 - 0.3 * j as f64);
    model_ok("sized3", &m, p, x3());
    // The lens type alone, its size inferred from the input.
    let g = SVector::<f64, 2>::new(2.0, -1.0);
    let (y, pb) = Gain.vjp(&g, SVector::<f64, 2>::new(0.5, 3.0));
    assert_eq!(y, SVector::<f64, 2>::new(1.0, -3.0));
    let mut dg = SVector::<f64, 2>::zeros();
    let dx = pb(SVector::<f64, 2>::new(1.0, 1.0), &mut dg);
    assert_eq!((dg, dx), (SVector::<f64, 2>::new(0.5, 3.0), g));
}

/// A layer generic over its scalar: its type `ScalarLayer<I, O>` is one for every `T`, so it
/// has no `Init` but `InitAt<T>`, drawn by `draw_scalar_layer` at the model's `T`.
#[lens(init = draw_scalar_layer)]
fn scalar_layer<T: Real, const I: usize, const O: usize>(
    #[param] w: SMatrix<T, O, I>,
    #[param] b: SVector<T, O>,
    x: SVector<T, I>,
) -> SVector<T, O> {
    tanh(w * x + b)
}

fn draw_scalar_layer<T: Real, const I: usize, const O: usize, R: paralens::rand::Rng + ?Sized>(
    rng: &mut R,
) -> (SMatrix<T, O, I>, SVector<T, O>) {
    let mut draw = || T::cst(rng.random_range(-0.8..0.8));
    (
        SMatrix::from_fn(|_, _| draw()),
        SVector::from_fn(|_, _| draw()),
    )
}

/// A scalar-free offset (no initialiser: it starts at zero), generic over `T` too.
#[lens]
fn scalar_shift<T: Real>(#[param] c: T, x: T) -> T {
    x + c
}

para! {
    /// `#[lens]` layers generic over their scalar as sub-models of a model generic over it:
    /// initialised at the model's `T` (f32 and f64 below).
    pub struct ScalarLayers<T: Real> {
        l1: ScalarLayer<3, 4>,
        l2: ScalarLayer<4, 1>,
        shift: ScalarShift,
        dense: Dense<3, 1, T>,
    }
    fn forward(&self, x: SVector<T, 3>) -> T {
        let h = self.l2(self.l1(x))[0] + self.dense(x)[0];
        self.shift(h)
    }
}

#[test]
fn scalar_generic_lens_functions_with_parameters_are_sub_models() {
    let m = ScalarLayers::<f64> {
        l1: ScalarLayer,
        l2: ScalarLayer,
        shift: ScalarShift,
        dense: Dense::new(),
    };
    let mut p: ScalarLayersParams<f64> = m.init(5);
    assert!(
        p.l1.0
            .iter()
            .chain(p.l1.1.iter())
            .all(|w| (-0.8..0.8).contains(w))
            && p.l1.0.iter().any(|w| *w != 0.0),
        "drawn by draw_scalar_layer"
    );
    assert_eq!(p.shift, 0.0, "no initialiser: zero");
    p.shift = 0.3;
    model_ok("scalar_layers", &m, p, x3());
    // The same sub-models at f32, drawn from the same seed by the same initialiser.
    let m32 = ScalarLayers::<f32> {
        l1: ScalarLayer,
        l2: ScalarLayer,
        shift: ScalarShift,
        dense: Dense::new(),
    };
    let p32: ScalarLayersParams<f32> = m32.init(5);
    let p64: ScalarLayersParams<f64> = m.init(5);
    for (a, b) in p32.l1.0.iter().zip(p64.l1.0.iter()) {
        assert!((f64::from(*a) - b).abs() < 1e-6, "{a} against {b}");
    }
    let y = m32.forward(&p32, SVector::<f32, 3>::new(0.5, -0.25, 1.0));
    assert!(y.is_finite());
}

para! {
    /// The same layers in a model with no scalar parameter: initialised at the one float type
    /// its forward function names (`f64`).
    pub struct ScalarLayersF64 { l1: ScalarLayer<3, 2>, l2: ScalarLayer<2, 1> }
    fn forward(&self, x: SVector<f64, 3>) -> f64 {
        self.l2(self.l1(x))[0]
    }
}

#[test]
fn scalar_generic_lens_sub_models_take_the_float_type_of_a_model_without_scalar() {
    let m = ScalarLayersF64 {
        l1: ScalarLayer,
        l2: ScalarLayer,
    };
    let p: ScalarLayersF64Params = m.init(2);
    let first: (SMatrix<f64, 2, 3>, SVector<f64, 2>) = p.l1;
    assert!(
        first.0.iter().any(|w| *w != 0.0),
        "drawn by draw_scalar_layer"
    );
    model_ok("scalar_layers_f64", &m, p, x3());
}

para! {
    /// Only layers generic over their scalar, so no sub-model names `T`: the marker field
    /// names it, and is data (no `#[nodiff]` needed), not a sub-model. The layer is shared.
    pub struct OnlyScalarLayers<T: Real> {
        l: ScalarLayer<3, 3>,
        out: ScalarLayer<3, 1>,
        _scalar: core::marker::PhantomData<T>,
    }
    fn forward(&self, x: SVector<T, 3>) -> T {
        self.out(self.l(self.l(x)) + x)[0]
    }
}

#[test]
fn a_model_of_scalar_generic_layers_only_names_its_scalar_by_a_marker() {
    let m = OnlyScalarLayers::<f64> {
        l: ScalarLayer,
        out: ScalarLayer,
        _scalar: core::marker::PhantomData,
    };
    let p: OnlyScalarLayersParams<f64> = m.init(3);
    model_ok("only_scalar_layers", &m, p, x3());
    let m32 = OnlyScalarLayers::<f32> {
        l: ScalarLayer,
        out: ScalarLayer,
        _scalar: core::marker::PhantomData,
    };
    let p32 = m32.init(3);
    let y32 = m32.forward(&p32, SVector::<f32, 3>::new(0.5, -0.25, 1.0));
    let y64 = m.forward(&m.init(3), SVector::<f64, 3>::new(0.5, -0.25, 1.0));
    assert!((f64::from(y32) - y64).abs() < 1e-5, "{y32} against {y64}");
}

para! {
    /// Two scalars: the layers generic over theirs are initialised at the first, `T`.
    pub struct TwoScalars<T: Real, U: Real> {
        l: ScalarLayer<3, 1>,
        d: Dense<2, 1, U>,
        _scalar: core::marker::PhantomData<T>,
    }
    fn forward(&self, x: SVector<T, 3>, y: SVector<U, 2>) -> (SVector<T, 1>, SVector<U, 1>) {
        (self.l(x), self.d(y))
    }
}

#[test]
fn scalar_generic_layers_take_the_first_of_two_scalars() {
    let m = TwoScalars::<f32, f64> {
        l: ScalarLayer,
        d: Dense::new(),
        _scalar: core::marker::PhantomData,
    };
    let p = m.init(4);
    let w: SMatrix<f32, 1, 3> = p.l.0;
    assert!(
        w.iter().any(|v| *v != 0.0),
        "drawn by draw_scalar_layer at f32"
    );
    let (a, b) = m.forward(
        &p,
        (
            SVector::<f32, 3>::new(0.5, -0.25, 1.0),
            SVector::<f64, 2>::new(1.0, 2.0),
        ),
    );
    assert!(a[0].is_finite() && b[0].is_finite());
}

para! {
    /// A loop bounded by the struct's own const generic (it was refused by rustc, "generic
    /// parameters may not be used in const operations"), and configuration fields of types
    /// that never get a change (a flag, a count) without `#[nodiff]`.
    pub struct Unrolled<const N: usize> { cell: Dense<3, 3, f64>, twice: bool, skip: usize }
    fn forward(&self, xs: [SVector<f64, 3>; N]) -> SVector<f64, 3> {
        let mut h = xs[0];
        for k in 0..N - 1 {
            if k >= self.skip {
                h = tanh(self.cell(h)) + xs[k + 1];
            }
        }
        if self.twice { h * 2.0 } else { h }
    }
}

#[test]
fn a_struct_const_generic_bounds_a_loop_and_plain_data_needs_no_marker() {
    let m = Unrolled::<4> {
        cell: Dense::new(),
        twice: true,
        skip: 1,
    };
    let mut p = m.init(6);
    p.cell.b = SVector::from_fn(|i, _| 0.1 * i as f64 - 0.05);
    let xs: [SVector<f64, 3>; 4] =
        core::array::from_fn(|t| SVector::from_fn(|i, _| (0.3 * (t + i) as f64).sin()));
    ok(
        "unrolled",
        check_gradient(
            |(p, xs): (UnrolledParams<4>, [SVector<f64, 3>; 4])| m.forward(&p, xs).sum(),
            |(p, xs), d| m.changes(&p, xs, SVector::repeat(d)),
            (p, xs),
            1e-6,
        ),
    );
}

para! {
    /// The scalar bounded in a where clause, and the struct's `T` in a path call
    /// (`T::exp(x)` is `x.exp()`).
    pub struct WhereScalar<T>
    where
        T: Real,
    {
        l: ScalarLayer<3, 1>,
        _scalar: core::marker::PhantomData<T>,
    }
    fn forward(&self, x: SVector<T, 3>) -> T {
        T::exp(self.l(x)[0])
    }
}

#[test]
fn a_where_clause_scalar_and_its_path_calls() {
    let m = WhereScalar::<f64> {
        l: ScalarLayer,
        _scalar: core::marker::PhantomData,
    };
    let p = m.init(8);
    model_ok("where_scalar", &m, p, x3());
}

/// A user's parameter type named `R`: the generated `init_with` names its generator type
/// `__R`, so it does not hide this one (it was E0053, "expected `R`, found type parameter").
#[derive(Clone, Debug, PartialEq, Tangent)]
pub struct R {
    w: f64,
    b: f64,
}

#[lens]
fn r_apply(#[param] r: R, x: f64) -> f64 {
    r.w * x + r.b
}

para! {
    /// A model generic over a scalar named `R`, beside the user's `R` above (in its own
    /// scope: the struct's `R` is the type parameter).
    pub struct ScalarR<R: Real> { l: Dense<2, 1, R> }
    fn forward(&self, x: SVector<R, 2>) -> SVector<R, 1> {
        self.l(x)
    }
}

#[test]
fn a_type_named_r_is_not_hidden() {
    let p: R = RApply.init(1);
    assert_eq!(p, R { w: 0.0, b: 0.0 });
    let r = R { w: 1.5, b: -0.5 };
    let (y, pb) = RApply.vjp(&r, 2.0);
    assert_eq!(y, 2.5);
    let mut dr = R { w: 0.0, b: 0.0 };
    let dx = pb(1.0, &mut dr);
    assert_eq!((dr, dx), (R { w: 2.0, b: 1.0 }, 1.5));
    let m = ScalarR::<f64>::default();
    let p = m.init(2);
    ok(
        "scalar_r",
        check_gradient(
            |(p, x): (ScalarRParams<f64>, SVector<f64, 2>)| m.forward(&p, x)[0],
            |(p, x), d| m.changes(&p, x, SVector::<f64, 1>::new(d)),
            (p, SVector::<f64, 2>::new(0.3, -0.8)),
            1e-6,
        ),
    );
}

para! {
    /// A forward on one line (its braces once drew an `unused_braces` warning).
    pub struct OneLine { l: Dense<2, 2, f64> }
    fn forward(&self, x: SVector<f64, 2>) -> SVector<f64, 2> { self.l(x) }
}

#[test]
fn a_one_line_forward_compiles_without_warnings() {
    let m = OneLine { l: Dense::new() };
    let p = m.init(0);
    let x = SVector::<f64, 2>::new(1.0, -1.0);
    assert_eq!(m.forward(&p, x), *p.l.w * x + p.l.b);
}

// Sub-model calls in branches and blocks whose arms name no differentiated variable (found by
// a reviewer: such arms were taken for forward-only data and emitted as written, so
// `self.a(c)` did not compile). Each sub-model gets its change.
para! {
    pub struct BranchOfSubModels { a: Dense<2, 2, f64>, b: Dense<2, 2, f64>, #[nodiff] flag: bool }
    fn forward(&self, x: SVector<f64, 2>) -> f64 {
        let c = SVector::<f64, 2>::new(1.0, -0.5);
        let s = if self.flag { self.a(c) } else { self.b(c) };
        let t = { self.a(c) };
        let u = match x[0] > 0.0 {
            true => self.b(c),
            false => c,
        };
        s.dot(&x) + t.dot(&x) * u[1]
    }
}

#[test]
fn sub_models_called_in_branches_of_constant_arms_get_their_changes() {
    for flag in [true, false] {
        let model = BranchOfSubModels {
            a: Dense::new(),
            b: Dense::new(),
            flag,
        };
        let p = model.init(3);
        let x = SVector::<f64, 2>::new(0.4, -1.2);
        let (dp, _) = model.changes(&p, x, 1.0);
        assert!(dp.a.w.norm() > 0.0 && dp.b.w.norm() > 0.0, "flag {flag}");
        // The parameters' change against central finite differences, every entry.
        let r = check_gradient(
            |p: BranchOfSubModelsParams| model.forward(&p, x),
            |p: BranchOfSubModelsParams, d: f64| model.changes(&p, x, d).0,
            p,
            H,
        );
        ok(&format!("flag {flag}"), r);
    }
}

#[lens]
fn squared(x: f64) -> f64 {
    x * x
}

// `forward` runs the rules that `vjp` runs (a reviewer found it was the body as written with
// the sub-model calls replaced): `map` of a heap matrix went through `Deref` to a static
// matrix's `map` and of a scalar had no method, so `forward` did not compile where `vjp` did.
// A configuration field converted (`self.scale.into()`) is forward-only data whose type the
// rule fixes (it was refused as a differentiated method).
para! {
    pub struct MappedHeap { l: Dense<3, 3, f64> }
    fn forward(&self, x: HeapMatrix<f64, 3, 1>) -> HeapMatrix<f64, 3, 1> {
        self.l(x).map(squared)
    }
}

// A configuration field read in a macro is forward-only data, as it is outside one: a macro
// naming `self` was taken for a sub-model call, so a loop over `0..self.n` holding
// `assert!(self.scale > 0.0)` was lowered as a differentiated loop and its bound refused.
// A macro that does call a sub-model still counts as one.
para! {
    pub struct Checked { l: Dense<2, 2, f64>, #[nodiff] scale: f64, #[nodiff] n: usize }
    fn forward(&self, x: SVector<f64, 2>) -> f64 {
        for k in 0..self.n {
            assert!(self.scale > 0.0, "check {k}: scale {} is not positive", self.scale);
        }
        let mut h = x;
        for _ in 0..3 {
            h = self.l(h) * self.scale;
        }
        h.sum()
    }
}

#[test]
fn configuration_fields_in_macros_are_forward_only_data() {
    let model = Checked {
        l: Dense::new(),
        scale: 0.5,
        n: 2,
    };
    let p = model.init(4);
    let x = SVector::<f64, 2>::new(0.3, -0.8);
    let mut h = x;
    for _ in 0..3 {
        h = (*p.l.w * h + p.l.b) * 0.5;
    }
    assert!((model.forward(&p, x) - h.sum()).abs() < 1e-12);
    model_ok("checked", &model, p.clone(), x);
    let bad = Checked {
        l: Dense::new(),
        scale: -1.0,
        n: 2,
    };
    let refused = std::panic::catch_unwind(|| bad.forward(&p, x));
    assert!(refused.is_err(), "the assertion ran");
}

para! {
    pub struct MappedScalar { l: Dense<3, 3, f64>, #[nodiff] scale: f32 }
    fn forward(&self, x: SVector<f64, 3>) -> f64 {
        self.l(x).sum().map(squared) * self.scale.into()
    }
}

#[test]
fn forward_runs_the_rules_of_vjp() {
    let x3 = SVector::<f64, 3>::new(0.2, -0.4, 0.9);
    let heap = HeapMatrix::<f64, 3, 1>::from_fn(|i, _| x3[i]);
    let model = MappedHeap { l: Dense::new() };
    let p = model.init(6);
    let y = model.forward(&p, heap.clone());
    let (y_vjp, _) = Para::vjp(&model, &p, heap.clone());
    assert_eq!(y.as_slice(), y_vjp.as_slice());
    // By hand: (W x + b) squared entry-wise.
    let a = *p.l.w * x3 + p.l.b;
    for i in 0..3 {
        assert!((y[(i, 0)] - a[i] * a[i]).abs() < 1e-12, "entry {i}");
    }
    // The input's change against central finite differences, for the score y . dy.
    let dy = HeapMatrix::<f64, 3, 1>::from_fn(|i, _| 1.0 - 0.5 * i as f64);
    let score = |x: &HeapMatrix<f64, 3, 1>| {
        let y = model.forward(&p, x.clone());
        (0..3).map(|i| y[(i, 0)] * dy[(i, 0)]).sum::<f64>()
    };
    let (_, dx) = model.changes(&p, heap.clone(), dy.clone());
    for i in 0..3 {
        let (mut up, mut down) = (heap.clone(), heap.clone());
        up[(i, 0)] += H;
        down[(i, 0)] -= H;
        let fd = (score(&up) - score(&down)) / (2.0 * H);
        assert!(
            (fd - dx[(i, 0)]).abs() < 1e-7,
            "x[{i}]: {fd} against {}",
            dx[(i, 0)]
        );
    }

    let model = MappedScalar {
        l: Dense::new(),
        scale: 0.5,
    };
    let p = model.init(7);
    let y = model.forward(&p, x3);
    assert_eq!(y, Para::vjp(&model, &p, x3).0);
    let s = (*p.l.w * x3 + p.l.b).sum();
    assert!(
        (y - 0.5 * s * s).abs() < 1e-12,
        "{y} against {}",
        0.5 * s * s
    );
    let r = check_gradient(
        |x| model.forward(&p, x),
        |x, d| model.changes(&p, x, d).1,
        x3,
        H,
    );
    ok("MappedScalar", r);
}

// A generic model scaled by a configuration field of its scalar type (a reviewer found it
// refused: the scaling rules were written for `f32` and `f64` only).
para! {
    pub struct ScaledGeneric<T: Real> { l: Dense<2, 2, T>, #[nodiff] s: T }
    fn forward(&self, x: SVector<T, 2>) -> T {
        (self.l(x) * self.s).sum()
    }
}

#[test]
fn generic_models_scale_by_their_scalar_type() {
    let model = ScaledGeneric::<f64> {
        l: Dense::new(),
        s: 0.75,
    };
    let p = model.init(8);
    let x = SVector::<f64, 2>::new(0.6, -0.2);
    let y = model.forward(&p, x);
    assert_eq!(y, Para::vjp(&model, &p, x).0);
    assert!((y - 0.75 * (*p.l.w * x + p.l.b).sum()).abs() < 1e-12);
    let r = check_gradient(
        |x| model.forward(&p, x),
        |x, d| model.changes(&p, x, d).1,
        x,
        H,
    );
    ok("ScaledGeneric", r);
}

// A branch that rebinds a differentiated value and whose value is data (a count): data after
// it, in `forward`, `vjp` and `vjp_params` (it was refused as a cast of a differentiated value).
para! {
    pub struct CountedBranch { l: Dense<2, 2, f64> }
    fn forward(&self, x: SVector<f64, 2>) -> f64 {
        let mut h = self.l(x);
        let n = if h.sum() > 0.0 {
            h = h * 2.0;
            2usize
        } else {
            h = h * h.sum();
            1
        };
        h.sum() * n as f64
    }
}

#[test]
fn a_branch_valued_in_data_in_a_model() {
    let m = CountedBranch::default();
    let p = m.init(9);
    let xs = [
        SVector::<f64, 2>::new(3.0, -1.0),
        SVector::<f64, 2>::new(-3.0, 1.0),
    ];
    // Both branches are taken.
    let sums = xs.map(|x| (*p.l.w * x + p.l.b).sum());
    assert!(sums[0] * sums[1] < 0.0, "{sums:?}");
    for x in xs {
        model_ok("CountedBranch", &m, p.clone(), x);
        let (y, pb) = Para::vjp_params(&m, &p, x);
        let mut dp = CountedBranchParams::zeros();
        pb(1.0, &mut dp);
        assert_eq!(y, m.forward(&p, x));
        let (want, _) = m.changes(&p, x, 1.0);
        assert!((*dp.l.w - *want.l.w).norm() < 1e-12);
    }
}

/// A `#[lens]` function with the name of a model's sub-model.
#[lens]
fn squash(x: SVector<f64, 2>) -> SVector<f64, 2> {
    x * 0.5
}

para! {
    /// A sub-model and a free `#[lens]` function of one name: `self.squash(..)` is the
    /// sub-model, `self::squash(..)` the function (the plain `squash(..)` is refused, saying
    /// both).
    pub struct Clash { squash: Dense<2, 2, f64> }
    fn forward(&self, x: SVector<f64, 2>) -> f64 {
        let h = self.squash(x);
        self::squash(h).sum()
    }
}

#[test]
fn a_free_lens_function_named_as_a_sub_model_is_called_by_its_path() {
    let m = Clash::default();
    let p = m.init(1);
    let x = SVector::<f64, 2>::new(0.3, -0.8);
    let expected = (*p.squash.w * x + p.squash.b).sum() * 0.5;
    assert!((m.forward(&p, x) - expected).abs() < 1e-12);
    model_ok("clash", &m, p.clone(), x);
}

para! {
    /// A model with a configuration field, which a method of its own reads.
    pub struct Gained { l: Dense<2, 2, f64>, #[nodiff] gain: f64 }
    fn forward(&self, x: SVector<f64, 2>) -> SVector<f64, 2> {
        self.l(x) * self.gain
    }
}

impl Gained {
    fn gain(&self) -> f64 {
        self.gain
    }
}

// A sub-model's method read as an operand (`self.g.gain()`) has its declared type, and is not
// read through the operators' inference guard (`ui/para_sub_model_method_read_as_a_weight`).
para! {
    pub struct UsesGain { g: Gained }
    fn forward(&self, x: SVector<f64, 2>) -> f64 {
        self.g(x).sum() * self.g.gain()
    }
}

#[test]
fn a_sub_model_method_is_an_operand_of_its_declared_type() {
    let m = UsesGain {
        g: Gained {
            l: Dense::new(),
            gain: 1.5,
        },
    };
    let p = m.init(3);
    let x = SVector::<f64, 2>::new(0.3, -0.8);
    let expected = ((*p.g.l.w * x + p.g.l.b) * 1.5).sum() * 1.5;
    assert!((m.forward(&p, x) - expected).abs() < 1e-12);
    model_ok("uses_gain", &m, p.clone(), x);
}

para! {
    /// A sub-model named like a method of the parameter struct's traits (`Flat::scale`).
    pub struct ScaleNamed { scale: Dense<2, 2, f64> }
    fn forward(&self, x: SVector<f64, 2>) -> SVector<f64, 2> {
        self.scale(x)
    }
}

#[test]
fn a_sub_model_named_like_a_parameter_method_leaves_the_method_callable() {
    // `para!` gives the parameter struct a private method per sub-model (its input check):
    // named `input_of_scale`, it does not shadow `Flat::scale` in this module.
    let model = ScaleNamed {
        scale: Dense::new(),
    };
    let mut p = model.init(0);
    let before = p.scale.w[(0, 0)];
    p.scale(2.0);
    assert_eq!(p.scale.w[(0, 0)], 2.0 * before);
    assert!(before != 0.0);
}
