//! `#[lens]`: every construct's generated reverse derivative against central finite
//! differences (f64), plus the generated lens types. Generated code must not warn.
#![deny(warnings)]

use paralens::prelude::*;
use paralens::{GradCheck, check_gradient, fns};

const H: f64 = 1e-6;
const TOL: f64 = 1e-7;

fn ok(name: &str, r: GradCheck) {
    assert!(r.passes(TOL), "{name}: {r}");
}

// d/dx (x^2 + 3x) = 2x + 3
#[lens]
fn poly(x: f64) -> f64 {
    x * x + 3.0 * x
}

#[test]
fn repeated_operand_and_untyped_literals() {
    assert_eq!(poly(2.0), 10.0);
    assert_eq!(poly_rev(2.0, 1.0), 7.0);
    ok("poly", check_gradient(poly, poly_rev, 1.3, H));
}

// Shadowing is renaming: x -> x^2 -> x^4 - x; d = 4x^3 - 1
#[lens]
fn shadow(x: f64) -> f64 {
    let y = x;
    let x = x * x;
    let x = x * x;
    x - y
}

#[test]
fn shadowing() {
    assert_eq!(shadow_rev(2.0, 1.0), 31.0);
    ok("shadow", check_gradient(shadow, shadow_rev, -0.7, H));
}

// Fan-out across statements: a is used by three later statements.
#[lens]
fn fan_out(x: f64, y: f64) -> f64 {
    let a = x * y;
    let b = a.sin();
    let c = a * a;
    let d = -a / (y + 2.0);
    b + c + d
}

#[test]
fn fan_out_and_two_arguments() {
    let f = |(x, y): (f64, f64)| fan_out(x, y);
    let r = |(x, y): (f64, f64), d: f64| fan_out_rev(x, y, d);
    ok("fan_out", check_gradient(f, r, (0.4, 1.1), H));
}

#[lens]
fn methods(x: f64, y: f64) -> f64 {
    let a = x.exp() + y.ln() + y.sqrt() + x.sin() * x.cos();
    let b = x.tanh() + (x - y).abs() + y.recip() + x.powi(3) + y.powf(x);
    let c = x.max(y) - x.min(y * 0.5);
    a * b + c
}

#[test]
fn float_methods() {
    let f = |(x, y): (f64, f64)| methods(x, y);
    let r = |(x, y): (f64, f64), d: f64| methods_rev(x, y, d);
    ok("methods", check_gradient(f, r, (0.3, 1.7), H));
    ok("methods", check_gradient(f, r, (1.2, 0.6), H));
}

// Nested lens calls (the inner one through its generated _vjp), and a module path.
mod inner {
    use paralens::prelude::*;

    #[lens]
    pub fn square(x: f64) -> f64 {
        x * x
    }
}

#[lens]
fn nested(x: f64) -> f64 {
    let s = inner::square(x + 1.0);
    poly(s) + inner::square(x)
}

#[test]
fn nested_calls() {
    ok("nested", check_gradient(nested, nested_rev, 0.35, H));
}

// Tuples: build one, destructure it, return one.
#[lens]
fn polar(r: f64, t: f64) -> (f64, f64) {
    let p = (r * t.cos(), r * t.sin());
    let (a, b) = p;
    (a + b, a * b)
}

#[test]
fn tuples() {
    let f = |(r, t): (f64, f64)| polar(r, t);
    let rv = |(r, t): (f64, f64), d: (f64, f64)| polar_rev(r, t, d);
    ok("polar", check_gradient(f, rv, (1.5, 0.4), H));
}

// Nested blocks, both branches of an if, and a match; the conditions are not differentiated.
#[lens]
fn branches(x: f64, n: usize) -> f64 {
    let y = {
        let t = x * 2.0;
        t + 1.0
    };
    let z = if x > 0.0 { y * y } else { -y };
    match n {
        0 => z,
        1 => z * x,
        _ => z.exp(),
    }
}

#[test]
fn if_else_and_match() {
    for n in 0..3 {
        for x in [0.7, -0.4] {
            let f = |x: f64| branches(x, n);
            let r = |x: f64, d: f64| branches_rev(x, n, d);
            ok("branches", check_gradient(f, r, x, H));
        }
    }
}

// A branch that uses a variable only on one side.
#[lens]
fn one_sided(x: f64, y: f64) -> f64 {
    if x > y { x * 3.0 } else { y * y }
}

