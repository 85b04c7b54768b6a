//! Every primitive reverse rule against central finite differences in f64.
//!
//! Each test states the analytic derivative in a comment; `check_gradient` compares the
//! rule's pullback with the numeric Jacobian entry by entry.

use nalgebra::{SMatrix, SVector};
use paralens::rules::activation as act;
use paralens::rules::*;
use paralens::{GradCheck, check_gradient};

const H: f64 = 1e-6;
const TOL: f64 = 1e-7;

fn assert_ok(name: &str, r: GradCheck) {
    assert!(r.passes(TOL), "{name}: {r}");
}

/// Checks a binary rule `rule(x, y)` at several points.
fn binary<X, Y, Z, P>(name: &str, rule: impl Fn(X, Y) -> (Z, P) + Copy, points: &[(X, Y)])
where
    X: paralens::Flat<f64>,
    Y: paralens::Flat<f64>,
    Z: paralens::Flat<f64>,
    P: FnOnce(Z) -> (X, Y),
{
    for p in points {
        let r = check_gradient(
            |(x, y): (X, Y)| rule(x, y).0,
            |(x, y): (X, Y), d: Z| rule(x, y).1(d),
            p.clone(),
            H,
        );
        assert_ok(name, r);
    }
}

/// Checks a unary rule at several points.
fn unary<X, Z, P>(name: &str, rule: impl Fn(X) -> (Z, P) + Copy, points: &[X])
where
    X: paralens::Flat<f64>,
    Z: paralens::Flat<f64>,
    P: FnOnce(Z) -> X,
{
    for p in points {
        assert_ok(
            name,
            check_gradient(|x| rule(x).0, |x, d| rule(x).1(d), p.clone(), H),
        );
    }
}

const PTS: [(f64, f64); 4] = [(1.3, -0.7), (-2.0, 0.5), (0.25, 3.0), (4.0, 1.5)];

#[test]
fn scalar_arithmetic() {
    // d(x+y) = (1, 1); d(x-y) = (1, -1); d(xy) = (y, x); d(x/y) = (1/y, -x/y^2)
    binary("add", AddRule::add_vjp, &PTS);
    binary("sub", SubRule::sub_vjp, &PTS);
    binary("mul", MulRule::mul_vjp, &PTS);
    binary("div", DivRule::div_vjp, &PTS);
    // d(-x) = -1
    unary("neg", NegRule::neg_vjp, &[1.5, -0.3]);
}

#[test]
fn scalar_functions() {
    let pos = [0.3, 1.0, 2.7];
    let any = [-1.9, -0.4, 0.6, 2.2];
    unary("exp", ExpRule::exp_vjp, &any); // e^x
    unary("ln", LnRule::ln_vjp, &pos); // 1/x
    unary("sqrt", SqrtRule::sqrt_vjp, &pos); // 1/(2 sqrt x)
    unary("sin", SinRule::sin_vjp, &any); // cos x
    unary("cos", CosRule::cos_vjp, &any); // -sin x
    unary("tanh", TanhRule::tanh_vjp, &any); // 1 - tanh^2
    unary("abs", AbsRule::abs_vjp, &any); // sign x (away from 0)
    unary("recip", RecipRule::recip_vjp, &any); // -1/x^2
    for n in [0, 1, 2, 3, -2] {
        unary("powi", |x: f64| x.powi_vjp(n), &any); // n x^(n-1)
    }
    // d x^a = (a x^(a-1), x^a ln x)
    binary(
        "powf",
        PowfRule::powf_vjp,
        &[(1.5, 2.3), (0.4, -1.2), (2.0, 0.5)],
    );
    // max/min: the change goes to the chosen operand (points away from ties)
    binary("max", MaxRule::max_vjp, &PTS);
    binary("min", MinRule::min_vjp, &PTS);
}

