//! `#[lens]`: every construct's generated reverse derivative against central finite
//! differences (f64), plus the generated lens types. Generated code must not warn.
#![deny(warnings)]

use paralens::prelude::*;
use paralens::{check_gradient, fns};

mod common;
use common::{H, ok};

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

// ---- The function as written through its rules: the forms a reviewer found broken ----
/// The function as written runs each differentiated operation through its rule
/// (`value_of(match (a, b) { (x, y) => rule(x, y) })`): the forms a reviewer found broken by
/// that rewrite, each checked for its value against `_vjp` and its reverse against central
/// finite differences. They compiled and were right before the rewrite, and must stay so.
mod function_as_written {

    use crate::common::{H, TOL};
    use paralens::prelude::*;
    use paralens::{GradCheck, check_gradient, fns};

    type V3 = SVector<f64, 3>;

    fn check(name: &str, r: &GradCheck, written: f64, generated: f64) {
        assert!(r.passes(TOL), "{name}: {r}");
        assert!(
            (written - generated).abs() <= 1e-12 * written.abs().max(1.0),
            "{name}: as written {written}, _vjp {generated}"
        );
    }

    /// [`check`] at `x`: the reverse `rev` against central finite differences of `f` (the
    /// function as written), and `f`'s value against `vjp`'s.
    fn check_at<X: paralens::Flat<f64>>(
        name: &str,
        f: impl Fn(X) -> f64,
        rev: impl Fn(X, f64) -> X,
        vjp: impl Fn(X) -> f64,
        x: X,
    ) {
        let r = check_gradient(&f, rev, x.clone(), H);
        check(name, &r, f(x.clone()), vjp(x));
    }

    // Path forms whose first argument is an operation or a cast: the receiver is cloned as a
    // whole (`Clone::clone(&(x * 2.0))`, not `Clone::clone(&x) * 2.0`), and the operations in the
    // arguments are rewritten too.
    #[lens]
    fn path_min(x: f64, y: f64) -> f64 {
        f64::min(x * 2.0, y)
    }

    #[lens]
    fn path_sqrt<T: Real>(x: T, y: T) -> T {
        T::sqrt(x * x + y * y)
    }

    #[lens]
    fn path_cast(x: f64, n: usize) -> f64 {
        f64::powf(n as f64, x)
    }

    #[lens]
    fn path_exp(x: f64, y: f64) -> f64 {
        f64::exp(x - y) + f64::max(x.sin() * y, 0.1)
    }

    #[test]
    fn path_forms_with_operations_in_their_arguments() {
        for (x, y) in [(0.3, 0.9), (0.7, 0.2)] {
            let f = |(x, y): (f64, f64)| path_min(x, y);
            let r = check_gradient(f, |(x, y), d| path_min_rev(x, y, d), (x, y), H);
            check("path_min", &r, path_min(x, y), path_min_vjp(x, y).0);
            let f = |(x, y): (f64, f64)| path_sqrt(x, y);
            let r = check_gradient(f, |(x, y), d| path_sqrt_rev(x, y, d), (x, y), H);
            check("path_sqrt", &r, path_sqrt(x, y), path_sqrt_vjp(x, y).0);
            let r = check_gradient(|x| path_cast(x, 3), |x, d| path_cast_rev(x, 3, d), x, H);
            check("path_cast", &r, path_cast(x, 3), path_cast_vjp(x, 3).0);
            let f = |(x, y): (f64, f64)| path_exp(x, y);
            let r = check_gradient(f, |(x, y), d| path_exp_rev(x, y, d), (x, y), H);
            check("path_exp", &r, path_exp(x, y), path_exp_vjp(x, y).0);
        }
    }

    // A rewritten method at the start of a block's value, followed by an index: the rewrite
    // starts with a call, so `[0]` indexes its value (a block there would end the statement).
    #[lens]
    fn entry_of_product(v: V3, w: V3) -> f64 {
        v.component_mul(&w)[0]
    }

    #[lens]
    fn entry_in_branch(v: V3, w: V3, k: usize) -> f64 {
        if k > 0 {
            v.component_mul(&w)[1]
        } else {
            w.sum()
        }
    }

    #[lens]
    fn entry_of_transpose(m: SMatrix<f64, 2, 3>) -> f64 {
        m.transpose()[(2, 1)] * m[(0, 1)]
    }