#[test]
fn variable_used_in_one_branch() {
    let f = |(x, y): (f64, f64)| one_sided(x, y);
    let r = |(x, y): (f64, f64), d: f64| one_sided_rev(x, y, d);
    ok("one_sided", check_gradient(f, r, (2.0, 1.0), H));
    ok("one_sided", check_gradient(f, r, (0.5, 1.0), H));
    assert_eq!(one_sided_rev(2.0, 1.0, 1.0), (3.0, 0.0));
}

// Const-generic nalgebra: the Rosenbrock function, written as a vector expression.
#[lens]
fn rosenbrock<const N: usize>(x: SVector<f64, N>) -> f64 {
    let mut total = 0.0;
    let _ = &mut total;
    let ones = SVector::<f64, N>::repeat(1.0);
    let d = ones - x;
    let lead = d.component_mul(&d).sum();
    lead * 0.5 + x.dot(&x) * 0.25
}

#[test]
fn const_generic_functions() {
    let x = SVector::<f64, 4>::new(0.5, -1.0, 2.0, 0.1);
    ok(
        "rosenbrock4",
        check_gradient(rosenbrock::<4>, rosenbrock_rev::<4>, x, H),
    );
    let x = SVector::<f64, 7>::from_fn(|i, _| i as f64 * 0.3 - 1.0);
    ok(
        "rosenbrock7",
        check_gradient(rosenbrock::<7>, rosenbrock_rev::<7>, x, H),
    );
}

// Matrix products, transpose, map with a lens function, activation functions.
#[lens]
fn sq(x: f64) -> f64 {
    x * x
}

#[lens]
fn layer(w: SMatrix<f64, 3, 2>, x: SVector<f64, 2>, b: SVector<f64, 3>) -> f64 {
    let h = tanh(w * x + b);
    let g = w.transpose() * h;
    let s = sigmoid(g).map(sq);
    s.sum() + softmax(h).dot(&h) + relu(h * 2.0).sum()
}

#[test]
fn nalgebra_operations() {
    let w = SMatrix::<f64, 3, 2>::from_fn(|i, j| (i as f64 - j as f64) * 0.4 + 0.1);
    let x = SVector::<f64, 2>::new(0.3, -0.8);
    let b = SVector::<f64, 3>::new(0.1, 0.2, -0.3);
    let f = |(w, x, b)| layer(w, x, b);
    let r = |(w, x, b), d| layer_rev(w, x, b, d);
    ok("layer", check_gradient(f, r, (w, x, b), H));
}

// The generated type is a Lens (or a Para with #[param]) usable in composites.
#[lens]
fn affine(
    #[param] w: SMatrix<f64, 2, 3>,
    #[param] b: SVector<f64, 2>,
    x: SVector<f64, 3>,
) -> SVector<f64, 2> {
    w * x + b
}

#[test]
fn generated_types_compose() {
    let x = SVector::<f64, 3>::new(1.0, 2.0, -1.0);
    assert_eq!(Poly.apply(2.0), 10.0);
    assert_eq!(Poly.reverse(2.0, 1.0), 7.0);
    let model = Affine.then(Tanh).then(Affine2);
    let p = (
        (
            SMatrix::<f64, 2, 3>::repeat(0.1),
            SVector::<f64, 2>::new(0.2, -0.1),
        ),
        (),
    );
    let p = (p, ());
    let r = check_gradient(
        |(p, x): (_, SVector<f64, 3>)| model.forward(&p, x),
        |(p, x), d| model.changes(&p, x, d),
        (p, x),
        H,
    );
    ok("affine composite", r);
}

// A layer of heap matrices with a branch and a loop, for `vjp_params` below.
#[lens]
fn heap_layer_params(
    #[param] w: HeapMatrix<f64, 3, 4>,
    #[param] s: f64,
    x: HeapMatrix<f64, 4, 2>,
) -> f64 {
    let mut h = w * x;
    for _ in 0..2 {
        h = h.map(tanh) * s;
    }
    if h.sum() > 0.0 {
        h.norm_squared()
    } else {
        h.sum() * s
    }
}