#[test]
fn kinks_take_the_documented_subgradient() {
    assert_eq!(0.0_f64.abs_vjp().1(1.0), 0.0);
    assert_eq!(2.0_f64.max_vjp(2.0).1(1.0), (1.0, 0.0));
    assert_eq!(2.0_f64.min_vjp(2.0).1(1.0), (1.0, 0.0));
    assert_eq!(act::relu(0.0_f64).1(1.0), 0.0);
    // NaN is propagated, never hidden as 0, so a NaN input shows up in the loss.
    assert!(act::relu(f64::NAN).0.is_nan());
    // x^a at x <= 0 has no real derivative in a: the rule returns 0 there, not NaN.
    assert_eq!((-1.0_f64).powf_vjp(2.0).1(1.0).1, 0.0);
}

fn m<const R: usize, const C: usize>(seed: f64) -> SMatrix<f64, R, C> {
    SMatrix::from_fn(|i, j| ((i * 7 + j * 3) as f64 * 0.37 + seed).sin() * 1.5)
}

#[test]
fn matrix_products_and_sums() {
    // (A B): dA = D B^T, dB = A^T D
    binary(
        "mat*mat",
        MulRule::mul_vjp,
        &[(m::<3, 4>(0.1), m::<4, 2>(0.7))],
    );
    binary(
        "mat*vec",
        MulRule::mul_vjp,
        &[(m::<3, 4>(0.2), m::<4, 1>(0.9))],
    );
    // scaling: d(M s) = (s D, <M, D>)
    binary("mat*s", MulRule::mul_vjp, &[(m::<2, 3>(0.3), 1.7)]);
    binary("s*mat", MulRule::mul_vjp, &[(-0.8, m::<2, 3>(0.4))]);
    binary("mat/s", DivRule::div_vjp, &[(m::<2, 3>(0.5), 1.3)]);
    binary(
        "mat+mat",
        AddRule::add_vjp,
        &[(m::<2, 2>(0.1), m::<2, 2>(0.2))],
    );
    binary(
        "mat-mat",
        SubRule::sub_vjp,
        &[(m::<2, 2>(0.1), m::<2, 2>(0.2))],
    );
    unary("-mat", NegRule::neg_vjp, &[m::<3, 1>(0.6)]);
    unary("transpose", transpose, &[m::<2, 3>(0.6)]); // D^T
    binary("dot", dot, &[(m::<4, 1>(0.1), m::<4, 1>(1.1))]); // (d b, d a)
    binary(
        "component_mul",
        component_mul,
        &[(m::<2, 3>(0.1), m::<2, 3>(1.1))],
    );
    unary("sum", sum, &[m::<3, 2>(0.8)]); // all ones
}

fn heap<const R: usize, const C: usize>(seed: f64) -> paralens::HeapMatrix<f64, R, C> {
    paralens::HeapMatrix::from_matrix(&m::<R, C>(seed))
}

#[test]
fn heap_matrix_scaling_and_reductions() {
    // The rules of a static matrix, on a heap one: d(M s) = (s D, <M, D>), d(M / s) =
    // (D / s, -<M, D> / s^2).
    binary("heap*s", MulRule::mul_vjp, &[(heap::<3, 4>(0.3), 1.7)]);
    binary("s*heap", MulRule::mul_vjp, &[(-0.8, heap::<3, 4>(0.4))]);
    binary("heap/s", DivRule::div_vjp, &[(heap::<3, 4>(0.5), 1.3)]);
    // |M|: D M / |M|; |M|^2: 2 D M; sum: D everywhere; mean: D / (R C); max and min: D at
    // that entry (the points have distinct entries).
    unary("heap.norm", Reduce::norm_vjp, &[heap::<3, 4>(0.6)]);
    unary(
        "heap.norm_squared",
        Reduce::norm_squared_vjp,
        &[heap::<3, 4>(0.6)],
    );
    unary("heap.sum", Reduce::sum_vjp, &[heap::<3, 4>(0.8)]);
    unary("heap.mean", Reduce::mean_vjp, &[heap::<3, 4>(0.8)]);
    unary("heap.max", Reduce::max_vjp, &[heap::<3, 4>(0.9)]);
    unary("heap.min", Reduce::min_vjp, &[heap::<3, 4>(0.9)]);
    // The same values as the static matrix's rules.
    let (a, s) = (m::<3, 4>(0.2), 1.9);
    let h = heap::<3, 4>(0.2);
    assert_eq!(*MulRule::mul_vjp(h.clone(), s).0, MulRule::mul_vjp(a, s).0);
    assert_eq!(*DivRule::div_vjp(h.clone(), s).0, DivRule::div_vjp(a, s).0);
    assert_eq!(Reduce::norm_vjp(h.clone()).0, Reduce::norm_vjp(a).0);
    assert_eq!(Reduce::max_vjp(h.clone()).0, Reduce::max_vjp(a).0);
    // At the origin the norm's change is zero, not NaN.
    let zero = paralens::HeapMatrix::<f64, 2, 2>::zeros();
    assert_eq!(
        *Reduce::norm_vjp(zero).1(1.0),
        SMatrix::<f64, 2, 2>::zeros()
    );
}