    #[test]
    fn an_index_after_a_rewritten_method() {
        let (v, w) = (V3::new(0.5, -1.5, 2.0), V3::new(1.25, 0.75, -0.5));
        let f = |(v, w): (V3, V3)| entry_of_product(v, w);
        let r = check_gradient(f, |(v, w), d| entry_of_product_rev(v, w, d), (v, w), H);
        check(
            "entry_of_product",
            &r,
            entry_of_product(v, w),
            entry_of_product_vjp(v, w).0,
        );
        for k in [0, 1] {
            let f = |(v, w): (V3, V3)| entry_in_branch(v, w, k);
            let r = check_gradient(f, |(v, w), d| entry_in_branch_rev(v, w, k, d), (v, w), H);
            check(
                "entry_in_branch",
                &r,
                entry_in_branch(v, w, k),
                entry_in_branch_vjp(v, w, k).0,
            );
        }
        let m = SMatrix::<f64, 2, 3>::new(0.5, -1.0, 2.0, 1.5, 0.25, -0.75);
        let r = check_gradient(entry_of_transpose, entry_of_transpose_rev, m, H);
        check(
            "entry_of_transpose",
            &r,
            entry_of_transpose(m),
            entry_of_transpose_vjp(m).0,
        );
    }

    // A method's other operand whose type comes from the method's parameter (`k.into()`,
    // `Default::default()`): the rules of methods keep one impl, so it is still inferred.
    #[lens]
    fn inferred_operands(x: f64, k: i32, #[nodiff] c: f32) -> f64 {
        x.powf(k.into()) + x.max(Default::default()) + x.atan2(c.into()) + x.hypot(c.into())
    }

    #[test]
    fn operands_inferred_from_the_method() {
        for x in [0.4, 1.7] {
            let r = check_gradient(
                |x| inferred_operands(x, 3, 0.5),
                |x, d| inferred_operands_rev(x, 3, 0.5, d),
                x,
                H,
            );
            check(
                "inferred_operands",
                &r,
                inferred_operands(x, 3, 0.5),
                inferred_operands_vjp(x, 3, 0.5).0,
            );
        }
    }

    // An operand of `+ - * /` from forward-only data whose type nothing fixes (`c.into()`,
    // `Default::default()`): the rules of `+` and `-` add values of one type, so it takes the
    // other operand's; those of `*` and `/` scale, so it takes the other's scalar type. Plain Rust
    // refuses `x + c.into()` as ambiguous; `#[lens]` refused it in each of its three functions,
    // with suggestions that could not be written (`x +: (_, _) c.into()`).
    #[lens]
    fn inferred_summands(x: f64, #[nodiff] c: f32) -> f64 {
        let mut acc = c.into() - x * x;
        acc -= c.into();
        acc += Default::default();
        x + c.into() + acc
    }

    #[lens]
    fn inferred_vector_summand(v: V3, #[nodiff] w: [f64; 3]) -> f64 {
        (v - w.into()).norm_squared()
    }

    #[lens]
    fn inferred_factors(x: f64, v: V3, #[nodiff] c: f32) -> f64 {
        let s = x * c.into() / c.into();
        let w = c.into() * v * s / c.into();
        (v * c.into()).dot(&w) + s * s
    }

    #[test]
    fn factors_inferred_from_the_other_operand() {
        let v = V3::new(0.3, 0.7, -1.1);
        let (x, c) = (0.8, 2.5_f32);
        check_at(
            "inferred_factors",
            |(x, v)| inferred_factors(x, v, c),
            |(x, v), d| inferred_factors_rev(x, v, c, d),
            |(x, v)| inferred_factors_vjp(x, v, c).0,
            (x, v),
        );
        // s = x, w = x v: 2.5 x |v|^2 + x^2
        let expected = 2.5 * x * v.norm_squared() + x * x;
        assert!((inferred_factors(x, v, c) - expected).abs() < 1e-12);
    }

    #[test]
    fn summands_inferred_from_the_other_operand() {
        for x in [0.4, -1.7] {
            check_at(
                "inferred_summands",
                |x| inferred_summands(x, 0.5),
                |x, d| inferred_summands_rev(x, 0.5, d),
                |x| inferred_summands_vjp(x, 0.5).0,
                x,
            );
            // 0.5 - x^2 - 0.5 + 0 + x + 0.5
            assert!((inferred_summands(x, 0.5) - (0.5 + x - x * x)).abs() < 1e-12);
        }
        let w = [1.0, -2.0, 0.5];
        let v = V3::new(0.3, 0.7, -1.1);
        check_at(
            "inferred_vector_summand",
            |v| inferred_vector_summand(v, w),
            |v, d| inferred_vector_summand_rev(v, w, d),
            |v| inferred_vector_summand_vjp(v, w).0,
            v,
        );
    }

    // `map` keeps its value's type: a heap matrix stays one (it has no `map` of its own; as
    // written, `v.map(f)` went through `Deref` to `SMatrix::map` and returned a static matrix),
    // and a scalar maps (`f64` has no `map` method at all).
    #[lens]
    fn squared(x: f64) -> f64 {
        x * x
    }