// The input mapped before it meets the parameters: in `vjp_params`'s sweep the map is
// forward-only code, and `HeapMatrix` had no `map` of its own, so nalgebra's (through `Deref`)
// gave a static matrix, and building `vjp_params` failed with the sweep's type guard (a
// reviewer's probe).
#[lens]
fn mapped_input_layer(#[param] w: HeapMatrix<f64, 2, 3>, x: HeapMatrix<f64, 3, 2>) -> f64 {
    let a = x.map(tanh);
    relu(w * a).sum()
}

#[test]
fn vjp_params_gives_the_parameter_change_of_vjp() {
    let w = HeapMatrix::<f64, 2, 3>::from_fn(|i, j| 0.4 - 0.3 * (i + j) as f64);
    let x = HeapMatrix::<f64, 3, 2>::from_fn(|i, j| 0.5 * i as f64 - 0.7 * j as f64 + 0.2);
    let (y, pb) = MappedInputLayer.vjp(&w, x.clone());
    let (yp, pbp) = MappedInputLayer.vjp_params(&w, x);
    assert_eq!(y, yp);
    let (mut dw, mut dwp) = (Tangent::zeros(), Tangent::zeros());
    let _ = pb(0.6, &mut dw);
    pbp(0.6, &mut dwp);
    assert!(*dw == *dwp, "mapped input");
    // A lens type with parameters sweeps its body a second time with the inputs as data for
    // `vjp_params` (what a learner runs): the same value and parameter change as `vjp`, and
    // no input change computed.
    let (p, x) = (
        (
            SMatrix::<f64, 2, 3>::repeat(0.1),
            SVector::<f64, 2>::new(0.2, -0.1),
        ),
        SVector::<f64, 3>::new(1.0, 2.0, -1.0),
    );
    let d = SVector::<f64, 2>::new(0.7, -1.3);
    let (y, pb) = Affine.vjp(&p, x);
    let (yp, pbp) = Affine.vjp_params(&p, x);
    assert_eq!(y, yp);
    let (mut dp, mut dpp) = (Tangent::zeros(), Tangent::zeros());
    let _ = pb(d, &mut dp);
    pbp(d, &mut dpp);
    assert_eq!(dp, dpp);
    for sign in [1.0, -1.0] {
        let w = HeapMatrix::<f64, 3, 4>::from_fn(|i, j| sign * (0.3 + 0.1 * (i + 2 * j) as f64));
        let x = HeapMatrix::<f64, 4, 2>::from_fn(|i, j| 0.2 * i as f64 - 0.3 * j as f64 + 0.1);
        let p = (w, 0.9);
        let (y, pb) = HeapLayerParams.vjp(&p, x.clone());
        let (yp, pbp) = HeapLayerParams.vjp_params(&p, x);
        assert_eq!(y, yp);
        let (mut dp, mut dpp): ((HeapMatrix<f64, 3, 4>, f64), _) =
            (Tangent::zeros(), Tangent::zeros());
        let _ = pb(1.3, &mut dp);
        pbp(1.3, &mut dpp);
        assert!(*dp.0 == *dpp.0 && dp.1 == dpp.1, "branch {sign}");
    }
    // The sweep `vjp_params` runs: its pullback's slot for the input is `()`, no change.
    let w = HeapMatrix::<f64, 3, 4>::repeat(0.2);
    let x = HeapMatrix::<f64, 4, 2>::repeat(-0.1);
    let (_, pb) = __heap_layer_params_vjp_params(w.clone(), 0.9, x.clone());
    let (dw, ds, ()) = pb(1.3);
    let (_, pb_full) = heap_layer_params_vjp(w, 0.9, x);
    let (dw_full, ds_full, _) = pb_full(1.3);
    assert!(*dw == *dw_full && ds == ds_full);
}

// A `#[nodiff]` heap batch keeps the lens type (a heap matrix has a "no change" value; the
// type was dropped without a word, so a heap model could not mark its input as data).
#[lens]
fn heap_data_layer(#[param] w: HeapMatrix<f64, 3, 4>, #[nodiff] x: HeapMatrix<f64, 4, 2>) -> f64 {
    (w * x).norm_squared()
}

// Sizes that only the parameters name: the function compiles (it failed the whole crate with
// E0207, unconstrained parameters of the lens type's impls), and its lens type carries them
// (`GenericHidden<I, H>`, in the order declared; no `Init`, as its parameters' scalar type
// is the function's).
#[lens]
fn generic_hidden<T: Real, const I: usize, const H: usize, const B: usize>(
    #[param] w1: HeapMatrix<T, H, I>,
    #[param] w2: HeapMatrix<T, 1, H>,
    x: HeapMatrix<T, I, B>,
) -> T {
    (w2 * relu(w1 * x)).sum()
}