/// The one-sided forms of a binary rule, `$left` (only `x` differentiated) and `$right`
/// (only `y`): each change against finite differences with the other operand fixed, and
/// equal to the two-sided rule's value and change.
macro_rules! sides {
    ($name:expr, $tr:ident :: $full:ident, $left:ident, $right:ident, $x:expr, $y:expr, $d:expr) => {{
        let (x, y, d) = ($x, $y, $d);
        unary(
            concat!($name, ", left"),
            |a| $tr::$left(a, y.clone()),
            std::slice::from_ref(&x),
        );
        unary(
            concat!($name, ", right"),
            |b| $tr::$right(x.clone(), b),
            std::slice::from_ref(&y),
        );
        let (v, pb) = $tr::$full(x.clone(), y.clone());
        let (vl, pbl) = $tr::$left(x.clone(), y.clone());
        let (vr, pbr) = $tr::$right(x.clone(), y.clone());
        let (dx, dy) = pb(d.clone());
        assert!(v == vl && v == vr, "{}: one-sided values differ", $name);
        assert!(pbl(d.clone()) == dx, "{}: left change differs", $name);
        assert!(pbr(d) == dy, "{}: right change differs", $name);
    }};
}

#[test]
fn one_sided_rules() {
    // Where one operand of `+ - * /` is forward-only data, the sweep runs the rule's
    // one-sided form, which skips the other change's work (for heap and static products, a
    // whole matrix product).
    sides!(
        "scalar +",
        AddRule::add_vjp,
        add_vjp_left,
        add_vjp_right,
        1.3,
        -0.7,
        0.9
    );
    sides!(
        "scalar -",
        SubRule::sub_vjp,
        sub_vjp_left,
        sub_vjp_right,
        1.3,
        -0.7,
        0.9
    );
    sides!(
        "scalar *",
        MulRule::mul_vjp,
        mul_vjp_left,
        mul_vjp_right,
        1.3,
        -0.7,
        0.9
    );
    sides!(
        "scalar /",
        DivRule::div_vjp,
        div_vjp_left,
        div_vjp_right,
        1.3,
        -0.7,
        0.9
    );
    let (a, b, d) = (m::<3, 4>(0.1), m::<4, 2>(0.7), m::<3, 2>(0.4));
    sides!(
        "static product",
        MulRule::mul_vjp,
        mul_vjp_left,
        mul_vjp_right,
        a,
        b,
        d
    );
    let (a, b, d) = (m::<3, 2>(0.1), m::<3, 2>(0.7), m::<3, 2>(0.4));
    sides!(
        "static -",
        SubRule::sub_vjp,
        sub_vjp_left,
        sub_vjp_right,
        a,
        b,
        d
    );
    let (a, b, d) = (heap::<3, 4>(0.1), heap::<4, 2>(0.7), heap::<3, 2>(0.4));
    sides!(
        "heap product",
        MulRule::mul_vjp,
        mul_vjp_left,
        mul_vjp_right,
        a,
        b,
        d
    );
    let (a, b, d) = (heap::<3, 2>(0.1), heap::<3, 2>(0.7), heap::<3, 2>(0.4));
    sides!(
        "heap +",
        AddRule::add_vjp,
        add_vjp_left,
        add_vjp_right,
        a.clone(),
        b.clone(),
        d.clone()
    );
    sides!(
        "heap -",
        SubRule::sub_vjp,
        sub_vjp_left,
        sub_vjp_right,
        a.clone(),
        b,
        d.clone()
    );
    sides!(
        "heap * s",
        MulRule::mul_vjp,
        mul_vjp_left,
        mul_vjp_right,
        a.clone(),
        1.7,
        d.clone()
    );
    sides!(
        "s * heap",
        MulRule::mul_vjp,
        mul_vjp_left,
        mul_vjp_right,
        -0.8,
        a.clone(),
        d.clone()
    );
    sides!(
        "heap / s",
        DivRule::div_vjp,
        div_vjp_left,
        div_vjp_right,
        a,
        1.3,
        d
    );
}

