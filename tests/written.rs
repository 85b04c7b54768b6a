//! The function as written runs each differentiated operation through its rule
//! (`value_of(match (a, b) { (x, y) => rule(x, y) })`): the forms a reviewer found broken by
//! that rewrite, each checked for its value against `_vjp` and its reverse against central
//! finite differences. They compiled and were right before the rewrite, and must stay so.

use paralens::prelude::*;
use paralens::{GradCheck, check_gradient, fns};

type V3 = SVector<f64, 3>;

const H: f64 = 1e-6;
const TOL: f64 = 1e-7;

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
    let expected =
        s.map(|x| x * x).sum() / 1.5 + s.norm() * s.mean() - s.max() * s.min() + s.norm_squared();
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
    let expected =
        h.dot(&r) + h.dot(&h) * 0.5 + h.transpose().dot(&h.transpose()) - sx.transpose().dot(&back);
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
    let f =
        |(a, b): (HeapMatrix<f64, 2, 3>, HeapMatrix<f64, 2, 3>)| heap_quotients(a, b, k.clone());
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
        let a = HeapMatrix::<f64, 3, 4>::from_fn(|i, j| sign * (i as f64 + 0.5 * j as f64).sin());
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
    let h = HeapMatrix::<f64, 2, 3>::from_fn(|i, j| (i as f64 * 1.3 - j as f64 * 0.7 + 0.2).sin());
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