#[test]
fn heap_models_with_data_inputs_and_generic_sizes() {
    let w = HeapMatrix::<f64, 3, 4>::from_fn(|i, j| 0.1 * (i as f64) - 0.2 * (j as f64) + 0.3);
    let x = HeapMatrix::<f64, 4, 2>::from_fn(|i, j| 0.5 - 0.1 * (i + 3 * j) as f64);
    let (y, pb) = HeapDataLayer.vjp(&w, x.clone());
    assert_eq!(y, heap_data_layer(w.clone(), x.clone()));
    let mut dw = Tangent::zeros();
    let dx = pb(1.0, &mut dw);
    assert!(
        *dx == *HeapMatrix::<f64, 4, 2>::zeros(),
        "a data input gets no change"
    );
    assert!(*dw == *heap_data_layer_rev(w.clone(), x.clone(), 1.0));
    let r = check_gradient(
        |(w1, w2): (HeapMatrix<f64, 4, 6>, HeapMatrix<f64, 1, 4>)| {
            generic_hidden(w1, w2, HeapMatrix::<f64, 6, 2>::repeat(0.7))
        },
        |(w1, w2), d| {
            let (a, b, _) = generic_hidden_rev(w1, w2, HeapMatrix::<f64, 6, 2>::repeat(0.7), d);
            (a, b)
        },
        (
            HeapMatrix::from_fn(|i, j| 0.2 * (i as f64) - 0.1 * (j as f64)),
            HeapMatrix::from_fn(|_, j| 0.3 - 0.2 * j as f64),
        ),
        H,
    );
    ok("generic_hidden", r);
    // The lens type, its sizes inferred from the parameters.
    let (w1, w2) = (
        HeapMatrix::<f64, 4, 6>::from_fn(|i, j| 0.1 * (i as f64) - 0.05 * (j as f64)),
        HeapMatrix::<f64, 1, 4>::repeat(0.5),
    );
    let x = HeapMatrix::<f64, 6, 2>::repeat(0.7);
    let p = (w1.clone(), w2.clone());
    let (y, pb) = GenericHidden.vjp(&p, x.clone());
    assert_eq!(y, generic_hidden(w1.clone(), w2.clone(), x.clone()));
    let mut dp = Tangent::zeros();
    let dx = pb(1.0, &mut dp);
    let (a, b, c) = generic_hidden_rev(w1, w2, x, 1.0);
    assert!(*dp.0 == *a && *dp.1 == *b && *dx == *c);
}

/// Sums the entries: a second lens type to finish the composite above.
#[lens]
fn affine2(x: SVector<f64, 2>) -> f64 {
    x.sum()
}

// Arguments that get no change: usize, bool, #[nodiff].
#[lens]
fn scaled(x: f64, k: usize, flip: bool, #[nodiff] c: f64) -> f64 {
    let s = if flip { -1.0 } else { 1.0 };
    x * (k as f64) * s + c * x
}

#[test]
fn non_differentiated_arguments_are_omitted() {
    // d/dx = k s + c; the other slots are absent from scaled_rev's result.
    let dx: f64 = scaled_rev(2.0, 3, true, 0.5, 1.0);
    assert_eq!(dx, -3.0 + 0.5);
    assert_eq!(scaled(2.0, 3, false, 0.5), 7.0);
}

// Z2 words: & ^ | ! on u64, 64 examples per word.
#[lens]
fn z2_read_once(a: u64, b: u64, c: u64) -> u64 {
    (a & !b) | c
}

// The point of this circuit is the AND of a wire with itself.
#[allow(clippy::eq_op)]
#[lens]
fn z2_and_self(x: u64) -> u64 {
    x & x
}

/// The Boolean difference oracle on one lane: R[f](x, d)_i = parity((f(x) ^ f(x ^ e_i)) & d).
fn oracle(f: impl Fn([bool; 3]) -> bool, x: [bool; 3], d: bool) -> [bool; 3] {
    core::array::from_fn(|i| {
        let mut y = x;
        y[i] = !y[i];
        (f(x) ^ f(y)) & d
    })
}