#[test]
fn static_times_heap_product() {
    // Static weights times a heap batch: (D B^T, A^T D), the weights' change static; the
    // same values and changes as the static rule, and its one-sided forms.
    binary(
        "static*heap",
        MulRule::mul_vjp,
        &[(m::<3, 4>(0.1), heap::<4, 2>(0.7))],
    );
    let (a, b, d) = (m::<3, 4>(0.1), heap::<4, 2>(0.7), heap::<3, 2>(0.4));
    sides!(
        "static*heap",
        MulRule::mul_vjp,
        mul_vjp_left,
        mul_vjp_right,
        a,
        b.clone(),
        d.clone()
    );
    let (y, pb) = MulRule::mul_vjp(a, b);
    let (sy, spb) = MulRule::mul_vjp(a, m::<4, 2>(0.7));
    assert!((*y - sy).amax() < 1e-12);
    let ((da, db), (sda, sdb)) = (pb(d), spb(m::<3, 2>(0.4)));
    assert!((da - sda).amax() < 1e-12 && (*db - sdb).amax() < 1e-12);
}

#[test]
fn heap_times_static_product() {
    // Heap weights times a static input: (D B^T, A^T D), the input's change static; the
    // same values and changes as the static rule, and its one-sided forms.
    binary(
        "heap*static",
        MulRule::mul_vjp,
        &[(heap::<3, 4>(0.1), m::<4, 2>(0.7))],
    );
    let (a, b, d) = (heap::<3, 4>(0.1), m::<4, 2>(0.7), heap::<3, 2>(0.4));
    sides!(
        "heap*static",
        MulRule::mul_vjp,
        mul_vjp_left,
        mul_vjp_right,
        a.clone(),
        b,
        d.clone()
    );
    let (y, pb) = MulRule::mul_vjp(a, b);
    let (sy, spb) = MulRule::mul_vjp(m::<3, 4>(0.1), b);
    assert!((*y - sy).amax() < 1e-12);
    let ((da, db), (sda, sdb)) = (pb(d), spb(m::<3, 2>(0.4)));
    assert!((*da - sda).amax() < 1e-12 && (db - sdb).amax() < 1e-12);
    // The plain product of forward-only code, a heap block.
    let p: paralens::HeapMatrix<f64, 3, 2> = heap::<3, 4>(0.1) * b;
    assert!((*p - m::<3, 4>(0.1) * b).amax() < 1e-12);
}