    #[lens]
    fn map_heap(v: HeapMatrix<f64, 4, 1>) -> HeapMatrix<f64, 4, 1> {
        v.map(squared)
    }

    #[lens]
    fn map_scalar(x: f64) -> f64 {
        x.map(squared) * 2.0
    }

    #[test]
    fn map_keeps_its_value_type() {
        let h = HeapMatrix::<f64, 4, 1>::from_fn(|i, _| i as f64 + 0.5);
        let ones = HeapMatrix::<f64, 4, 1>::from_fn(|_, _| 1.0);
        let value = map_heap(h.clone());
        let grad = map_heap_rev(h.clone(), ones);
        for i in 0..4 {
            let x = h[(i, 0)];
            assert_eq!(value[(i, 0)], x * x);
            assert!(
                (grad[(i, 0)] - 2.0 * x).abs() < 1e-12,
                "entry {i}: {}",
                grad[(i, 0)]
            );
        }
        let r = check_gradient(map_scalar, map_scalar_rev, 0.7, H);
        check("map_scalar", &r, map_scalar(0.7), map_scalar_vjp(0.7).0);
    }

    // A heap matrix scaled and reduced: `h * s`, `s * h`, `h / s` and the reductions have rules
    // (they had none: `h.sum()` was "no reverse rule for this reduction", and `h * 2.0` a
    // product of two heap matrices after inference).
    #[lens]
    fn heap_reduced(h: HeapMatrix<f64, 3, 2>, #[nodiff] c: f32) -> f64 {
        let g = 2.0 * h.map(squared) * 0.5 / c.into();
        g.sum() + h.norm() * h.mean() - h.max() * h.min() + h.norm_squared()
    }

    #[test]
    fn heap_matrices_scale_and_reduce() {
        let h = HeapMatrix::<f64, 3, 2>::from_fn(|i, j| (i as f64 * 0.7 - j as f64 * 1.3).sin());
        check_at(
            "heap_reduced",
            |h| heap_reduced(h, 1.5),
            |h, d| heap_reduced_rev(h, 1.5, d),
            |h| heap_reduced_vjp(h, 1.5).0,
            h.clone(),
        );
        let s = SMatrix::<f64, 3, 2>::from_fn(|i, j| h[(i, j)]);
        let expected = s.map(|x| x * x).sum() / 1.5 + s.norm() * s.mean() - s.max() * s.min()
            + s.norm_squared();
        assert!((heap_reduced(h, 1.5) - expected).abs() < 1e-12);
    }

    // Products of heap matrices, by `gemm` into pooled blocks: a layer of any size written with
    // `#[lens]` (there was no rule: `w * x` of two heap matrices was refused).
    #[lens]
    fn heap_layer(
        w: HeapMatrix<f64, 3, 4>,
        x: HeapMatrix<f64, 4, 2>,
        #[nodiff] v: HeapMatrix<f64, 2, 1>,
    ) -> f64 {
        let h = w * x;
        let y = h.map(squared) * v;
        y.sum() + h.norm()
    }

    #[test]
    fn heap_matrices_multiply() {
        let w = HeapMatrix::<f64, 3, 4>::from_fn(|i, j| (i as f64 * 0.7 - j as f64 * 0.3).sin());
        let x = HeapMatrix::<f64, 4, 2>::from_fn(|i, j| (i as f64 * 0.2 + j as f64 * 1.1).cos());
        let v = HeapMatrix::<f64, 2, 1>::from_fn(|i, _| 0.5 - i as f64);
        check_at(
            "heap_layer",
            |(w, x)| heap_layer(w, x, v.clone()),
            |(w, x), d| heap_layer_rev(w, x, v.clone(), d),
            |(w, x)| heap_layer_vjp(w, x, v.clone()).0,
            (w.clone(), x.clone()),
        );
        let h = *w * *x;
        let expected = (h.map(|a| a * a) * *v).sum() + h.norm();
        assert!((heap_layer(w, x, v) - expected).abs() < 1e-12);
    }

    // A heap layer that transposes its weights and takes inner products of heap matrices
    // (`transpose` and `dot` had rules for static matrices only: `w.transpose() * x` and
    // `p.dot(&q)` of heap matrices were refused).
    #[lens]
    fn heap_transposed_layer(
        w: HeapMatrix<f64, 4, 3>,
        x: HeapMatrix<f64, 4, 2>,
        #[nodiff] r: HeapMatrix<f64, 3, 2>,
    ) -> f64 {
        let h = w.transpose() * x.clone();
        let q = h.transpose();
        let back = x.transpose() * w.transpose().transpose() * w.transpose();
        h.dot(&r) + h.dot(&h) * 0.5 + q.dot(&q.clone()) - x.transpose().dot(&back)
    }