#[test]
fn z2_matches_the_boolean_difference_on_read_once_formulas() {
    // Every combination of 3 input bits and d, one per lane.
    let (mut a, mut b, mut c, mut d) = (0u64, 0u64, 0u64, 0u64);
    for lane in 0..16 {
        let bit = |k: u32| ((lane >> k) & 1) as u64;
        a |= bit(0) << lane;
        b |= bit(1) << lane;
        c |= bit(2) << lane;
        d |= bit(3) << lane;
    }
    let (da, db, dc) = z2_read_once_rev(a, b, c, d);
    for lane in 0..16 {
        let get = |w: u64| (w >> lane) & 1 == 1;
        let f = |v: [bool; 3]| {
            let w = |x: bool| if x { u64::MAX } else { 0 };
            z2_read_once(w(v[0]), w(v[1]), w(v[2])) & 1 == 1
        };
        let want = oracle(f, [get(a), get(b), get(c)], get(d));
        assert_eq!([get(da), get(db), get(dc)], want, "lane {lane}");
    }
}

// A borrowed forward-only word as an operand (`m: &u64`): it was refused, `Owned` having no
// `u64` impl.
#[lens]
fn z2_masked(x: u64, y: u64, #[nodiff] m: &u64, #[nodiff] k: u64) -> u64 {
    (x & m) ^ (y | k) ^ (x & y & m)
}

#[test]
fn z2_borrowed_forward_only_operands() {
    let (m, k) = (0xF0F0_F0F0_F0F0_F0F0u64, 0x00FF_00FF_00FF_00FFu64);
    let x = 0x0123_4567_89AB_CDEFu64;
    let y = 0xFEDC_BA98_7654_3210u64;
    assert_eq!(z2_masked(x, y, &m, k), (x & m) ^ (y | k) ^ (x & y & m));
    // Every lane, against the Boolean difference with m and k held.
    let d = 0x5A5A_A5A5_3C3C_C3C3u64;
    let (dx, dy) = z2_masked_rev(x, y, &m, k, d);
    for lane in 0..64 {
        let get = |w: u64| (w >> lane) & 1 == 1;
        let f = |v: [bool; 3]| {
            let w = |b: bool| if b { u64::MAX } else { 0 };
            let (ml, kl) = (w(get(m)), w(get(k)));
            z2_masked(w(v[0]), w(v[1]), &ml, kl) & 1 == 1
        };
        let want = oracle(f, [get(x), get(y), false], get(d));
        assert_eq!([get(dx), get(dy)], [want[0], want[1]], "lane {lane}");
    }
}

#[test]
fn z2_reverse_is_defined_on_the_circuit_not_the_function() {
    // x & x computes x, but its reverse derivative is x&d ^ x&d = 0.
    assert_eq!(z2_and_self(0b1010), 0b1010);
    assert_eq!(z2_and_self_rev(0b1010, u64::MAX), 0);
}

// Generic over the scalar type: the same lens in f32 and f64.
#[lens]
fn softsign<T: Real>(x: T) -> T {
    let one = T::one();
    x / (one + x.abs()) + x.tanh() * x
}

#[test]
fn generic_scalar_functions() {
    ok(
        "softsign f64",
        check_gradient(softsign::<f64>, softsign_rev::<f64>, 0.8, H),
    );
    ok(
        "softsign f64",
        check_gradient(softsign::<f64>, softsign_rev::<f64>, -1.3, H),
    );
    let (g32, g64) = (softsign_rev(0.8_f32, 1.0), softsign_rev(0.8_f64, 1.0));
    assert!((f64::from(g32) - g64).abs() < 1e-6);
    for x in [0.8, -1.3] {
        ok(
            "activations f64",
            check_gradient(activations::<f64>, activations_rev::<f64>, x, H),
        );
        let (a32, a64) = (activations_rev(x as f32, 1.0), activations_rev(x, 1.0));
        assert!((f64::from(a32) - a64).abs() < 1e-5);
    }
    let x = 0.8_f64;
    let want = fns::gelu(x) * x + fns::relu(x) + fns::sigmoid(x) + fns::tanh(x) - fns::softplus(x)
        + fns::leaky_relu(x, 0.1);
    assert!((activations(x) - want).abs() < 1e-15);
}

// The activations of `fns` on a generic scalar (`Elementwise` is a supertrait of `Real`; a
// reviewer found `gelu(x)` with `x: T` refused, three times).
#[lens]
fn activations<T: Real>(x: T) -> T {
    gelu(x) * x + relu(x) + sigmoid(x) + tanh(x) - softplus(x) + leaky_relu(x, T::cst(0.1))
}