#[test]
fn heap_transpose_and_dot() {
    // The static matrices' rules on heap ones: transpose: D^T; dot: (d b, d a); a dot
    // product with itself: 2 d a.
    unary("heap transpose", transpose, &[heap::<2, 3>(0.6)]);
    binary("heap dot", dot, &[(heap::<4, 3>(0.1), heap::<4, 3>(1.1))]);
    unary("heap dot_self", dot_self, &[heap::<4, 3>(0.3)]);
    // A borrowed operand gets the same change, and the values and changes equal the static
    // rules'.
    let (a, b) = (heap::<4, 3>(0.1), heap::<4, 3>(1.1));
    let (v, pb) = dot(a.clone(), &b);
    let (sv, spb) = dot(m::<4, 3>(0.1), m::<4, 3>(1.1));
    assert!((v - sv).abs() < 1e-12);
    let ((da, db), (sda, sdb)) = (pb(0.7), spb(0.7));
    assert!((*da - sda).amax() < 1e-12 && (*db - sdb).amax() < 1e-12);
    let (t, tpb) = transpose(a.clone());
    let (st, stpb) = transpose(m::<4, 3>(0.1));
    assert!((*t - st).amax() < 1e-12);
    let d = m::<3, 4>(0.9);
    assert!((*tpb(paralens::HeapMatrix::from_matrix(&d)) - stpb(d)).amax() < 1e-12);
}

/// The one-sided forms of a method's rule (`left(a, b)`: `b` forward-only, the change of
/// `a` alone; `right`: the change of `b` alone) against central finite differences, and equal
/// to the halves of the two-sided rule `full`.
#[allow(clippy::too_many_arguments)]
fn method_sides<X, Z, P, PL, PR>(
    name: &str,
    full: impl Fn(X, X) -> (Z, P) + Copy,
    left: impl Fn(X, X) -> (Z, PL) + Copy,
    right: impl Fn(X, X) -> (Z, PR) + Copy,
    x: X,
    y: X,
    d: Z,
) where
    X: paralens::Flat<f64> + PartialEq + core::fmt::Debug,
    Z: paralens::Flat<f64> + PartialEq + core::fmt::Debug,
    P: FnOnce(Z) -> (X, X),
    PL: FnOnce(Z) -> X,
    PR: FnOnce(Z) -> X,
{
    unary(
        &format!("{name}, left"),
        |a| left(a, y.clone()),
        std::slice::from_ref(&x),
    );
    unary(
        &format!("{name}, right"),
        |b| right(x.clone(), b),
        std::slice::from_ref(&y),
    );
    let (v, pb) = full(x.clone(), y.clone());
    let (vl, pbl) = left(x.clone(), y.clone());
    let (vr, pbr) = right(x, y);
    assert_eq!(v, vl, "{name}: left value");
    assert_eq!(v, vr, "{name}: right value");
    let (dx, dy) = pb(d.clone());
    assert_eq!(pbl(d.clone()), dx, "{name}: left change");
    assert_eq!(pbr(d), dy, "{name}: right change");
}