    #[test]
    fn heap_matrices_transpose_and_dot() {
        let w = HeapMatrix::<f64, 4, 3>::from_fn(|i, j| (i as f64 * 0.7 - j as f64 * 0.3).sin());
        let x = HeapMatrix::<f64, 4, 2>::from_fn(|i, j| (i as f64 * 0.2 + j as f64 * 1.1).cos());
        let r = HeapMatrix::<f64, 3, 2>::from_fn(|i, j| 0.5 - i as f64 + j as f64 * 0.25);
        check_at(
            "heap_transposed_layer",
            |(w, x)| heap_transposed_layer(w, x, r.clone()),
            |(w, x), d| heap_transposed_layer_rev(w, x, r.clone(), d),
            |(w, x)| heap_transposed_layer_vjp(w, x, r.clone()).0,
            (w.clone(), x.clone()),
        );
        let (sw, sx) = (*w, *x);
        let h = sw.transpose() * sx;
        let back = sx.transpose() * sw * sw.transpose();
        let expected = h.dot(&r) + h.dot(&h) * 0.5 + h.transpose().dot(&h.transpose())
            - sx.transpose().dot(&back);
        assert!((heap_transposed_layer(w, x, r) - expected).abs() < 1e-12);
    }

    // Forward-only operands on either side of `+ - * /` of heap matrices and scalars: the sweep
    // runs the one-sided rules (`w * x` with a `#[nodiff]` input computes `d x^T` and not the
    // input's change).
    #[lens]
    fn heap_fixed_operands(
        w: HeapMatrix<f64, 3, 4>,
        s: f64,
        #[nodiff] x: HeapMatrix<f64, 4, 2>,
        #[nodiff] a: HeapMatrix<f64, 2, 3>,
        #[nodiff] c: HeapMatrix<f64, 3, 2>,
        #[nodiff] k: f64,
    ) -> f64 {
        let h = w * x;
        let g = a * h.clone();
        let p = h.clone() + c.clone();
        let e = h.clone() - c.clone();
        let q = c.clone() - h;
        let r = p * k + k * q.map(squared) + e / k;
        let t = c * s;
        g.norm_squared() + (r / k).norm_squared() + t.sum() * s
    }

    #[test]
    fn heap_fixed_operands_take_one_sided_rules() {
        let w = HeapMatrix::<f64, 3, 4>::from_fn(|i, j| (i as f64 * 0.7 - j as f64 * 0.3).sin());
        let x = HeapMatrix::<f64, 4, 2>::from_fn(|i, j| (i as f64 * 0.2 + j as f64 * 1.1).cos());
        let a = HeapMatrix::<f64, 2, 3>::from_fn(|i, j| 0.3 * i as f64 - 0.2 * j as f64 + 0.1);
        let c = HeapMatrix::<f64, 3, 2>::from_fn(|i, j| 0.5 - i as f64 + j as f64 * 0.25);
        let k = 1.7;
        let f = |(w, s): (HeapMatrix<f64, 3, 4>, f64)| {
            heap_fixed_operands(w, s, x.clone(), a.clone(), c.clone(), k)
        };
        check_at(
            "heap_fixed_operands",
            f,
            |(w, s), d| heap_fixed_operands_rev(w, s, x.clone(), a.clone(), c.clone(), k, d),
            |(w, s)| heap_fixed_operands_vjp(w, s, x.clone(), a.clone(), c.clone(), k).0,
            (w.clone(), 0.6),
        );
        let (sw, sx, sa, sc) = (*w, *x, *a, *c);
        let h = sw * sx;
        let r = (h + sc) * k + (sc - h).map(|v| v * v) * k + (h - sc) / k;
        let expected = (sa * h).norm_squared() + (r / k).norm_squared() + (sc * 0.6).sum() * 0.6;
        assert!((f((w, 0.6)) - expected).abs() < 1e-12);
    }

    // Forward-only matrices that a method borrows (`h.dot(&k)`, `k.dot(&h)`, `component_mul`,
    // `component_div`) stay the caller's: a heap one was moved into the rule (`k.sum()` after it
    // did not compile), and a borrowed receiver (`k: &SMatrix`) was refused.
    #[lens]
    fn borrowed_by_methods(
        h: HeapMatrix<f64, 2, 3>,
        s: SMatrix<f64, 2, 3>,
        #[nodiff] k: HeapMatrix<f64, 2, 3>,
        #[nodiff] r: &HeapMatrix<f64, 2, 3>,
        #[nodiff] q: &SMatrix<f64, 2, 3>,
    ) -> f64 {
        // Forward-only scaling of heap matrices (`HeapMatrix` had no `*` or `/` by a scalar).
        let k2 = (k.transpose().transpose() * 4.0 + 2.0 * k.clone()) / 6.0;
        let a = h.dot(&k) + k.dot(&h) + h.dot(&k2) + (k2 - h.clone()).norm_squared();
        let b = r.dot(&h) + h.dot(r) + h.component_mul(&k).sum() + k.component_mul(&h).sum();
        let c = q.dot(&s) + s.component_div(q).sum() + q.component_div(&s).sum();
        a + b + c + k.sum() + r.sum()
    }