// A raw identifier as the name: `r#match` gives `match_vjp`, `match_rev` and `Match`, and
// calls of it from another lens work. d/dx x^3 = 3 x^2.
#[lens]
fn r#match(x: f64) -> f64 {
    x * x * x
}

#[lens]
fn calls_raw(x: f64) -> f64 {
    r#match(x) + x
}

#[test]
fn raw_identifiers_name_the_generated_items() {
    assert_eq!(match_rev(2.0, 1.0), 12.0);
    assert_eq!(Match.apply(2.0), 8.0);
    ok(
        "calls_raw",
        check_gradient(calls_raw, calls_raw_rev, 0.7, H),
    );
}

// A borrowed argument marked `#[nodiff]` is data: `w` gets no slot, d/dx (x . w) = w.
#[lens]
fn dot_with(x: SVector<f64, 3>, #[nodiff] w: &SVector<f64, 3>) -> f64 {
    x.dot(w)
}

// A caller lends its own data to it and to a product of a borrowed matrix: the pullbacks
// hold no borrow (it was E0597, "`w` does not live long enough", at `&w`: the pullback's
// type captured the borrow's lifetime). f = x . w + sum(m w) (m w . m w).
#[lens]
fn weighted(#[nodiff] v: &SVector<f64, 3>, m: SMatrix<f64, 2, 3>) -> f64 {
    let y = m * v;
    y.sum() * y.dot(&y)
}

#[lens]
fn lends_its_own(x: SVector<f64, 3>, m: SMatrix<f64, 2, 3>, #[nodiff] w: SVector<f64, 3>) -> f64 {
    dot_with(x, &w) + weighted(&w, m)
}

#[test]
fn borrowed_data_marked_nodiff() {
    let w = SVector::<f64, 3>::new(1.0, -2.0, 0.5);
    assert_eq!(dot_with(SVector::repeat(2.0), &w), -1.0);
    assert_eq!(dot_with_rev(SVector::repeat(3.0), &w, 1.0), w);
    let m = SMatrix::<f64, 2, 3>::new(0.3, -0.2, 0.5, 0.1, 0.4, -0.6);
    ok(
        "lends_its_own",
        check_gradient(
            |(x, m): (SVector<f64, 3>, SMatrix<f64, 2, 3>)| lends_its_own(x, m, w),
            |(x, m), d| lends_its_own_rev(x, m, w, d),
            (SVector::<f64, 3>::new(0.7, -0.1, 0.4), m),
            H,
        ),
    );
}

/// A configuration: data the function reads, never differentiated.
#[derive(Clone, Copy)]
struct Config {
    scale: f64,
    square: bool,
}

// `#[nodiff]` on a configuration struct and on an `Option`: neither needs `Tangent`.
// f = scale * x^2 (or x), then ^k when k is set.
#[lens]
fn configured(x: f64, #[nodiff] cfg: Config, #[nodiff] k: Option<i32>) -> f64 {
    let mut y = if cfg.square { x * x } else { x };
    if let Some(k) = k {
        y = y.powi(k);
    }
    cfg.scale * y
}

// With only an `Option` as data the lens type exists too: its "no change" is `None`.
#[lens]
fn shifted(x: f64, #[nodiff] by: Option<f64>) -> f64 {
    match by {
        Some(b) => x * x + b,
        None => x * x,
    }
}

#[test]
fn nodiff_arguments_of_any_type() {
    for cfg in [
        Config {
            scale: 2.0,
            square: true,
        },
        Config {
            scale: -0.5,
            square: false,
        },
    ] {
        for k in [None, Some(3)] {
            ok(
                "configured",
                check_gradient(
                    |x| configured(x, cfg, k),
                    |x, d| configured_rev(x, cfg, k, d),
                    0.8,
                    H,
                ),
            );
        }
    }
    assert_eq!(Shifted.apply((2.0, Some(1.0))), 5.0);
    assert_eq!(Shifted.reverse((2.0, Some(1.0)), 1.0), (4.0, None));
}

// An `Option` argument is data without `#[nodiff]`: no `Option` has a change, so matching on
// it is matching on forward-only data (it used to be classed as differentiated, and the
// `match` below was refused).
#[lens]
fn powered(x: f64, k: Option<i32>) -> f64 {
    match k {
        Some(k) => x.powi(k),
        None => x,
    }
}