#[test]
fn component_quotients_and_one_sided_methods() {
    // a ⊘ b: (D ⊘ b, -D ∘ a ⊘ b^2), static and heap (the divisor's entries are 0.27 to 1.5
    // from zero), the heap rule equal to the static one.
    binary(
        "component_div",
        |a, b: SMatrix<f64, 2, 3>| component_div(a, b),
        &[(m::<2, 3>(0.3), m::<2, 3>(1.1))],
    );
    binary(
        "heap component_div",
        |a, b: paralens::HeapMatrix<f64, 2, 3>| component_div(a, b),
        &[(heap::<2, 3>(0.3), heap::<2, 3>(1.1))],
    );
    let divisor = heap::<2, 3>(1.1);
    let (q, pb) = component_div(heap::<2, 3>(0.3), &divisor);
    let (sq, spb) = component_div(m::<2, 3>(0.3), m::<2, 3>(1.1));
    assert!((*q - sq).amax() < 1e-12);
    let ((da, db), (sda, sdb)) = (pb(heap::<2, 3>(0.8)), spb(m::<2, 3>(0.8)));
    assert!((*da - sda).amax() < 1e-12 && (*db - sdb).amax() < 1e-12);
    // One operand forward-only (`w.dot(&x)`, `x.component_div(&w)` with `#[nodiff] x`):
    // the sweep runs the one-sided form, whose pullback computes one change.
    method_sides(
        "dot",
        |a: SMatrix<f64, 2, 3>, b| a.dot_vjp(b),
        |a: SMatrix<f64, 2, 3>, b| a.dot_vjp_left(b),
        |a: SMatrix<f64, 2, 3>, b| a.dot_vjp_right(b),
        m::<2, 3>(0.1),
        m::<2, 3>(1.1),
        0.7,
    );
    method_sides(
        "component_mul",
        component_mul,
        |a: SMatrix<f64, 2, 3>, b: SMatrix<f64, 2, 3>| a.component_mul_vjp_left(b),
        |a: SMatrix<f64, 2, 3>, b: SMatrix<f64, 2, 3>| a.component_mul_vjp_right(b),
        m::<2, 3>(0.1),
        m::<2, 3>(1.1),
        m::<2, 3>(0.6),
    );
    method_sides(
        "component_div",
        component_div,
        |a: SMatrix<f64, 2, 3>, b: SMatrix<f64, 2, 3>| a.component_div_vjp_left(b),
        |a: SMatrix<f64, 2, 3>, b: SMatrix<f64, 2, 3>| a.component_div_vjp_right(b),
        m::<2, 3>(0.1),
        m::<2, 3>(1.1),
        m::<2, 3>(0.6),
    );
    method_sides(
        "heap dot",
        |a: paralens::HeapMatrix<f64, 2, 3>, b| a.dot_vjp(b),
        |a: paralens::HeapMatrix<f64, 2, 3>, b| a.dot_vjp_left(b),
        |a: paralens::HeapMatrix<f64, 2, 3>, b| a.dot_vjp_right(b),
        heap::<2, 3>(0.1),
        heap::<2, 3>(1.1),
        0.7,
    );
    method_sides(
        "heap component_mul",
        component_mul,
        |a: paralens::HeapMatrix<f64, 2, 3>, b: paralens::HeapMatrix<f64, 2, 3>| {
            a.component_mul_vjp_left(b)
        },
        |a: paralens::HeapMatrix<f64, 2, 3>, b: paralens::HeapMatrix<f64, 2, 3>| {
            a.component_mul_vjp_right(b)
        },
        heap::<2, 3>(0.1),
        heap::<2, 3>(1.1),
        heap::<2, 3>(0.6),
    );
    method_sides(
        "heap component_div",
        component_div,
        |a: paralens::HeapMatrix<f64, 2, 3>, b: paralens::HeapMatrix<f64, 2, 3>| {
            a.component_div_vjp_left(b)
        },
        |a: paralens::HeapMatrix<f64, 2, 3>, b: paralens::HeapMatrix<f64, 2, 3>| {
            a.component_div_vjp_right(b)
        },
        heap::<2, 3>(0.1),
        heap::<2, 3>(1.1),
        heap::<2, 3>(0.6),
    );
}