    #[test]
    fn forward_only_matrices_borrowed_by_methods_stay_the_callers() {
        let h = HeapMatrix::<f64, 2, 3>::from_fn(|i, j| (i as f64 * 0.7 - j as f64 * 0.3).sin());
        let s = SMatrix::<f64, 2, 3>::from_fn(|i, j| 1.5 + (i as f64 * 0.2 + j as f64).cos());
        let k = HeapMatrix::<f64, 2, 3>::from_fn(|i, j| 0.3 * i as f64 - 0.2 * j as f64 + 0.1);
        let r = HeapMatrix::<f64, 2, 3>::from_fn(|i, j| 0.5 - i as f64 + j as f64 * 0.25);
        let q = SMatrix::<f64, 2, 3>::from_fn(|i, j| 2.0 + i as f64 - 0.5 * j as f64);
        let f = |(h, s): (HeapMatrix<f64, 2, 3>, SMatrix<f64, 2, 3>)| {
            borrowed_by_methods(h, s, k.clone(), &r, &q)
        };
        check_at(
            "borrowed_by_methods",
            f,
            |(h, s), d| borrowed_by_methods_rev(h, s, k.clone(), &r, &q, d),
            |(h, s)| borrowed_by_methods_vjp(h, s, k.clone(), &r, &q).0,
            (h.clone(), s),
        );
        let (sh, sk, sr) = (*h, *k, *r);
        let expected = 3.0 * sh.dot(&sk)
            + (sk - sh).norm_squared()
            + 2.0 * sr.dot(&sh)
            + 2.0 * sh.component_mul(&sk).sum()
            + q.dot(&s)
            + s.component_div(&q).sum()
            + q.component_div(&s).sum()
            + sk.sum()
            + sr.sum();
        assert!((f((h, s)) - expected).abs() < 1e-12);
    }

    // Borrowed data as an operand of `+ - * /` (`#[nodiff] w: &HeapMatrix` in `w * x`): read as
    // an owned value, as a method's borrowed operand is. It was two errors, the first at a later
    // `.sum()` ("no reverse rule for this reduction of `&HeapMatrix`").
    #[lens]
    fn borrowed_operands(
        x: SVector<f64, 4>,
        y: f64,
        #[nodiff] w: &HeapMatrix<f64, 3, 4>,
        #[nodiff] q: &SMatrix<f64, 3, 4>,
        #[nodiff] b: &SVector<f64, 3>,
        #[nodiff] k: &f64,
    ) -> f64 {
        let h = w * x;
        let s = (q * x - b) * y + b * y;
        let t = (b - s) / k;
        h.norm_squared() * k + s.dot(&t) + (y * k - k) / (k + y * y) + w.sum()
    }

    #[test]
    fn borrowed_data_operands_of_operators() {
        let w = HeapMatrix::<f64, 3, 4>::from_fn(|i, j| (i as f64 * 0.7 + j as f64 * 0.3).sin());
        let q = SMatrix::<f64, 3, 4>::from_fn(|i, j| 0.5 - i as f64 * 0.2 + (j as f64).cos());
        let b = SVector::<f64, 3>::new(0.2, -1.0, 0.5);
        let k = 1.7;
        let x = SVector::<f64, 4>::new(0.3, -0.5, 0.8, 1.1);
        let f = |(x, y): (SVector<f64, 4>, f64)| borrowed_operands(x, y, &w, &q, &b, &k);
        check_at(
            "borrowed_operands",
            f,
            |(x, y), d| borrowed_operands_rev(x, y, &w, &q, &b, &k, d),
            |(x, y)| borrowed_operands_vjp(x, y, &w, &q, &b, &k).0,
            (x, 0.6),
        );
        let y = 0.6;
        let h = *w * x;
        let s = (q * x - b) * y + b * y;
        let t = (b - s) / k;
        let expected = h.norm_squared() * k + s.dot(&t) + (y * k - k) / (k + y * y) + w.sum();
        assert!((f((x, y)) - expected).abs() < 1e-12);
    }