#[test]
fn option_argument_is_data_without_nodiff() {
    for k in [None, Some(2), Some(3)] {
        ok(
            "powered",
            check_gradient(|x| powered(x, k), |x, d| powered_rev(x, k, d), 0.7, H),
        );
    }
    // d/dx x^3 at 0.7 exactly, and the identity's 1 when unset.
    assert!((powered_rev(0.7, Some(3), 1.0) - 3.0 * 0.49).abs() < 1e-12);
    assert_eq!(powered_rev(0.7, None, 1.0), 1.0);
}

// A block or branch whose only mention of a differentiated name is hidden by its own `let`
// computes forward-only data (it used to be taken for differentiated, and `powi` refused the
// exponent).
#[lens]
fn shadowed_in_block(y: f64) -> f64 {
    let k = {
        let y = 2;
        y + 1
    };
    y.powi(k)
}

#[lens]
fn shadowed_in_branch(y: f64) -> f64 {
    let k = if y > 1.0 {
        let y = 2;
        y + 1
    } else {
        2
    };
    y.powi(k)
}

#[test]
fn names_hidden_by_an_inner_let_are_data() {
    // y^3 and, on either side of 1, y^3 or y^2.
    assert!((shadowed_in_block_rev(0.5, 1.0) - 0.75).abs() < 1e-12);
    assert!((shadowed_in_branch_rev(0.5, 1.0) - 1.0).abs() < 1e-12);
    assert!((shadowed_in_branch_rev(1.5, 1.0) - 3.0 * 2.25).abs() < 1e-12);
    for y in [0.5, 1.5] {
        ok(
            "shadowed_in_branch",
            check_gradient(shadowed_in_branch, shadowed_in_branch_rev, y, H),
        );
    }
}

// `name_rev` runs the forward statements and the reverse sweep in one frame, not through
// `name_vjp`'s closure: the two must give the same changes, bit for bit, whatever the body
// holds (branches and a match, tuples, vectors, a local named `d`, data arguments).
#[test]
fn rev_in_one_frame_is_the_pullback_of_vjp() {
    for (x, n) in [(0.7, 0), (-0.4, 1), (0.3, 2)] {
        let (_, pb) = branches_vjp(x, n);
        assert_eq!(branches_rev(x, n, 1.3).to_bits(), pb(1.3).0.to_bits());
    }
    let (_, pb) = polar_vjp(1.5, 0.4);
    assert_eq!(polar_rev(1.5, 0.4, (0.2, -0.7)), pb((0.2, -0.7)));
    let x = SVector::<f64, 7>::from_fn(|i, _| i as f64 * 0.3 - 1.0);
    let (_, pb) = rosenbrock_vjp::<7>(x);
    assert_eq!(rosenbrock_rev::<7>(x, 0.9), pb(0.9));
    let (_, pb) = scaled_vjp(2.0, 3, true, 0.5);
    assert_eq!(scaled_rev(2.0, 3, true, 0.5, 1.5), pb(1.5).0);
    let cfg = Config {
        scale: 2.0,
        square: true,
    };
    let (_, pb) = configured_vjp(0.8, cfg, Some(3));
    assert_eq!(configured_rev(0.8, cfg, Some(3), 1.0), pb(1.0).0);
}

// The output change of `name_rev` is hygienic: the body's own `d` (here a function) still
// means what it means in the function as written (the one-frame `name_rev` once stopped this
// from compiling). A local named `__d`, which once replaced the change, is now refused as a
// reserved name (`tests/ui/lens/reserved_name.rs`).
fn d(n: usize) -> i32 {
    n as i32 + 1
}

#[lens]
fn calls_a_function_named_d(x: f64, n: usize) -> f64 {
    let k = d(n);
    x.powi(k)
}

#[test]
fn the_output_change_of_rev_is_hygienic() {
    // d/dx x^3 = 3x^2.
    let dx: f64 = calls_a_function_named_d_rev(0.5, 2, 1.0);
    assert_eq!(dx, 0.75);
}

// Valid forms beside this session's refusals (from the reviewer): an `impl Fn` argument
// that is data, a call of the function itself on data alone, and the path forms of the
// forward-only methods.
#[lens]
fn scaled_by(x: f64, #[nodiff] k: impl Fn(f64) -> f64) -> f64 {
    let c = k(2.0);
    x * x * c
}