#[test]
fn heap_matrix_products() {
    // (A B): dA = D B^T, dB = A^T D, by `gemm` with each micro-kernel this CPU has; the
    // values and changes equal to the static matrices' rule (checked above).
    let mut ran = 0;
    for kernel in paralens::gemm::Kernel::ALL {
        let done = paralens::gemm::with_kernel(kernel, || {
            binary(
                "heap*heap",
                MulRule::mul_vjp,
                &[(heap::<3, 4>(0.1), heap::<4, 2>(0.7))],
            );
            binary(
                "heap*heap vector",
                MulRule::mul_vjp,
                &[(heap::<5, 6>(0.2), heap::<6, 1>(0.4))],
            );
            // A square one times itself: D A^T + A^T D, one change.
            unary("heap square", SquareRule::square_vjp, &[heap::<3, 3>(0.2)]);
            let (sq, sq_pb) = SquareRule::square_vjp(m::<3, 3>(0.2));
            let (hsq, hsq_pb) = SquareRule::square_vjp(heap::<3, 3>(0.2));
            assert!((*hsq - sq).amax() < 1e-12, "heap square under {kernel:?}");
            let dsq = m::<3, 3>(0.6);
            let hd = paralens::HeapMatrix::from_matrix(&dsq);
            assert!((*hsq_pb(hd) - sq_pb(dsq)).amax() < 1e-12);
            let (a, b) = (m::<20, 24>(0.3), m::<24, 17>(0.9));
            let d = m::<20, 17>(0.5);
            let (y, pb) = MulRule::mul_vjp(a, b);
            let (hy, hpb) = MulRule::mul_vjp(heap::<20, 24>(0.3), heap::<24, 17>(0.9));
            let close = |got: &SMatrix<f64, 20, 17>, want: &SMatrix<f64, 20, 17>| {
                (got - want).amax() < 1e-12
            };
            assert!(close(&hy, &y), "heap product under {kernel:?}");
            let ((da, db), (hda, hdb)) = (pb(d), hpb(paralens::HeapMatrix::from_matrix(&d)));
            assert!((*hda - da).amax() < 1e-12, "heap dA under {kernel:?}");
            assert!((*hdb - db).amax() < 1e-12, "heap dB under {kernel:?}");
        });
        match done {
            Some(()) => ran += 1,
            None => println!("SKIPPED  heap products, {kernel:?} kernel: this CPU lacks it"),
        }
    }
    assert!(ran > 0, "no gemm kernel ran");
}

#[test]
fn activations() {
    let pts = [-2.1, -0.3, 0.4, 1.7];
    unary("relu", act::relu, &pts); // [x > 0]
    unary("leaky_relu", |x| act::leaky_relu(x, 0.1), &pts); // 1 or 0.1
    unary("sigmoid", act::sigmoid, &pts); // s (1 - s)
    unary("tanh", act::tanh, &pts); // 1 - t^2
    unary("softplus", act::softplus, &[-30.0, -2.1, 0.4, 25.0]); // sigmoid(x)
    unary("gelu", act::gelu, &pts);
    let v = SVector::<f64, 5>::new(0.3, -1.2, 2.5, 0.0, 0.9);
    unary("softmax", act::softmax, &[v, v * 40.0]); // y ∘ (d - <y, d>)
    unary("log_softmax", act::log_softmax, &[v, v * 40.0]); // d - softmax sum d
}

#[test]
fn softmax_and_softplus_do_not_overflow() {
    let big = SVector::<f64, 3>::new(1000.0, 999.0, -1000.0);
    let (y, _) = act::softmax(big);
    assert!(y.iter().all(|v| v.is_finite()));
    assert!((y.sum() - 1.0).abs() < 1e-12);
    let (l, _) = act::log_softmax(big);
    assert!(l.iter().all(|v| v.is_finite()));
    assert_eq!(act::softplus(1000.0_f64).0, 1000.0);
    assert!(act::sigmoid(-1000.0_f64).0 >= 0.0);
}

#[test]
fn rules_also_run_in_f32() {
    let (y, pb) = 2.0_f32.mul_vjp(3.0);
    assert_eq!((y, pb(1.0)), (6.0, (3.0, 2.0)));
    let (y, pb) = act::sigmoid(0.0_f32);
    assert_eq!((y, pb(1.0)), (0.5, 0.25));
}

#[test]
fn squares() {
    // d(x^2) = 2x; d<a, a> = 2a; d(a ∘ a) = 2 a ∘ d; d(A A) = D A^T + A^T D
    unary("square", SquareRule::square_vjp, &[1.3, -0.4]);
    unary("mat square", SquareRule::square_vjp, &[m::<3, 3>(0.2)]);
    unary("dot_self", dot_self, &[m::<4, 1>(0.3)]);
    unary("component_square", component_square, &[m::<2, 3>(0.3)]);
    // Past 32 entries the pullback scales in the other order (`entrywise::mul_scaled`).
    unary(
        "component_square, 42 entries",
        component_square,
        &[m::<6, 7>(0.3)],
    );
}