    // Entry-wise `abs` of a heap matrix (there was no rule: one error, with rustc's garbled
    // help `h.*abs()`), beside the static one's.
    #[lens]
    fn heap_abs(h: HeapMatrix<f64, 3, 2>, s: SMatrix<f64, 3, 2>) -> f64 {
        let a = h.abs();
        let b = (h * 2.0).abs();
        a.sum() + b.norm_squared() + s.abs().dot(&s)
    }

    #[test]
    fn heap_matrices_abs() {
        let h = HeapMatrix::<f64, 3, 2>::from_fn(|i, j| (i as f64 * 1.3 - j as f64 * 0.7).sin());
        let s = SMatrix::<f64, 3, 2>::from_fn(|i, j| 0.4 - i as f64 * 0.5 + j as f64 * 0.3);
        check_at(
            "heap_abs",
            |(h, s)| heap_abs(h, s),
            |(h, s), d| heap_abs_rev(h, s, d),
            |(h, s)| heap_abs_vjp(h, s).0,
            (h.clone(), s),
        );
        let sh = *h;
        let expected = sh.abs().sum() + (sh * 2.0).abs().norm_squared() + s.abs().dot(&s);
        assert!((heap_abs(h.clone(), s) - expected).abs() < 1e-12);
        // At an entry of 0 the change is 0 (the subgradient), as for scalars.
        let z = HeapMatrix::<f64, 3, 2>::from_fn(|i, j| if (i, j) == (1, 0) { 0.0 } else { 1.0 });
        let (dz, _) = heap_abs_rev(z, s, 1.0);
        assert_eq!(dz[(1, 0)], 0.0);
        assert_eq!(dz[(0, 0)], 1.0 + 8.0);
    }

    // Heap weights on a static input give a heap value; `to_static` makes it the `SVector` that
    // static code takes, `to_heap` the way back (a reviewer found no way to write either).
    #[lens]
    fn heap_then_static(w: HeapMatrix<f64, 3, 4>, b: SVector<f64, 3>, x: SVector<f64, 4>) -> f64 {
        let h = tanh(to_static(w * x) + b);
        let g = to_heap(h * 2.0);
        g.norm_squared() + h.sum()
    }

    #[test]
    fn heap_values_to_static_and_back() {
        let w = HeapMatrix::<f64, 3, 4>::from_fn(|i, j| (i as f64 * 0.9 - j as f64 * 0.4).sin());
        let b = SVector::<f64, 3>::new(0.1, -0.3, 0.2);
        let x = SVector::<f64, 4>::new(0.5, -0.2, 0.7, 0.1);
        check_at(
            "heap_then_static",
            |(w, b, x)| heap_then_static(w, b, x),
            |(w, b, x), d| heap_then_static_rev(w, b, x, d),
            |(w, b, x)| heap_then_static_vjp(w, b, x).0,
            (w.clone(), b, x),
        );
        let h = (*w * x + b).map(f64::tanh);
        let expected = (h * 2.0).norm_squared() + h.sum();
        assert!((heap_then_static(w, b, x) - expected).abs() < 1e-12);
    }

    // `component_div` of heap matrices (there was no rule: the static one's, refused), with both
    // operands differentiated, one of them forward-only on either side (its one-sided forms), an
    // operand divided by itself, and in forward-only code (`HeapMatrix::component_div`, a heap
    // block, where nalgebra's through `Deref` gave a static matrix).
    #[lens]
    fn heap_quotients(
        a: HeapMatrix<f64, 2, 3>,
        b: HeapMatrix<f64, 2, 3>,
        #[nodiff] k: HeapMatrix<f64, 2, 3>,
    ) -> f64 {
        let both = a.component_div(&b).sum();
        let left = a.component_div(&k).norm_squared();
        let right = k.component_div(&b).dot(&a);
        let own = b.component_div(&b).sum();
        let data: HeapMatrix<f64, 2, 3> = k.component_div(&k);
        both + left + right + own * data.sum()
    }

    #[test]
    fn heap_component_quotients() {
        let a = HeapMatrix::<f64, 2, 3>::from_fn(|i, j| (i as f64 * 0.7 - j as f64 * 0.3).sin());
        let b = HeapMatrix::<f64, 2, 3>::from_fn(|i, j| 1.5 + (i as f64 * 0.2 + j as f64).cos());
        let k = HeapMatrix::<f64, 2, 3>::from_fn(|i, j| 0.8 + 0.3 * i as f64 - 0.2 * j as f64);
        let f = |(a, b): (HeapMatrix<f64, 2, 3>, HeapMatrix<f64, 2, 3>)| {
            heap_quotients(a, b, k.clone())
        };
        check_at(
            "heap_quotients",
            f,
            |(a, b), d| heap_quotients_rev(a, b, k.clone(), d),
            |(a, b)| heap_quotients_vjp(a, b, k.clone()).0,
            (a.clone(), b.clone()),
        );
        let (sa, sb, sk) = (*a, *b, *k);
        let expected = sa.component_div(&sb).sum()
            + sa.component_div(&sk).norm_squared()
            + sk.component_div(&sb).dot(&sa)
            + 6.0 * 6.0;
        assert!((f((a, b)) - expected).abs() < 1e-12);
    }