#[lens]
fn times_own_constant(x: f64, #[nodiff] n: usize) -> f64 {
    let c = if n > 0 {
        times_own_constant(1.5, n - 1)
    } else {
        1.0
    };
    x * c
}

#[lens]
fn signed_square(x: f64) -> f64 {
    f64::signum(x) * x * x + f64::floor(x)
}

#[test]
fn data_forms_beside_the_refusals_compile_and_differentiate() {
    ok(
        "scaled_by",
        check_gradient(
            |x| scaled_by(x, |v| v * 0.5),
            |x, d| scaled_by_rev(x, |v| v * 0.5, d),
            3.0,
            H,
        ),
    );
    assert_eq!(scaled_by_rev(3.0, |v| v * 0.5, 1.0), 6.0);
    // c = 1.5^2 for n = 2: the value and the gradient in x.
    assert_eq!(times_own_constant(2.0, 2), 2.0 * 1.5 * 1.5);
    ok(
        "times_own_constant",
        check_gradient(
            |x| times_own_constant(x, 2),
            |x, d| times_own_constant_rev(x, 2, d),
            0.7,
            H,
        ),
    );
    // signum and floor carry no change: d/dx (sign(x) x^2 + floor(x)) = 2 |x|.
    assert_eq!(signed_square_rev(-1.3, 1.0), 2.6);
    ok(
        "signed_square",
        check_gradient(signed_square, signed_square_rev, 0.7, H),
    );
}

// A callee of twenty parameters (more than the sixteen a tuple pattern was kept for): its
// changes spread over the call's arguments, each weighted differently.
#[lens]
#[allow(clippy::too_many_arguments)]
fn wide20(
    a: f64,
    b: f64,
    c: f64,
    d: f64,
    e: f64,
    f: f64,
    g: f64,
    h: f64,
    i: f64,
    j: f64,
    k: f64,
    l: f64,
    m: f64,
    n: f64,
    o: f64,
    p: f64,
    q: f64,
    r: f64,
    s: f64,
    t: f64,
) -> f64 {
    a + 2.0 * b
        + 3.0 * c
        + 4.0 * d
        + 5.0 * e
        + 6.0 * f
        + 7.0 * g
        + 8.0 * h
        + 9.0 * i
        + 10.0 * j
        + 11.0 * k
        + 12.0 * l
        + 13.0 * m
        + 14.0 * n
        + 15.0 * o
        + 16.0 * p
        + 17.0 * q
        + 18.0 * r
        + 19.0 * s
        + t * t
}

#[lens]
fn calls_wide20(x: f64, y: f64) -> f64 {
    wide20(
        x,
        y,
        x * y,
        x,
        y,
        x,
        y,
        x,
        y,
        x,
        y,
        x,
        y,
        x,
        y,
        x,
        y,
        x.sin(),
        y,
        x * x,
    )
}

#[test]
fn a_callee_of_twenty_parameters() {
    let f = |(x, y): (f64, f64)| calls_wide20(x, y);
    let r = |(x, y): (f64, f64), d: f64| calls_wide20_rev(x, y, d);
    ok("calls_wide20", check_gradient(f, r, (0.7, -0.4), H));
}

// A borrowed `#[nodiff]` scalar as the receiver of a method of several operands (from a
// prober: "no reverse rule for this float method on `&f64`", with the help `r.&max(x)`).
#[lens]
fn borrowed_receivers(x: f64, #[nodiff] r: &f64, #[nodiff] s: &f64) -> f64 {
    r.max(x) + s.powf(x) + r.atan2(x * 2.0) + r.min(x * x)
}

#[test]
fn borrowed_nodiff_scalars_as_receivers() {
    let (r, s) = (0.3, 1.7);
    assert_eq!(
        borrowed_receivers(0.5, &r, &s),
        0.5 + 1.7_f64.powf(0.5) + 0.3_f64.atan2(1.0) + 0.25
    );
    // Above `r` and below it: both sides of `max`'s and `min`'s kinks.
    for x in [0.5, 0.1] {
        ok(
            "borrowed_receivers",
            check_gradient(
                |x| borrowed_receivers(x, &r, &s),
                |x, d| borrowed_receivers_rev(x, &r, &s, d),
                x,
                H,
            ),
        );
    }
}