    // Static weights times a heap batch (there was no rule: one error at the operator), with the
    // batch differentiated and forward-only, and in forward-only code.
    #[lens]
    fn static_weights_heap_batch(
        w: SMatrix<f64, 3, 4>,
        x: HeapMatrix<f64, 4, 2>,
        #[nodiff] v: SMatrix<f64, 2, 4>,
        #[nodiff] z: HeapMatrix<f64, 4, 2>,
    ) -> f64 {
        let h = w * x;
        let g = w * z.clone();
        let fixed = v * z;
        h.norm_squared() + g.sum() * fixed.sum()
    }

    #[test]
    fn static_weights_times_a_heap_batch() {
        let w = SMatrix::<f64, 3, 4>::from_fn(|i, j| (i as f64 * 0.7 - j as f64 * 0.3).sin());
        let x = HeapMatrix::<f64, 4, 2>::from_fn(|i, j| (i as f64 * 0.2 + j as f64 * 1.1).cos());
        let v = SMatrix::<f64, 2, 4>::from_fn(|i, j| 0.3 * i as f64 - 0.2 * j as f64 + 0.1);
        let z = HeapMatrix::<f64, 4, 2>::from_fn(|i, j| 0.5 - i as f64 + j as f64 * 0.25);
        let f = |(w, x): (SMatrix<f64, 3, 4>, HeapMatrix<f64, 4, 2>)| {
            static_weights_heap_batch(w, x, v, z.clone())
        };
        check_at(
            "static_weights_heap_batch",
            f,
            |(w, x), d| static_weights_heap_batch_rev(w, x, v, z.clone(), d),
            |(w, x)| static_weights_heap_batch_vjp(w, x, v, z.clone()).0,
            (w, x.clone()),
        );
        let (sx, sz) = (*x, *z);
        let expected = (w * sx).norm_squared() + (w * sz).sum() * (v * sz).sum();
        assert!((f((w, x)) - expected).abs() < 1e-12);
    }

    // Heap weights times a static input (there was no rule: one error at the operator), with
    // the input differentiated and forward-only (a `#[param]`-like weight and one example), and in
    // forward-only code.
    #[lens]
    fn heap_weights_static_input(
        w: HeapMatrix<f64, 3, 4>,
        x: SVector<f64, 4>,
        #[nodiff] k: HeapMatrix<f64, 3, 4>,
        #[nodiff] e: SMatrix<f64, 4, 2>,
    ) -> f64 {
        let h = w.clone() * x;
        let g = w * e;
        let fixed = k * e;
        h.norm_squared() + g.sum() * fixed.sum()
    }

    #[test]
    fn heap_weights_times_a_static_input() {
        let w = HeapMatrix::<f64, 3, 4>::from_fn(|i, j| (i as f64 * 0.7 - j as f64 * 0.3).sin());
        let x = SVector::<f64, 4>::from_fn(|i, _| (i as f64 * 0.2 + 1.1).cos());
        let k = HeapMatrix::<f64, 3, 4>::from_fn(|i, j| 0.3 * i as f64 - 0.2 * j as f64 + 0.1);
        let e = SMatrix::<f64, 4, 2>::from_fn(|i, j| 0.5 - i as f64 + j as f64 * 0.25);
        let f = |(w, x): (HeapMatrix<f64, 3, 4>, SVector<f64, 4>)| {
            heap_weights_static_input(w, x, k.clone(), e)
        };
        check_at(
            "heap_weights_static_input",
            f,
            |(w, x), d| heap_weights_static_input_rev(w, x, k.clone(), e, d),
            |(w, x)| heap_weights_static_input_vjp(w, x, k.clone(), e).0,
            (w.clone(), x),
        );
        let (sw, sk) = (*w, *k);
        let expected = (sw * x).norm_squared() + (sw * e).sum() * (sk * e).sum();
        assert!((f((w, x)) - expected).abs() < 1e-12);
    }

    // A heap matrix times itself (the square's rule) and products in forward-only code: of two
    // `#[nodiff]` matrices, and in a condition (`HeapMatrix` had no `*` of its own).
    #[lens]
    fn heap_square_and_data(
        w: HeapMatrix<f64, 3, 3>,
        #[nodiff] a: HeapMatrix<f64, 3, 4>,
        #[nodiff] b: HeapMatrix<f64, 4, 3>,
    ) -> f64 {
        let c = a * b;
        let s = w * w;
        if (s.clone() * c.clone()).sum() > 0.0 {
            (s * c).norm_squared()
        } else {
            s.sum()
        }
    }

    #[test]
    fn heap_squares_and_forward_only_products() {
        let w = HeapMatrix::<f64, 3, 3>::from_fn(|i, j| 0.4 + i as f64 * 0.3 - j as f64 * 0.2);
        let b = HeapMatrix::<f64, 4, 3>::from_fn(|i, j| (0.3 * i as f64 - j as f64).cos());
        // `a` and `-a`: the condition takes each branch once.
        let mut taken = [false; 2];
        for sign in [1.0, -1.0] {
            let a =
                HeapMatrix::<f64, 3, 4>::from_fn(|i, j| sign * (i as f64 + 0.5 * j as f64).sin());
            check_at(
                "heap_square_and_data",
                |w| heap_square_and_data(w, a.clone(), b.clone()),
                |w, d| heap_square_and_data_rev(w, a.clone(), b.clone(), d),
                |w| heap_square_and_data_vjp(w, a.clone(), b.clone()).0,
                w.clone(),
            );
            let (s, c) = (*w * *w, *a * *b);
            let first = (s * c).sum() > 0.0;
            taken[usize::from(first)] = true;
            let expected = if first {
                (s * c).norm_squared()
            } else {
                s.sum()
            };
            assert!((heap_square_and_data(w.clone(), a, b.clone()) - expected).abs() < 1e-12);
        }
        assert_eq!(taken, [true, true]);
    }

    // Scaling by the scalar type of a generic function: the rules of `m * s`, `s * m` and `m / s`
    // are generic over `T: Real` (they were written for `f32` and `f64` only, so a generic
    // `v * s` had no rule).
    #[lens]
    fn scaled_generic<T: Real>(v: SVector<T, 3>, #[nodiff] s: T) -> T {
        (v * s / s * s).sum() + (s * v).norm()
    }

    #[lens]
    fn scaled_heap_generic<T: Real>(h: HeapMatrix<T, 3, 2>, #[nodiff] s: T) -> T {
        (h.clone() * s / s * s).sum() + (s * h).norm()
    }

    #[test]
    fn generic_scaling_has_rules() {
        let v = V3::new(0.3, -0.7, 1.1);
        check_at(
            "scaled_generic",
            |v| scaled_generic(v, 1.5),
            |v, d| scaled_generic_rev(v, 1.5, d),
            |v| scaled_generic_vjp(v, 1.5).0,
            v,
        );
        assert!((scaled_generic(v, 1.5) - (1.5 * v.sum() + 1.5 * v.norm())).abs() < 1e-12);
        let h = HeapMatrix::<f64, 3, 2>::from_fn(|i, j| (i as f64 - j as f64 * 0.4).cos());
        check_at(
            "scaled_heap_generic",
            |h| scaled_heap_generic(h, -0.5),
            |h, d| scaled_heap_generic_rev(h, -0.5, d),
            |h| scaled_heap_generic_vjp(h, -0.5).0,
            h,
        );
    }

    // A learned slope (PReLU): `leaky_relu(h, a)` with `a` differentiated, on a scalar, a static
    // vector and a heap matrix. The slope's change was `()`, and a differentiated slope an error
    // at `#[lens]` ("expected `&f64`, found `&()`").
    #[lens]
    fn prelu(x: SVector<f64, 4>, a: f64, h: HeapMatrix<f64, 2, 3>, b: f64) -> f64 {
        leaky_relu(x, a).sum() * a + leaky_relu(h, b).norm_squared() + leaky_relu(b - 1.0, a)
    }

    #[test]
    fn learned_slopes_of_leaky_relu() {
        let x = SVector::<f64, 4>::new(0.3, -0.5, 0.8, -1.1);
        // No entry at the kink (0), where finite differences straddle two slopes.
        let h =
            HeapMatrix::<f64, 2, 3>::from_fn(|i, j| (i as f64 * 1.3 - j as f64 * 0.7 + 0.2).sin());
        check_at(
            "prelu",
            |(x, a, h, b)| prelu(x, a, h, b),
            |(x, a, h, b), d| prelu_rev(x, a, h, b, d),
            |(x, a, h, b)| prelu_vjp(x, a, h, b).0,
            (x, 0.2, h.clone(), 0.4),
        );
        // The slope's change by hand, for the vector alone: the negative entries.
        let (dx, da) = fns::leaky_relu_rev(x, 0.2, SVector::repeat(1.0));
        assert_eq!(da, -0.5 - 1.1);
        assert_eq!(dx, SVector::<f64, 4>::new(1.0, 0.2, 1.0, 0.2));
    }
}
