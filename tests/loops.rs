//! Differentiated `for` loops over ranges bounded by a constant: loop-carried bindings, the
//! reverse running the iterations backwards, `..=`, `.rev()`, `.step_by(k)`, const generic
//! and `const` item bounds, nested loops, branches inside loops, values read from outside,
//! and loops inside `para!`. Every gradient is checked against central finite differences in
//! f64. Generated code must not warn.
#![deny(warnings)]
#![allow(clippy::assign_op_pattern, clippy::needless_range_loop)]

use core::ops::Add;
use paralens::prelude::*;
use paralens::{GradCheck, check_gradient};

const H: f64 = 1e-6;
const TOL: f64 = 1e-7;

fn ok(name: &str, r: GradCheck) {
    assert!(r.passes(TOL), "{name}: {r}");
}

/// A function of a 4-vector and its `_rev`.
type Checked = (fn(V4) -> f64, fn(V4, f64) -> V4);

/// Each function of `table` against finite differences at `x`.
fn all_ok(x: V4, table: &[(&str, Checked)]) {
    for (name, (f, rev)) in table {
        ok(name, check_gradient(f, rev, x, H));
    }
}

// The loop that used to be refused: x + x^2 + x^3; d = 1 + 2x + 3x^2.
#[lens]
fn sum_of_powers(x: f64) -> f64 {
    let mut acc = 0.0;
    for k in 1..4 {
        acc = acc + x.powi(k);
    }
    acc
}

#[test]
fn sum_of_powers_matches_its_derivative() {
    let x = 0.7;
    assert!((sum_of_powers(x) - (x + x * x + x * x * x)).abs() < 1e-12);
    let d = sum_of_powers_rev(x, 1.0);
    assert!((d - (1.0 + 2.0 * x + 3.0 * x * x)).abs() < 1e-12, "{d}");
    ok(
        "sum_of_powers",
        check_gradient(sum_of_powers, sum_of_powers_rev, x, H),
    );
}

// A float literal's binding carried into a method call, its type known by then (from an
// earlier operation with `x`, or from the loop's first statement): the loop's type probe
// (`lens-macros/src/analyse/probes.rs`) is a closure never called, and the code is unchanged.
#[lens]
fn typed_before_the_loop(x: f64) -> f64 {
    let mut acc = 0.0;
    acc = acc + x;
    for _i in 0..3 {
        acc = acc.cos() + x;
    }
    acc
}

#[lens]
fn typed_in_the_loop(x: f64) -> f64 {
    let mut acc = 1.0;
    for _i in 0..3 {
        acc = acc * x;
        acc = acc.sin();
    }
    acc
}

#[test]
fn literal_bindings_typed_before_their_method_calls() {
    for x in [0.7_f64, -0.3, 1.9] {
        let (mut a, mut b) = (x, 1.0_f64);
        for _ in 0..3 {
            a = a.cos() + x;
            b = (b * x).sin();
        }
        assert!((typed_before_the_loop(x) - a).abs() < 1e-12);
        assert!((typed_in_the_loop(x) - b).abs() < 1e-12);
        for (name, f, rev) in [
            (
                "typed_before_the_loop",
                typed_before_the_loop as Scalar,
                typed_before_the_loop_rev as ScalarRev,
            ),
            (
                "typed_in_the_loop",
                typed_in_the_loop,
                typed_in_the_loop_rev,
            ),
        ] {
            ok(name, check_gradient(f, rev, x, H));
        }
    }
}

/// A function of one `f64` and its reverse, for tables of them.
type Scalar = fn(f64) -> f64;
type ScalarRev = fn(f64, f64) -> f64;

// Names the loops' type probes must leave alone (a reviewer's reproducers, each refused by
// the first version of the probes): a loop variable hiding a literal's binding, a nested
// loop's variable hiding it, a trait's method with a generic operand, a turbofish.
#[lens]
fn loop_variable_hides_a_literal(x: f64) -> f64 {
    let k = 2;
    let mut y = x * (k as f64);
    for k in 0..3u32 {
        y = y * x + (k.pow(2) as f64);
    }
    y
}

#[lens]
fn nested_loop_variable_hides_a_literal(x: f64) -> f64 {
    let mut acc = 0.0;
    let mut s = x;
    for _i in 0..2 {
        for acc in 0..2usize {
            s = s * (acc.min(1) as f64 + 0.5);
        }
        acc = acc + s;
    }
    acc
}

#[lens]
fn trait_method_of_a_literal(x: f64) -> f64 {
    let mut c = 1.0;
    c = c * 2.0_f64;
    let mut y = x;
    for _i in 0..2 {
        c = c.add(1.0);
        y = y * x * c;
    }
    y
}

trait Times {
    fn times<const K: i32>(self) -> Self;
}

impl Times for f64 {
    fn times<const K: i32>(self) -> f64 {
        self * f64::from(K)
    }
}

#[lens]
fn turbofish_on_a_literal(x: f64) -> f64 {
    let mut c = 1.0;
    c = c * 2.0_f64;
    let mut y = x;
    for _i in 0..2 {
        c = c.times::<2>();
        y = y * x * c;
    }
    y
}

#[test]
fn probes_leave_other_bindings_and_methods_alone() {
    let x = 1.5_f64;
    // Values against the same arithmetic written out.
    let mut y = x * 2.0;
    for k in 0..3_u32 {
        y = y * x + f64::from(k * k);
    }
    assert!((loop_variable_hides_a_literal(x) - y).abs() < 1e-12);
    let (mut acc, mut s) = (0.0_f64, x);
    for _ in 0..2 {
        s = s * 0.5 * 1.5;
        acc += s;
    }
    assert!((nested_loop_variable_hides_a_literal(x) - acc).abs() < 1e-12);
    let (mut c, mut y) = (2.0_f64, x);
    for _ in 0..2 {
        c += 1.0;
        y = y * x * c;
    }
    assert!((trait_method_of_a_literal(x) - y).abs() < 1e-12);
    let (mut c, mut y) = (2.0_f64, x);
    for _ in 0..2 {
        c *= 2.0;
        y = y * x * c;
    }
    assert!((turbofish_on_a_literal(x) - y).abs() < 1e-12);
    let table: [(&str, Scalar, ScalarRev); 4] = [
        (
            "loop_variable_hides_a_literal",
            loop_variable_hides_a_literal,
            loop_variable_hides_a_literal_rev,
        ),
        (
            "nested_loop_variable_hides_a_literal",
            nested_loop_variable_hides_a_literal,
            nested_loop_variable_hides_a_literal_rev,
        ),
        (
            "trait_method_of_a_literal",
            trait_method_of_a_literal,
            trait_method_of_a_literal_rev,
        ),
        (
            "turbofish_on_a_literal",
            turbofish_on_a_literal,
            turbofish_on_a_literal_rev,
        ),
    ];
    for x in [0.7_f64, -1.2, 1.5] {
        for (name, f, rev) in table {
            ok(name, check_gradient(f, rev, x, H));
        }
    }
}

// A carried value that feeds on itself: x_{k+1} = sin(x_k) * w, N times.
#[lens]
fn iterate_map<const N: usize>(x: f64, w: f64) -> f64 {
    let mut h = x;
    for _ in 0..N {
        h = h.sin() * w;
    }
    h
}

#[test]
fn carried_value_through_const_generic_trip_count() {
    let f = |(x, w): (f64, f64)| iterate_map::<5>(x, w);
    let r = |(x, w): (f64, f64), d: f64| iterate_map_rev::<5>(x, w, d);
    for p in [(0.4, 1.3), (-1.1, 0.8), (2.0, -0.9)] {
        ok("iterate_map", check_gradient(f, r, p, H));
    }
    // Zero iterations: the identity in x, nothing in w.
    assert_eq!(iterate_map_rev::<0>(0.4, 1.3, 1.0), (1.0, 0.0));
}

const STEPS: usize = 6;

// Two carried values, `+=` and `*=`, a `const` item bound, the counter used as data, and a
// value from outside (`a`) read in every iteration.
#[lens]
fn two_carried(x: f64, a: f64) -> f64 {
    let mut s = x;
    let mut p = 1.0;
    for i in 0..STEPS {
        let c = i as f64 * 0.25;
        s += a * p + c;
        p *= s.tanh();
    }
    s * p
}

#[test]
fn two_carried_bindings_and_an_outside_value() {
    let f = |(x, a): (f64, f64)| two_carried(x, a);
    let r = |(x, a): (f64, f64), d: f64| two_carried_rev(x, a, d);
    for p in [(0.3, 0.5), (-0.7, 1.2), (1.4, -0.3)] {
        ok("two_carried", check_gradient(f, r, p, H));
    }
}

// `..=`, `.rev()` and `.step_by(k)`: the counter's values decide the weights, so a wrong
// order or count of iterations changes the value and the derivative.
#[lens]
fn ranges(x: f64) -> (f64, f64, f64) {
    let mut a = x;
    for k in 1..=3 {
        a = a * x + k as f64;
    }
    let mut b = x;
    for k in (0..4).rev() {
        b = (b + k as f64) * x;
    }
    let mut c = 0.0;
    for k in (0..9).step_by(3) {
        c = c * x + (k as f64) * x;
    }
    (a, b, c)
}

#[test]
fn inclusive_reversed_and_stepped_ranges() {
    let x: f64 = 0.6;
    let (a, b, c) = ranges(x);
    // The same loops written out.
    let ea = ((x * x + 1.0) * x + 2.0) * x + 3.0;
    let eb = ((((x + 3.0) * x + 2.0) * x + 1.0) * x) * x;
    let ec = ((0.0 * x) * x + 3.0 * x) * x + 6.0 * x;
    assert!((a - ea).abs() < 1e-12 && (b - eb).abs() < 1e-12 && (c - ec).abs() < 1e-12);
    ok("ranges", check_gradient(ranges, ranges_rev, x, H));
    ok("ranges", check_gradient(ranges, ranges_rev, -1.3, H));
}

// A stepped range is double-ended only where the range under it has an exact size (not
// `0..=N`, nor `a..b` of `i64`): the reverse finds its counters by `nth` where the others
// run `rev()`.
#[lens]
fn stepped_inclusive<const N: usize>(x: f64, v: SVector<f64, 7>) -> f64 {
    let mut d = x;
    for k in (0..=N).step_by(3) {
        d = d * x + (k as f64) * x * x + v[k];
    }
    let mut s = 0.0;
    for k in (1..=N).step_by(2) {
        s = s + v[k] * v[k - 1] * k as f64;
    }
    d + s
}

#[test]
fn stepped_inclusive_ranges() {
    let x: f64 = 0.7;
    let v = SVector::<f64, 7>::from_fn(|i, _| 0.3 - 0.4 * i as f64);
    // k = 0, 3, 6, then k = 1, 3, 5.
    let mut d = x;
    for k in [0usize, 3, 6] {
        d = d * x + (k as f64) * x * x + v[k];
    }
    let s = v[1] * v[0] + v[3] * v[2] * 3.0 + v[5] * v[4] * 5.0;
    assert!((stepped_inclusive::<6>(x, v) - (d + s)).abs() < 1e-12);
    let f = |(x, v): (f64, SVector<f64, 7>)| stepped_inclusive::<6>(x, v);
    let r = |(x, v): (f64, SVector<f64, 7>), g: f64| stepped_inclusive_rev::<6>(x, v, g);
    ok("stepped_inclusive", check_gradient(f, r, (x, v), H));
    ok("stepped_inclusive", check_gradient(f, r, (-1.1, v), H));
}

// Stepped ranges whose counter's type nothing fixes until it defaults to `i32` (found by a
// reviewer: the reverse chose `rev()` by the range's type, then `RangeInclusive<i32>` has no
// exact size and the function did not compile), and a counter of `i64`, whose ranges have
// no exact size either.
#[lens]
fn stepped_untyped(x: f64) -> f64 {
    let mut a = x;
    for k in (0..=4).step_by(2) {
        a = a * a * 0.5 + (k as f64) * x;
    }
    for k in (0..=4).rev().step_by(2) {
        a = a * x + k as f64;
    }
    for _ in (0..=4).step_by(3) {
        a = a * 0.5 + x;
    }
    for k in (0i64..7).step_by(2) {
        a = a + (k as f64) * x * x;
    }
    a
}

#[test]
fn stepped_ranges_of_any_counter_type() {
    let x: f64 = 0.3;
    let mut a = x;
    for k in [0.0, 2.0, 4.0] {
        a = a * a * 0.5 + k * x;
    }
    for k in [4.0, 2.0, 0.0] {
        a = a * x + k;
    }
    for _ in 0..2 {
        a = a * 0.5 + x;
    }
    for k in [0.0, 2.0, 4.0, 6.0] {
        a += k * x * x;
    }
    assert!((stepped_untyped(x) - a).abs() < 1e-12);
    ok(
        "stepped_untyped",
        check_gradient(stepped_untyped, stepped_untyped_rev, x, H),
    );
    ok(
        "stepped_untyped",
        check_gradient(stepped_untyped, stepped_untyped_rev, -0.8, H),
    );
}

// Bounds of the forms `N - 1` and `N + 1`, over vectors: a product of shifted copies.
#[lens]
fn bounded_forms<const N: usize>(v: SVector<f64, 3>, s: f64) -> f64 {
    let mut acc = v;
    for _ in 0..N - 1 {
        acc = acc * s + v;
    }
    let mut t = 0.0;
    for _ in 1..N + 1 {
        t = t + acc.dot(&acc) * s;
    }
    t
}

#[test]
fn bounds_below_and_one_above_a_const_parameter() {
    let f = |(v, s): (SVector<f64, 3>, f64)| bounded_forms::<4>(v, s);
    let r = |(v, s): (SVector<f64, 3>, f64), d: f64| bounded_forms_rev::<4>(v, s, d);
    let v = SVector::<f64, 3>::new(0.3, -0.8, 0.5);
    ok("bounded_forms", check_gradient(f, r, (v, 0.7), H));
}

// A branch inside the loop (an assignment in an `if` without `else`), and a nested loop.
#[lens]
fn branch_and_nested(x: f64, y: f64) -> f64 {
    let mut acc = x;
    for i in 0..4 {
        if i % 2 == 0 {
            acc = acc * y;
        }
        for _ in 0..2 {
            acc = acc + (acc * x).sin();
        }
    }
    acc
}

#[test]
fn branches_and_nested_loops_inside_a_loop() {
    let f = |(x, y): (f64, f64)| branch_and_nested(x, y);
    let r = |(x, y): (f64, f64), d: f64| branch_and_nested_rev(x, y, d);
    for p in [(0.2, 0.9), (-0.5, 1.1), (0.8, -0.6)] {
        ok("branch_and_nested", check_gradient(f, r, p, H));
    }
}

// A forward-only counter changed in place beside a carried value, and a carried value that
// starts as a literal (forward-only) and becomes differentiated in the loop.
#[lens]
fn counter_beside_value(x: f64) -> f64 {
    let mut n = 0;
    let mut acc = 0.0;
    for _ in 0..5 {
        if x * (n as f64) < 1.0 {
            n += 1;
        }
        acc = acc + x * n as f64;
    }
    acc
}

#[test]
fn forward_only_counter_changed_in_place() {
    // With x = 0.3: n = 1, 2, 3, 4, 4 (0.3 * 4 = 1.2 stops it), so acc = 14 x.
    assert!((counter_beside_value(0.3) - 14.0 * 0.3).abs() < 1e-12);
    assert!((counter_beside_value_rev(0.3, 1.0) - 14.0).abs() < 1e-12);
    ok(
        "counter_beside_value",
        check_gradient(counter_beside_value, counter_beside_value_rev, 0.3, H),
    );
}

// A carried value shadowed inside the body before it is reassigned.
#[lens]
fn shadowed_inside(x: f64) -> f64 {
    let mut acc = x;
    for _ in 0..3 {
        acc = acc * x;
        let acc2 = acc + 1.0;
        acc = acc2.ln();
    }
    acc
}

#[test]
fn rebinding_through_a_let_inside_the_body() {
    ok(
        "shadowed_inside",
        check_gradient(shadowed_inside, shadowed_inside_rev, 1.3, H),
    );
}

// The chained Rosenbrock function needs indexing; its loop structure with a carried pair:
// f = sum_k 100 (b_k - a_k^2)^2 + (1 - a_k)^2 with (a, b) moved along by a map each step.
#[lens]
fn rolling_rosenbrock<const N: usize>(a: f64, b: f64) -> f64 {
    let mut u = a;
    let mut v = b;
    let mut f = 0.0;
    for _ in 0..N {
        let t = v - u * u;
        let s = 1.0 - u;
        f = f + 100.0 * t * t + s * s;
        let next = 0.5 * (u + v);
        u = v;
        v = next;
    }
    f
}

#[test]
fn several_carried_values_rotated_each_iteration() {
    let f = |(a, b): (f64, f64)| rolling_rosenbrock::<7>(a, b);
    let r = |(a, b): (f64, f64), d: f64| rolling_rosenbrock_rev::<7>(a, b, d);
    ok("rolling_rosenbrock", check_gradient(f, r, (0.3, 0.9), H));
    ok("rolling_rosenbrock", check_gradient(f, r, (-1.2, 1.0), H));
}

// A loop in `para!`: an Elman-style recurrence over a fixed number of steps, the same
// dense layer (shared parameters) applied at every step; the reverse adds the steps' changes.
para! {
    /// `h <- tanh(W h + x)` four times from `h = x`.
    pub struct Recur {
        cell: Dense<3, 3, f64>,
    }
    fn forward(&self, x: SVector<f64, 3>) -> SVector<f64, 3> {
        let mut h = x;
        for _ in 0..4 {
            let z = self.cell(h) + x;
            h = z.map(tanh);
        }
        h
    }
}

#[test]
fn shared_parameters_across_iterations_in_para() {
    let model = Recur { cell: Dense::new() };
    let p = model.init(3);
    let x = SVector::<f64, 3>::new(0.2, -0.4, 0.7);
    let dy = SVector::<f64, 3>::new(1.0, -0.5, 0.25);
    let (dp, dx) = model.changes(&p, x, dy);
    // Finite differences in every parameter and every input coordinate, of <dy, y>.
    let score = |p: &<Recur as Init>::Param, x: SVector<f64, 3>| model.forward(p, x).dot(&dy);
    let mut worst: f64 = 0.0;
    for i in 0..3 {
        for j in 0..3 {
            let (mut a, mut b) = (p.clone(), p.clone());
            a.cell.w[(i, j)] += H;
            b.cell.w[(i, j)] -= H;
            let num = (score(&a, x) - score(&b, x)) / (2.0 * H);
            worst = worst.max((num - dp.cell.w[(i, j)]).abs());
        }
        let (mut a, mut b) = (p.clone(), p.clone());
        a.cell.b[i] += H;
        b.cell.b[i] -= H;
        let num = (score(&a, x) - score(&b, x)) / (2.0 * H);
        worst = worst.max((num - dp.cell.b[i]).abs());
        let (mut xa, mut xb) = (x, x);
        xa[i] += H;
        xb[i] -= H;
        let num = (score(&p, xa) - score(&p, xb)) / (2.0 * H);
        worst = worst.max((num - dx[i]).abs());
    }
    assert!(worst < 1e-7, "largest error {worst}");
    // The parameter-only pullback the learner runs agrees with the full one.
    let mut only = <Recur as Init>::Param::zeros();
    let (_, pull) = model.vjp_params(&p, x);
    pull(dy, &mut only);
    assert!((*only.cell.w - *dp.cell.w).amax() < 1e-12);
}

// A stepped inclusive range in `para!`, its counter's type fixed by nothing (it did not
// compile when the reverse chose `rev()` by the range's type).
para! {
    /// `h <- (k + 1) / 2 W h + x` at the counters 0, 2, 4, from `h = x`.
    pub struct Stepped {
        cell: Dense<2, 2, f64>,
    }
    fn forward(&self, x: SVector<f64, 2>) -> SVector<f64, 2> {
        let mut h = x;
        for k in (0..=4).step_by(2) {
            h = self.cell(h) * ((k as f64 + 1.0) * 0.5) + x;
        }
        h
    }
}

#[test]
fn stepped_inclusive_range_in_para() {
    let model = Stepped { cell: Dense::new() };
    let p = model.init(5);
    let x = SVector::<f64, 2>::new(0.3, -0.6);
    // Every parameter and input coordinate against finite differences, by the library's
    // checker over the pair (parameters, input).
    let f = |(p, x): (<Stepped as Init>::Param, SVector<f64, 2>)| model.forward(&p, x);
    let r = |(p, x): (<Stepped as Init>::Param, SVector<f64, 2>), dy| model.changes(&p, x, dy);
    ok("stepped_in_para", check_gradient(f, r, (p, x), H));
}

const K: i32 = 3;

// Counters of other integer types: a `const` item of type `i32`, a suffixed literal.
#[lens]
fn integer_counters(x: f64) -> f64 {
    let mut acc = 0.0;
    for k in 0..K {
        acc = acc + x.powi(k);
    }
    for k in 0..3i64 {
        acc = acc * x + k as f64;
    }
    acc
}

#[test]
fn counters_of_other_integer_types() {
    let x: f64 = 0.8;
    let a = 1.0 + x + x * x;
    let expect = ((a * x) * x + 1.0) * x + 2.0;
    assert!((integer_counters(x) - expect).abs() < 1e-12);
    ok(
        "integer_counters",
        check_gradient(integer_counters, integer_counters_rev, x, H),
    );
}

// Loops and branches that read differentiated values but hand none on: their pullbacks are
// never called, and the adjoint types come from the values (this failed to infer).
#[lens]
fn reads_without_carrying(x: f64, flag: bool) -> f64 {
    let mut c = 0.0;
    for _ in 0..3 {
        let t = x * 2.0;
        c = c + 1.0;
        if t > 100.0 {
            c = c + 0.5;
        }
    }
    if flag {
        let u = x.sin();
        if u > 2.0 {
            c = 0.0;
        }
    }
    c * x
}

#[test]
fn loops_and_branches_whose_values_are_unused() {
    assert_eq!(reads_without_carrying_rev(0.5, true, 1.0), 3.0);
    ok(
        "reads_without_carrying",
        check_gradient(
            |x| reads_without_carrying(x, true),
            |x, d| reads_without_carrying_rev(x, true, d),
            0.5,
            H,
        ),
    );
}

// A label on a differentiated loop is harmless; a nested forward-only loop may break out of
// itself. (A label nothing names is unused in plain Rust too.)
#[lens]
#[allow(unused_labels)]
fn labelled(x: f64) -> f64 {
    let mut acc = x;
    'steps: for i in 0..4 {
        let mut n = 0;
        'count: for j in 0..10 {
            if j > i {
                break 'count;
            }
            n += 1;
        }
        acc = acc * x + n as f64;
    }
    acc
}

#[test]
fn labelled_loops_and_inner_breaks() {
    let x: f64 = 0.9;
    let expect = (((x * x + 1.0) * x + 2.0) * x + 3.0) * x + 4.0;
    assert!((labelled(x) - expect).abs() < 1e-12);
    ok("labelled", check_gradient(labelled, labelled_rev, x, H));
}

// Recomputation (the reverse runs a loop's body again instead of keeping its pullbacks) is
// used only where a second run is the same computation; these check both sides of that line.

// The reverse reads no carried value here (a sum), so nothing is kept per iteration: the
// pullback holds the input, the range and the trip count, not 63 iterations' intermediates.
#[lens]
fn chained<const N: usize>(x: nalgebra::SVector<f64, N>) -> f64 {
    let mut f = 0.0;
    for i in 0..N - 1 {
        let t = x[i + 1] - x[i] * x[i];
        let s = 1.0 - x[i];
        f = f + 100.0 * t * t + s * s;
    }
    f
}

#[test]
fn a_recomputed_loop_keeps_no_per_iteration_state() {
    let x = nalgebra::SVector::<f64, 64>::from_fn(|i, _| (i as f64 * 0.37).sin());
    let (_, pb) = chained_vjp(x);
    let size = std::mem::size_of_val(&pb);
    assert!(
        size < 64 * 8 + 64,
        "the pullback holds {size} bytes: more than the input and the range"
    );
    let small = nalgebra::SVector::<f64, 5>::new(0.3, -0.7, 1.1, 0.4, -0.2);
    ok("chained", check_gradient(chained, chained_rev, small, H));
    // Against the hand-written gradient.
    let g = chained_rev(x, 1.0);
    for i in 0..64 {
        let mut want = 0.0;
        if i + 1 < 64 {
            want += -400.0 * x[i] * (x[i + 1] - x[i] * x[i]) - 2.0 * (1.0 - x[i]);
        }
        if i > 0 {
            want += 200.0 * (x[i] - x[i - 1] * x[i - 1]);
        }
        assert!(
            (g[i] - want).abs() < 1e-9,
            "entry {i}: {} against {want}",
            g[i]
        );
    }
}

// The reverse reads the carried value (a product, and a condition on it): it is kept.
#[lens]
fn carried_read_by_the_reverse(x: f64) -> f64 {
    let mut p = 1.0;
    for _ in 0..6 {
        if p > 2.0 {
            p = p * 0.5 + x;
        } else {
            p = p * x;
        }
    }
    p
}

#[test]
fn carried_values_the_reverse_reads_are_kept() {
    for x in [1.3, 1.9, 0.7] {
        ok(
            "carried_read_by_the_reverse",
            check_gradient(
                carried_read_by_the_reverse,
                carried_read_by_the_reverse_rev,
                x,
                H,
            ),
        );
    }
}

// A body with an effect runs once per iteration, forward and reverse together.
thread_local! {
    static RUNS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

#[lens]
fn counted(x: f64) -> f64 {
    let mut acc = 0.0;
    for _ in 0..4 {
        RUNS.with(|r| r.set(r.get() + 1));
        acc = acc + x * x;
    }
    acc
}

// A forward-only value from outside that is not `Copy`, read in the body and used after it:
// the loop is not recomputed (that would move it into the pullback).
#[lens]
fn reads_a_vec(x: f64, #[nodiff] w: Vec<f64>) -> f64 {
    let mut acc = 0.0;
    for i in 0..3 {
        acc = acc + x * w[i];
    }
    let n = w.len() as f64;
    acc * n
}

#[test]
fn bodies_with_effects_or_outside_values_are_not_run_twice() {
    RUNS.with(|r| r.set(0));
    let (_, pb) = counted_vjp(0.5);
    assert!((pb(1.0) - 4.0).abs() < 1e-12);
    assert_eq!(
        RUNS.with(|r| r.get()),
        4,
        "the body ran again in the reverse"
    );
    let w = vec![1.0, 2.0, 3.0];
    assert!((reads_a_vec(0.5, w.clone()) - 9.0).abs() < 1e-12);
    assert!((reads_a_vec_rev(0.5, w, 1.0) - 18.0).abs() < 1e-12);
}

// An entry read again in one block (`x[i] * x[i]`, then `1.0 - x[i]`) is one value with one
// adjoint, added into `x` once. Reads are not reused across what could change the place: a
// forward-only `k += 1`, a shadowing `let k = k + 1`, a nested block, a rebinding of `x`.
#[lens]
fn entries_read_again<const N: usize>(x: SVector<f64, N>) -> f64 {
    let mut f = 0.0;
    for i in 0..N - 1 {
        let a = x[i] * x[i] + x[i + 1];
        let j = i + 1;
        let b = x[j] * x[i] - (x[i] * 0.5);
        f = f + a * b;
    }
    f
}

#[lens]
fn places_that_change(x: SVector<f64, 4>) -> f64 {
    let mut k = 0;
    let a = x[k] * x[k];
    k += 1;
    let b = x[k] * x[k] * 2.0;
    let k = k + 1;
    let c = x[k] * x[k];
    let e = if c > 0.5 { x[k] * 3.0 } else { x[k] };
    let mut m = 0;
    let g =
        x[m] * {
            m = 3;
            x[m]
        } * x[m];
    let x = x * 2.0;
    let h = x[k] * x[1];
    a + b + c + e + g + h
}

#[test]
fn entries_read_again_are_one_value_and_places_that_change_are_not() {
    let x = SVector::<f64, 6>::from_fn(|i, _| (i as f64 * 0.37).sin() + 0.2);
    ok(
        "entries_read_again",
        check_gradient(entries_read_again::<6>, entries_read_again_rev::<6>, x, H),
    );
    let (v, _) = entries_read_again_vjp::<6>(x);
    assert_eq!(v, entries_read_again::<6>(x));
    for x in [
        SVector::<f64, 4>::new(0.3, -0.8, 1.1, 0.6),
        SVector::<f64, 4>::new(0.9, 0.4, 0.2, -1.3),
    ] {
        // The value computed with the reverse equals the function as written: a reused read
        // of another place would change it.
        let (v, _) = places_that_change_vjp(x);
        assert_eq!(v, places_that_change(x));
        ok(
            "places_that_change",
            check_gradient(places_that_change, places_that_change_rev, x, H),
        );
    }
}

// In `name_rev` a recomputed loop's pullback reads the values of the function's frame through
// references instead of copying them into its closure (a copy of the whole input per call).
// Each case below is a way a value can be read by such a loop and then used again: read
// afterwards, destructured afterwards (a move: it must not be borrowed), the start value of a
// second loop (a move), read by loops nested in a loop and in a branch beside a value local to
// the branch (which does not live in the frame). `name_rev` must equal `name_vjp`'s pullback
// bit for bit, and both the finite differences.
#[lens]
fn frame_reads(x: SVector<f64, 6>, p: (f64, f64), flag: bool) -> f64 {
    let mut f = 0.0;
    for i in 0..5 {
        let t = x[i + 1] - x[i] * x[i] + p.0;
        f = f + t * t;
    }
    let later = x.dot(&x);
    let (a, b) = p;
    let mut g = b;
    for i in 0..6 {
        g = g + x[i] * a;
    }
    for i in 0..2 {
        for j in 0..3 {
            f = f + (x[i + j] * p.1).sin();
        }
    }
    let h = if flag {
        let local = x * 2.0;
        let mut s = 0.0;
        for i in 0..6 {
            s = s + local[i] * x[i] * g;
        }
        s
    } else {
        let mut s = 0.0;
        for i in 0..6 {
            s = s + x[i].exp();
        }
        s
    };
    f + 0.1 * later + g * h
}

#[test]
fn loops_in_rev_read_the_frame_through_references() {
    let x = SVector::<f64, 6>::new(0.3, -0.5, 0.8, 0.1, -0.2, 0.6);
    for flag in [true, false] {
        let p = (0.4, -0.9);
        let (_, pb) = frame_reads_vjp(x, p, flag);
        let (vx, vp, ()) = pb(1.7);
        let (rx, rp) = frame_reads_rev(x, p, flag, 1.7);
        assert_eq!(rx, vx, "flag {flag}");
        assert_eq!(rp.0.to_bits(), vp.0.to_bits(), "flag {flag}");
        assert_eq!(rp.1.to_bits(), vp.1.to_bits(), "flag {flag}");
        let f = |(x, p): (SVector<f64, 6>, (f64, f64))| frame_reads(x, p, flag);
        let r = |(x, p): (SVector<f64, 6>, (f64, f64)), d: f64| frame_reads_rev(x, p, flag, d);
        ok("frame_reads", check_gradient(f, r, (x, p), H));
    }
}

// Found by a reviewer: a value that is not `Copy`, which forward-only code in a recomputed
// loop names as written (a condition on an entry, `ps.len()`), is captured by value by the
// loop's closure; `name_rev` must then not also borrow it (E0505 before the fix). Read
// through references only where the body's differentiated code alone reads it.
#[derive(Clone, Debug, PartialEq, Tangent)]
pub struct Pair {
    pub a: f64,
    pub b: f64,
}

#[lens]
fn condition_on_entries(ps: [Pair; 3]) -> f64 {
    let mut f = 0.0;
    for i in 0..3 {
        if ps[i].b > 0.0 {
            f = f + ps[i].a * ps[i].b;
        } else {
            f = f - ps[i].a;
        }
    }
    f
}

#[lens]
fn length_in_the_body(ps: [Pair; 3]) -> f64 {
    let mut f = 0.0;
    for i in 0..3 {
        let n = ps.len() as f64;
        f = f + ps[i].a * ps[i].b * n;
    }
    f
}

#[test]
fn values_named_by_forward_only_code_are_not_borrowed() {
    let ps = [
        Pair { a: 0.5, b: 1.5 },
        Pair { a: -0.7, b: -0.2 },
        Pair { a: 1.1, b: 0.4 },
    ];
    let (_, pb) = condition_on_entries_vjp(ps.clone());
    let got = condition_on_entries_rev(ps.clone(), 1.0);
    assert_eq!(got, pb(1.0));
    // d/da = b where b > 0, else -1; d/db = a where b > 0, else 0.
    let want = [(1.5, 0.5), (-1.0, 0.0), (0.4, 1.1)];
    for (g, (da, db)) in got.iter().zip(want) {
        assert_eq!((g.a, g.b), (da, db));
    }
    let (_, pb) = length_in_the_body_vjp(ps.clone());
    let got = length_in_the_body_rev(ps.clone(), 1.0);
    assert_eq!(got, pb(1.0));
    for (g, p) in got.iter().zip(&ps) {
        assert!((g.a - 3.0 * p.b).abs() < 1e-12 && (g.b - 3.0 * p.a).abs() < 1e-12);
    }
}

// Also found by the reviewer, and failing before `name_rev` read loops' values through
// references (E0382 in `name_vjp` too): a value that is not `Copy`, read by a recomputed loop
// through its fields, then read again after the loop, given away after it, or destructured in
// a branch after it. The loop's closure takes a clone of such a value; `name_rev` does not
// borrow a value the body moves anywhere.
#[lens]
fn field_read_after(p: Pair, x: SVector<f64, 3>) -> f64 {
    let mut f = 0.0;
    for i in 0..3 {
        f = f + x[i] * p.a;
    }
    f + p.b * p.a
}

#[lens]
fn given_away_after(p: Pair, x: SVector<f64, 3>) -> f64 {
    let mut f = 0.0;
    for i in 0..3 {
        f = f + x[i] * p.a;
    }
    let q = p;
    f + q.b
}

#[lens]
fn destructured_in_a_branch_after(p: (Pair, f64), x: SVector<f64, 3>, flag: bool) -> f64 {
    let mut f = 0.0;
    for i in 0..3 {
        f = f + x[i] * p.1;
    }
    let g = if flag {
        let (s, c) = p;
        s.a * c
    } else {
        0.5
    };
    f + g
}

#[test]
fn values_that_are_not_copy_are_read_after_a_loop() {
    let x = SVector::<f64, 3>::new(0.3, -0.7, 0.5);
    let p = Pair { a: -0.2, b: -0.7 };
    let sx = x.sum();
    let (_, pb) = field_read_after_vjp(p.clone(), x);
    let (gp, gx) = field_read_after_rev(p.clone(), x, 1.0);
    assert_eq!((gp.clone(), gx), pb(1.0));
    // f = a sx + a b: d/da = sx + b, d/db = a, d/dx = a.
    assert!((gp.a - (sx + p.b)).abs() < 1e-12 && (gp.b - p.a).abs() < 1e-12);
    assert!((gx - SVector::repeat(p.a)).amax() < 1e-12);
    let (_, pb) = given_away_after_vjp(p.clone(), x);
    let (gp, gx) = given_away_after_rev(p.clone(), x, 1.0);
    assert_eq!((gp.clone(), gx), pb(1.0));
    assert!((gp.a - sx).abs() < 1e-12 && gp.b == 1.0);
    for flag in [true, false] {
        let q = (p.clone(), 1.5);
        let (_, pb) = destructured_in_a_branch_after_vjp(q.clone(), x, flag);
        let (gq, gx, ()) = pb(1.0);
        let (rq, rx) = destructured_in_a_branch_after_rev(q.clone(), x, flag, 1.0);
        assert_eq!((rq.clone(), rx), (gq, gx));
        // f = c sx + (a c if flag): d/dc = sx + a (flag), d/da = c (flag).
        let (da, dc) = if flag { (1.5, sx + p.a) } else { (0.0, sx) };
        assert!(
            (rq.0.a - da).abs() < 1e-12 && (rq.1 - dc).abs() < 1e-12,
            "flag {flag}"
        );
    }
}

// Loops that look like sums and are not: each iteration's term reads the carried value, or
// scales it, with weights that differ by position, so the reverse must run them last first.
// (A reverse in the range's own order for true sums was measured and lost: BENCHMARKS.md.)
#[lens]
fn sum_like<const N: usize>(x: SVector<f64, N>) -> (f64, f64, f64) {
    let mut a = 0.5;
    let mut b = 0.25;
    let mut c = 0.0;
    for i in 0..N {
        a = a + a * x[i];
        b = b * 0.5 + x[i] * (i as f64 + 1.0);
        c = c + x[i] * x[i] * (i as f64 - 1.5);
    }
    (a, b, c)
}

// Sums over a stepped and a reversed range.
#[lens]
fn sums_over_ranges(x: SVector<f64, 7>) -> f64 {
    let mut f = 0.0;
    for i in (0..7).step_by(3) {
        f += x[i] * x[i] * (i as f64 + 0.5);
    }
    for i in (1..=6).rev() {
        f -= x[i].sin() * x[i - 1];
    }
    f
}

#[test]
fn sums_and_loops_that_only_look_like_sums() {
    let x = SVector::<f64, 5>::new(0.3, -0.7, 0.2, 0.9, -0.4);
    for d in [
        (1.0, 0.0, 0.0),
        (0.0, 1.0, 0.0),
        (0.0, 0.0, 1.0),
        (0.3, -1.2, 0.7),
    ] {
        ok(
            "sum_like",
            check_gradient(
                |x: SVector<f64, 5>| {
                    let (a, b, c) = sum_like(x);
                    a * d.0 + b * d.1 + c * d.2
                },
                |x, e| sum_like_rev(x, (e * d.0, e * d.1, e * d.2)),
                x,
                H,
            ),
        );
    }
    let y = SVector::<f64, 7>::from_fn(|i, _| (i as f64 * 0.9).cos());
    ok(
        "sums_over_ranges",
        check_gradient(sums_over_ranges, sums_over_ranges_rev, y, H),
    );
}

// A loop body's last expression without a `;` that reads no differentiated value: it was the
// body's value, which a loop drops, and `_vjp`/`_rev` dropped the expression with it (its
// assignments lost, its side effects not run, silently wrong gradients). It is a statement
// of the body like the others, in whatever form it is written.
type V3 = SVector<f64, 3>;

// A counter in a final `if` (rustfmt keeps it without `;`): x0 times the positive entries.
#[lens]
fn count_in_a_final_if(x: V3) -> f64 {
    let mut n = 0;
    for i in 0..3 {
        if x[i] > 0.0 {
            n += 1;
        }
    }
    x[0] * (n as f64)
}

// The index of the last positive entry, chosen in a final `if`: x_k^2.
#[lens]
fn last_positive_squared(x: V3) -> f64 {
    let mut k = 0;
    for i in 0..3 {
        if x[i] > 0.0 {
            k = i;
        }
    }
    x[k] * x[k]
}

// A final `match` whose arms assign.
#[lens]
fn count_in_a_final_match(x: V3) -> f64 {
    let mut n = 0.0;
    for i in 0..3 {
        match (x[i] > 0.0, i) {
            (true, 0) => n += 2.0,
            (true, _) => n += 1.0,
            (false, _) => {}
        }
    }
    x[1] * n
}

// A condition on the index alone, after a differentiated statement.
#[lens]
fn index_chosen_by_the_index(x: V3) -> f64 {
    let mut k = 0;
    let mut s = 0.0;
    for i in 0..3 {
        s = s + x[i];
        if i > 0 {
            k = i;
        }
    }
    x[k] * s
}

// A final compound assignment, a final block and a final inner loop, none with `;`.
#[lens]
fn final_assignment(x: V3) -> f64 {
    let mut n = 0;
    let mut s = 0.0;
    for i in 0..3 {
        s = s + x[i];
        n += 1
    }
    s * (n as f64)
}

#[lens]
fn final_block_and_inner_loop(x: V3) -> f64 {
    let mut n = 0;
    let mut m = 0;
    let mut s = 0.0;
    for i in 0..3 {
        s = s + x[i] * x[i];
        {
            n += 1;
        }
    }
    for i in 0..3 {
        s = s + x[i];
        for _j in 0..2 {
            m += 1
        }
    }
    s * (n as f64) + s * (m as f64)
}

// A flag of float type set in a final `if` on a differentiated entry.
#[lens]
fn float_flag_in_a_final_if(x: V3) -> f64 {
    let mut c = 0.0;
    let mut s = 0.0;
    for i in 0..3 {
        s = s + x[i] * c;
        if x[i] > 1.0 {
            c = 1.0
        }
    }
    s
}

#[test]
fn a_loop_bodys_last_expression_is_run() {
    let x = V3::new(0.7, -0.4, 1.3);
    let y = V3::new(-0.2, 0.9, 0.5);
    // By hand at x: 2 positive entries; last positive index 2; index chosen by the index 2.
    assert_eq!(count_in_a_final_if_rev(x, 1.0), V3::new(2.0, 0.0, 0.0));
    assert_eq!(last_positive_squared_rev(x, 1.0), V3::new(0.0, 0.0, 2.6));
    assert_eq!(count_in_a_final_match_rev(x, 1.0), V3::new(0.0, 3.0, 0.0));
    let s = x.sum();
    let d = index_chosen_by_the_index_rev(x, 1.0);
    assert!((d - V3::new(x[2], x[2], x[2] + s)).amax() < 1e-12, "{d}");
    assert_eq!(final_assignment_rev(x, 1.0), V3::new(3.0, 3.0, 3.0));
    // The flag is set once x[1] > 1 is read: x[0] and x[1] are added with c = 0, x[2] with 1.
    let w = V3::new(0.5, 1.5, 0.25);
    assert_eq!(float_flag_in_a_final_if_rev(w, 1.0), V3::new(0.0, 0.0, 1.0));
    // The values of `_vjp` are the functions' own.
    for p in [x, y, w] {
        assert_eq!(count_in_a_final_if_vjp(p).0, count_in_a_final_if(p));
        assert_eq!(last_positive_squared_vjp(p).0, last_positive_squared(p));
        assert_eq!(final_assignment_vjp(p).0, final_assignment(p));
        assert_eq!(
            final_block_and_inner_loop_vjp(p).0,
            final_block_and_inner_loop(p)
        );
    }
    type F = fn(V3) -> f64;
    type R = fn(V3, f64) -> V3;
    for (name, f, rev) in [
        (
            "count_in_a_final_if",
            count_in_a_final_if as F,
            count_in_a_final_if_rev as R,
        ),
        (
            "last_positive_squared",
            last_positive_squared,
            last_positive_squared_rev,
        ),
        (
            "count_in_a_final_match",
            count_in_a_final_match,
            count_in_a_final_match_rev,
        ),
        (
            "index_chosen_by_the_index",
            index_chosen_by_the_index,
            index_chosen_by_the_index_rev,
        ),
        ("final_assignment", final_assignment, final_assignment_rev),
        (
            "final_block_and_inner_loop",
            final_block_and_inner_loop,
            final_block_and_inner_loop_rev,
        ),
        (
            "float_flag_in_a_final_if",
            float_flag_in_a_final_if,
            float_flag_in_a_final_if_rev,
        ),
    ] {
        for p in [x, y, w] {
            ok(name, check_gradient(f, rev, p, H));
        }
    }
}

// The same in `para!`: a counter assigned by the loop body's last expression.
para! {
    /// `h <- W h` three times, scaled by the number of steps counted in the loop.
    pub struct CountedSteps {
        cell: Dense<2, 2, f64>,
    }
    fn forward(&self, x: SVector<f64, 2>) -> SVector<f64, 2> {
        let mut h = x;
        let mut n = 0.0;
        for _t in 0..3 {
            h = self.cell(h);
            n += 1.0
        }
        h * n
    }
}

#[test]
fn a_para_loop_bodys_last_expression_is_run() {
    let model = CountedSteps { cell: Dense::new() };
    let p = model.init(5);
    let x = SVector::<f64, 2>::new(0.3, -0.8);
    let dy = SVector::<f64, 2>::new(1.0, 0.5);
    let (y, _) = model.vjp(&p, x);
    assert_eq!(y, model.forward(&p, x));
    let (_, dx) = model.changes(&p, x, dy);
    for i in 0..2 {
        let (mut a, mut b) = (x, x);
        a[i] += H;
        b[i] -= H;
        let num = (model.forward(&p, a).dot(&dy) - model.forward(&p, b).dot(&dy)) / (2.0 * H);
        assert!(
            (num - dx[i]).abs() < 1e-7,
            "entry {i}: {num} against {}",
            dx[i]
        );
    }
}

// A branch's last expression without `;` that changes a binding the branch hands on
// (`y = 1.0; y += 2.0` in a loop): the branch's tuple read its copies of those bindings
// before that expression ran, so the change was lost in `_vjp` and `_rev` (a prober's
// finding, the branch's form of the loop body's bug above). In `if`, `match` arms, a plain
// block, nested branches, a stepped loop, an inner loop and a forward-only inner `if`.
type V4 = SVector<f64, 4>;

#[lens]
fn tail_of_a_branch(x: V4) -> f64 {
    let mut y = x[0];
    let mut s = 0.0;
    for i in 0..4 {
        if x[i] > 0.0 {
            y = 1.0;
            y += 2.0
        }
        s = s + y * x[i]
    }
    s
}

#[lens]
fn tail_of_an_arm(x: V4) -> f64 {
    let mut y = x[0];
    let mut s = 0.0;
    for i in 0..4 {
        match x[i] > 0.0 {
            true => {
                y = 1.0;
                y *= 3.0
            }
            false => y = y * x[i],
        }
        s = s + y * x[i]
    }
    s
}

#[lens]
fn tail_of_a_block(x: V4) -> f64 {
    let mut y = x[0];
    let mut s = 0.0;
    for i in 0..4 {
        {
            s = s + y * x[i];
            y = 0.5;
            y += i as f64
        }
    }
    s + y
}

#[lens]
fn tail_of_a_second_branch(x: V4) -> f64 {
    let mut c = x[0];
    let mut s = c * c;
    for i in 0..4 {
        if x[i] > 0.0 {
            c = 1.0
        } else {
            c = 2.0
        }
        if x[(i + 1) % 4] > 0.0 {
            s = s + c * x[i];
            c += 10.0
        } else {
            c = x[i] * 3.0
        }
        s = s + c
    }
    s
}

#[lens]
fn tail_of_a_nested_branch(x: V4) -> f64 {
    let mut y = x[0];
    let mut s = 0.0;
    for i in 0..4 {
        if x[3] > -5.0 {
            if x[i] > 0.0 {
                y = 2.0;
                y -= 0.5
            } else {
                y = y * x[i]
            }
        }
        s = s + y
    }
    s
}

#[lens]
fn tail_in_a_stepped_loop(x: V4) -> f64 {
    let mut y = x[1];
    let mut s = 0.0;
    for i in (0..4).step_by(2) {
        if x[i] > 0.0 {
            y = i as f64;
            y *= 2.0
        } else {
            y = y * x[i]
        }
        s = s + y * x[i + 1]
    }
    s
}

#[lens]
fn tail_an_inner_loop(x: V4) -> f64 {
    let mut y = x[0];
    let mut s = 0.0;
    for i in 0..4 {
        if x[i] > 0.0 {
            y = 0.0;
            for j in 0..3 {
                y += j as f64
            }
        } else {
            y = y * x[i]
        }
        s = s + y
    }
    s
}

#[lens]
fn tail_a_forward_only_if(x: V4) -> f64 {
    let mut h = x[0];
    let mut s = 0.0;
    for i in 0..4 {
        if x[i] > 1.0 {
            h = 0.0;
            if i > 0 {
                h += 1.0
            }
        } else {
            h = h * x[i]
        }
        s = s + h
    }
    s
}

#[test]
fn a_branchs_last_expression_runs_before_its_bindings_are_handed_on() {
    // At x: f = 3 (0.7) + 3 (1.3) ... by hand for the first: y = 3 after each positive
    // entry, s = 3 * 0.7 + 3 * (-0.4) + 3 * 1.3 + 3 * (-1.1); ds/dx = (3, 3, 3, 3).
    let x = V4::new(0.7, -0.4, 1.3, -1.1);
    assert!((tail_of_a_branch(x) - 3.0 * x.sum()).abs() < 1e-12);
    assert!((tail_of_a_branch_rev(x, 1.0) - V4::repeat(3.0)).amax() < 1e-12);
    type F = fn(V4) -> f64;
    type R = fn(V4, f64) -> V4;
    type Case = (&'static str, F, R, F);
    let cases: [Case; 8] = [
        (
            "tail_of_a_branch",
            tail_of_a_branch,
            tail_of_a_branch_rev,
            |x| tail_of_a_branch_vjp(x).0,
        ),
        ("tail_of_an_arm", tail_of_an_arm, tail_of_an_arm_rev, |x| {
            tail_of_an_arm_vjp(x).0
        }),
        (
            "tail_of_a_block",
            tail_of_a_block,
            tail_of_a_block_rev,
            |x| tail_of_a_block_vjp(x).0,
        ),
        (
            "tail_of_a_second_branch",
            tail_of_a_second_branch,
            tail_of_a_second_branch_rev,
            |x| tail_of_a_second_branch_vjp(x).0,
        ),
        (
            "tail_of_a_nested_branch",
            tail_of_a_nested_branch,
            tail_of_a_nested_branch_rev,
            |x| tail_of_a_nested_branch_vjp(x).0,
        ),
        (
            "tail_in_a_stepped_loop",
            tail_in_a_stepped_loop,
            tail_in_a_stepped_loop_rev,
            |x| tail_in_a_stepped_loop_vjp(x).0,
        ),
        (
            "tail_an_inner_loop",
            tail_an_inner_loop,
            tail_an_inner_loop_rev,
            |x| tail_an_inner_loop_vjp(x).0,
        ),
        (
            "tail_a_forward_only_if",
            tail_a_forward_only_if,
            tail_a_forward_only_if_rev,
            |x| tail_a_forward_only_if_vjp(x).0,
        ),
    ];
    let points = [
        x,
        V4::new(1.5, 0.3, -0.8, 2.2),
        V4::new(-0.6, 1.2, 0.9, 0.1),
    ];
    for (name, f, rev, value) in cases {
        for p in points {
            assert_eq!(value(p), f(p), "{name}: the value of _vjp at {p}");
            ok(name, check_gradient(f, rev, p, H));
        }
    }
}

// The same in `para!`: a join binding set and changed in place by a branch's last expression.
para! {
    /// Three steps of `h <- tanh(W h + b)`, summing `4 * 0.25` or `h0 h1` per step.
    pub struct TailInALoop {
        a: Dense<2, 2, f64>,
    }
    fn forward(&self, x: SVector<f64, 2>) -> f64 {
        let mut h = x;
        let mut s = 0.0;
        for _t in 0..3 {
            h = tanh(self.a(h));
            let mut g = h[0];
            if h[1] > 0.0 {
                g = 0.25;
                g *= 4.0
            } else {
                g = g * h[1]
            }
            s = s + g
        }
        s
    }
}

#[test]
fn a_para_branchs_last_expression_runs() {
    let model = TailInALoop { a: Dense::new() };
    for seed in 0..4 {
        let p = model.init(seed);
        let x = SVector::<f64, 2>::new(0.3, -0.8);
        assert_eq!(model.vjp(&p, x).0, model.forward(&p, x), "seed {seed}");
        let (_, dx) = model.changes(&p, x, 1.0);
        for i in 0..2 {
            let (mut a, mut b) = (x, x);
            a[i] += H;
            b[i] -= H;
            let num = (model.forward(&p, a) - model.forward(&p, b)) / (2.0 * H);
            assert!(
                (num - dx[i]).abs() < 1e-7,
                "seed {seed}, entry {i}: {num} against {}",
                dx[i]
            );
        }
    }
}

// A function whose value reads no differentiated value (a forward-only last expression): its
// change is zero, but `_rev` runs that expression as the function does (it was dropped, with
// its effects). Counted through a plain function.
thread_local! {
    static VALUE_RUNS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

fn one_counted() -> f64 {
    VALUE_RUNS.with(|r| r.set(r.get() + 1));
    1.0
}

#[lens]
fn forward_only_value(x: V4) -> f64 {
    let _y = x[0] * 2.0;
    if x[0] > 0.0 { one_counted() } else { 0.0 }
}

// A forward-only value whose type only the return type gives (`sum`): `_rev` runs it at
// that type.
#[lens]
fn forward_only_step(x: V4) -> f64 {
    let _y = x[0] * 2.0;
    (0..4).map(|i| i as f64 * 0.25).sum()
}

#[test]
fn a_forward_only_value_runs_in_every_form() {
    assert_eq!(forward_only_step_rev(V4::repeat(0.5), 1.0), V4::zeros());
    assert_eq!(forward_only_step(V4::repeat(0.5)), 1.5);
    let x = V4::new(0.7, -0.4, 1.3, -1.1);
    let before = VALUE_RUNS.with(std::cell::Cell::get);
    assert_eq!(forward_only_value(x), 1.0);
    assert_eq!(forward_only_value_vjp(x).0, 1.0);
    assert_eq!(forward_only_value_rev(x, 1.0), V4::zeros());
    let runs = VALUE_RUNS.with(std::cell::Cell::get) - before;
    assert_eq!(runs, 3, "once in each of f, f_vjp and f_rev");
}

// A sum the body only adds to (`f = f + e`, `f += e`, `f = e + f`, `f -= e`, through a `let`)
// hands its change unchanged through every iteration, so the reverse runs the iterations
// first to last, as a hand-written gradient loops (`recompute::any_order`). The changes of a
// value from outside are then added in the loop's order: `w`'s change is the sum of `c` in
// the order `0..3`, which for these entries rounds to 0 (last to first it does not). (A
// `#[nodiff]` vector read in the body keeps the tape of pullbacks, run last to first.)
#[lens]
fn summed_forms(w: f64, c: SVector<f64, 3>) -> f64 {
    let mut f = 0.0;
    let mut g = 0.0;
    let mut h = 0.0;
    let mut k = 0.0;
    let mut a = 0.0;
    for i in 0..3 {
        f = f + w * c[i];
        g += w * c[i];
        h = w * c[i] + h;
        k -= w * c[i];
        let b = a + w * c[i];
        a = b;
    }
    f + g + h - k + a
}

#[test]
fn sums_add_their_changes_in_the_loops_order() {
    let c = SVector::<f64, 3>::new(1.0, 1e16, -1e16);
    let in_order = c.iter().fold(0.0, |s, v| s + v);
    let last_first = c.iter().rev().fold(0.0, |s, v| s + v);
    assert_ne!(
        in_order, last_first,
        "the entries must tell the orders apart"
    );
    // The five sums' changes of `w` go into one accumulator, in the loop's order.
    let (dw, dc) = summed_forms_rev(1.0, c, 1.0);
    assert_eq!(dw, 5.0 * in_order, "{dw}");
    assert_eq!(dc, SVector::<f64, 3>::repeat(5.0));
    let c = SVector::<f64, 3>::new(0.3, -1.2, 0.7);
    ok(
        "summed_forms",
        check_gradient(
            |(w, c)| summed_forms(w, c),
            |(w, c), d| summed_forms_rev(w, c, d),
            (0.4, c),
            H,
        ),
    );
}

// Carried values whose change an iteration does change keep the reverse last to first: a
// scaled carry (x[i]'s change is 2^(3 - i)), a carry subtracted from (alternating signs), a
// sum read again in its own step, and a sum beside such a carry.
#[lens]
fn scaled_carry(x: V4) -> f64 {
    let mut c = 0.0;
    for i in 0..4 {
        c = 2.0 * c + x[i];
    }
    c
}

#[lens]
fn subtracted_carry(x: V4) -> f64 {
    let mut c = 0.0;
    for i in 0..4 {
        c = x[i] - c;
    }
    c
}

#[lens]
fn sum_read_twice(x: V4) -> f64 {
    let mut f = 0.5;
    for i in 0..4 {
        f = f + f * x[i];
    }
    f
}

#[lens]
fn sum_beside_a_product(x: V4) -> f64 {
    let mut s = 0.0;
    let mut p = 1.0;
    for i in 0..4 {
        s = s + x[i] * p;
        p = p * x[i];
    }
    s + p
}

#[test]
fn carries_changed_by_an_iteration_keep_the_reverse_order() {
    assert_eq!(
        scaled_carry_rev(V4::new(0.1, 0.2, 0.3, 0.4), 1.0),
        V4::new(8.0, 4.0, 2.0, 1.0)
    );
    assert_eq!(
        subtracted_carry_rev(V4::new(0.1, 0.2, 0.3, 0.4), 1.0),
        V4::new(-1.0, 1.0, -1.0, 1.0)
    );
    let x = V4::new(0.7, -0.4, 1.3, -1.1);
    let carries: [(&str, Checked); 4] = [
        ("scaled_carry", (scaled_carry, scaled_carry_rev)),
        ("subtracted_carry", (subtracted_carry, subtracted_carry_rev)),
        ("sum_read_twice", (sum_read_twice, sum_read_twice_rev)),
        (
            "sum_beside_a_product",
            (sum_beside_a_product, sum_beside_a_product_rev),
        ),
    ];
    all_ok(x, &carries);
}

// In a loop whose reverse runs first to last, the changes of entries of a value from outside
// are added after the body's sweep, in the order the body reads them (`Sweep::deferred`):
// `c[i]` is read three times, with changes 1, 1e16 and -1e16, which added in that order
// round to 0 (in the sweep's order, last read first, to 1; exactly, the change is 1).
#[lens]
fn entry_read_three_times(c: SVector<f64, 2>) -> f64 {
    let mut f = 0.0;
    for i in 0..2 {
        f = f + c[i] + 1e16 * c[i] - 1e16 * c[i];
    }
    f
}

// Beside the deferred entries: a local vector's entries (whose change its own pullback reads,
// so added at once), a branch reading entries, the whole vector read beside its entries, and
// a nested loop.
#[lens]
fn local_entries_in_a_sum(x: V4) -> f64 {
    let mut f = 0.0;
    for i in 0..3 {
        let v = SVector::<f64, 2>::new(x[i], x[i + 1] * 2.0);
        f = f + v[0] * v[1] + x[i] * v[1].sin();
    }
    f
}

#[lens]
fn branch_in_a_sum(x: V4) -> f64 {
    let mut f = 0.0;
    for i in 0..3 {
        let e = if x[i] > 0.0 {
            x[i] * x[i + 1]
        } else {
            x[i + 1].sin() * x[i]
        };
        f += e;
    }
    f
}

#[lens]
fn whole_and_entries_in_a_sum(x: V4) -> f64 {
    let mut f = 0.0;
    for i in 0..3 {
        f = f + x.dot(&x) * x[i + 1] - x[i] * x[i];
    }
    f
}

#[lens]
fn nested_loop_in_a_sum(x: V4) -> f64 {
    let mut f = 0.0;
    for i in 0..3 {
        let mut p = x[i];
        for j in 0..2 {
            p = p * x[i + 1] + x[j];
        }
        f = f + p;
    }
    f
}

#[test]
fn entries_changes_added_in_the_order_the_body_reads_them() {
    let (one, big) = (1.0_f64, 1e16_f64);
    assert_ne!((one + big) - big, (-big + big) + one);
    assert_eq!(
        entry_read_three_times_rev(SVector::<f64, 2>::new(0.3, -0.2), 1.0),
        SVector::<f64, 2>::repeat((one + big) - big)
    );
    let x = V4::new(0.7, -0.4, 1.3, -1.1);
    let sums: [(&str, Checked); 4] = [
        (
            "local_entries_in_a_sum",
            (local_entries_in_a_sum, local_entries_in_a_sum_rev),
        ),
        ("branch_in_a_sum", (branch_in_a_sum, branch_in_a_sum_rev)),
        (
            "whole_and_entries_in_a_sum",
            (whole_and_entries_in_a_sum, whole_and_entries_in_a_sum_rev),
        ),
        (
            "nested_loop_in_a_sum",
            (nested_loop_in_a_sum, nested_loop_in_a_sum_rev),
        ),
    ];
    all_ok(x, &sums);
}

// More bodies whose reverse runs first to last with the entries' changes deferred: entries
// at several offsets (`x[i + 2]`, `x[5 - i]`), stepped and inclusive ranges (an `i64`
// counter, `..=` stepped and reversed), three sums at once, a matrix's `m[(r, c)]`, an array
// of vectors' `a[k][i]`, a `match` in the body, and a vector sum scaled by an entry.
#[lens]
fn entries_at_several_offsets(x: SVector<f64, 6>) -> f64 {
    let mut f = 0.0;
    for i in 0..4 {
        f = f + x[i] * x[i + 1] - x[i + 2] * x[5 - i] + x[i + 2].cos();
    }
    f
}

#[lens]
fn entries_over_stepped_and_inclusive_ranges(x: SVector<f64, 7>) -> f64 {
    let mut f = 0.0;
    for k in (0..6i64).step_by(2) {
        f = f + x[k as usize] * x[k as usize + 1];
    }
    for i in (0..=6).step_by(3) {
        f = f + x[i] * x[6 - i] * x[3];
    }
    for i in (0..=5).rev() {
        f -= x[i + 1] * x[i].exp();
    }
    f
}

#[lens]
fn three_sums_of_entries(x: V4) -> (f64, f64, f64) {
    let mut a = 0.0;
    let mut b = 1.0;
    let mut c = x[0];
    for i in 0..3 {
        a = a + x[i] * x[i + 1];
        b += x[i].exp() * x[i + 1];
        c -= x[i + 1] * x[i + 1];
    }
    (a, b, c)
}

#[lens]
fn matrix_entries_in_a_sum(m: SMatrix<f64, 3, 3>) -> f64 {
    let mut f = 0.0;
    for i in 0..3 {
        f = f + m[(i, i)] * m[(i, 2 - i)] + m[(0, i)] * m[(i, 0)];
    }
    f
}

#[lens]
fn array_entries_in_a_sum(a: [V4; 2]) -> f64 {
    let mut f = 0.0;
    for i in 0..4 {
        f = f + a[0][i] * a[1][3 - i] + a[i % 2][i];
    }
    f
}

#[lens]
fn match_in_a_sum(x: V4) -> f64 {
    let mut f = 0.0;
    for i in 0..4 {
        let e = match i % 3 {
            0 => x[i] * x[i],
            1 => x[(i + 1) % 4].sin() * x[i],
            _ => x[i] - x[0],
        };
        f += e;
    }
    f
}

#[lens]
fn vector_sum_of_entries(x: V4) -> V4 {
    let mut acc = V4::zeros();
    for i in 0..4 {
        acc = acc + x * x[i];
        acc += x.component_mul(&x) * x[3 - i];
    }
    acc
}

#[test]
fn entries_in_sums_of_every_shape() {
    let x6 = SVector::<f64, 6>::new(0.3, -0.2, 0.9, 1.1, -0.6, 0.4);
    ok(
        "entries_at_several_offsets",
        check_gradient(
            entries_at_several_offsets,
            entries_at_several_offsets_rev,
            x6,
            H,
        ),
    );
    let x7 = SVector::<f64, 7>::from_column_slice(&[0.3, -0.2, 0.9, 1.1, -0.6, 0.4, 0.8]);
    ok(
        "entries_over_stepped_and_inclusive_ranges",
        check_gradient(
            entries_over_stepped_and_inclusive_ranges,
            entries_over_stepped_and_inclusive_ranges_rev,
            x7,
            H,
        ),
    );
    let x = V4::new(0.7, -0.4, 1.3, -1.1);
    ok(
        "three_sums_of_entries",
        check_gradient(three_sums_of_entries, three_sums_of_entries_rev, x, H),
    );
    let m = SMatrix::<f64, 3, 3>::new(0.3, -0.2, 0.9, 1.1, -0.6, 0.4, 0.8, 0.5, -1.3);
    ok(
        "matrix_entries_in_a_sum",
        check_gradient(matrix_entries_in_a_sum, matrix_entries_in_a_sum_rev, m, H),
    );
    let a = [x, V4::new(-0.3, 0.9, 0.2, 1.7)];
    ok(
        "array_entries_in_a_sum",
        check_gradient(array_entries_in_a_sum, array_entries_in_a_sum_rev, a, H),
    );
    ok(
        "match_in_a_sum",
        check_gradient(match_in_a_sum, match_in_a_sum_rev, x, H),
    );
    ok(
        "vector_sum_of_entries",
        check_gradient(vector_sum_of_entries, vector_sum_of_entries_rev, x, H),
    );
    // `name_rev` (one frame, outside values read through references) against the pullback
    // of `name_vjp`: the same sweep, the same sums.
    let d = 0.7;
    let (_, pb) = matrix_entries_in_a_sum_vjp(m);
    assert!((matrix_entries_in_a_sum_rev(m, d) - pb(d)).amax() < 1e-12);
    let (_, pb) = match_in_a_sum_vjp(x);
    assert!((match_in_a_sum_rev(x, d) - pb(d)).amax() < 1e-12);
    let dv = V4::new(1.0, -2.0, 0.5, 0.25);
    let (_, pb) = vector_sum_of_entries_vjp(x);
    assert!((vector_sum_of_entries_rev(x, dv) - pb(dv)).amax() < 1e-12);
    let (_, pb) = entries_over_stepped_and_inclusive_ranges_vjp(x7);
    assert!((entries_over_stepped_and_inclusive_ranges_rev(x7, d) - pb(d)).amax() < 1e-12);
}

// Deferred entries of values that are not the function's arguments: an inner sum over a
// vector local to the outer sum's body (both loops run first to last; the outer sweep reads
// that vector's change after the inner loop), and an inner sum over a vector an outer loop
// carries (the outer loop keeps the reverse order).
#[lens]
fn inner_sum_over_a_local_vector(x: V4) -> f64 {
    let mut f = 0.0;
    for i in 0..3 {
        let v = x * x[i];
        let mut g = 0.0;
        for j in 0..4 {
            g = g + v[j] * x[j] + v[3 - j];
        }
        f = f + g;
    }
    f
}

#[lens]
fn inner_sum_over_a_carried_vector(x: V4) -> f64 {
    let mut v = x;
    let mut out = 0.0;
    for _k in 0..3 {
        let mut g = 0.0;
        for j in 0..3 {
            g = g + v[j] * v[j + 1];
        }
        v = v * g.tanh() + x;
        out = out * 0.5 + g;
    }
    out + v[0]
}

#[test]
fn deferred_entries_of_locals_and_carried_values() {
    for x in [V4::new(0.7, -0.4, 1.3, -1.1), V4::new(-0.3, 0.9, 0.2, 1.7)] {
        ok(
            "inner_sum_over_a_local_vector",
            check_gradient(
                inner_sum_over_a_local_vector,
                inner_sum_over_a_local_vector_rev,
                x,
                H,
            ),
        );
        ok(
            "inner_sum_over_a_carried_vector",
            check_gradient(
                inner_sum_over_a_carried_vector,
                inner_sum_over_a_carried_vector_rev,
                x,
                H,
            ),
        );
        let (_, pb) = inner_sum_over_a_local_vector_vjp(x);
        assert!((inner_sum_over_a_local_vector_rev(x, 0.7) - pb(0.7)).amax() < 1e-12);
    }
}

// Entries of a `#[param]` argument (the parameter-only pullback adds the same changes) and
// of a heap matrix given away after the loop.
#[lens]
fn parameter_entries_in_a_sum(#[param] w: V4, #[param] s: f64, x: V4) -> f64 {
    let mut f = 0.0;
    for i in 0..3 {
        f = f + w[i] * x[i + 1] * s + w[i + 1] * w[i] - x[i] * s;
    }
    f
}

#[lens]
fn heap_entries_in_a_sum(m: HeapMatrix<f64, 3, 2>, s: f64) -> f64 {
    let mut f = 0.0;
    for r in 0..3 {
        f = f + m[(r, 1)] * m[(r, 0)] * s + m[r];
    }
    let n = m * SVector::<f64, 2>::new(0.5, -1.5);
    f + n.norm_squared()
}

#[test]
fn parameter_and_heap_entries_in_sums() {
    let (w, x) = (V4::new(0.5, -1.5, 2.0, 0.1), V4::new(0.7, -0.4, 1.3, -1.1));
    ok(
        "parameter_entries_in_a_sum",
        check_gradient(
            |(w, s, x)| parameter_entries_in_a_sum(w, s, x),
            |(w, s, x), d| parameter_entries_in_a_sum_rev(w, s, x, d),
            (w, 0.8, x),
            H,
        ),
    );
    let p = (w, 0.8);
    let ((dw, ds), _) = ParameterEntriesInASum.changes(&p, x, 1.0);
    let mut only = <(V4, f64) as Tangent>::zeros();
    let (_, pull) = ParameterEntriesInASum.vjp_params(&p, x);
    pull(1.0, &mut only);
    assert!((only.0 - dw).amax() < 1e-12 && (only.1 - ds).abs() < 1e-12);
    let m = HeapMatrix::<f64, 3, 2>::from_fn(|r, c| 0.3 * r as f64 - 0.5 * c as f64 + 0.2);
    ok(
        "heap_entries_in_a_sum",
        check_gradient(
            |(m, s): (HeapMatrix<f64, 3, 2>, f64)| heap_entries_in_a_sum(m, s),
            |(m, s), d| heap_entries_in_a_sum_rev(m, s, d),
            (m, 0.7),
            H,
        ),
    );
}

// In `para!`: a sum over a sub-model's outputs at an entry of the input, the sub-model called
// in every iteration on the input scaled by an entry.
para! {
    /// `sum_i cell(x x_i)_i x_{i+1 mod 3}`.
    pub struct EntrySum {
        cell: Dense<3, 3, f64>,
    }
    fn forward(&self, x: SVector<f64, 3>) -> f64 {
        let mut f = 0.0;
        for i in 0..3 {
            let h = self.cell(x * x[i]);
            f = f + h[i] * x[(i + 1) % 3];
        }
        f
    }
}

#[test]
fn entries_in_a_para_sum() {
    let model = EntrySum { cell: Dense::new() };
    let p = model.init(6);
    let x = SVector::<f64, 3>::new(0.3, -0.6, 0.9);
    let f = |(p, x): (<EntrySum as Init>::Param, SVector<f64, 3>)| model.forward(&p, x);
    let r = |(p, x): (<EntrySum as Init>::Param, SVector<f64, 3>), dy| model.changes(&p, x, dy);
    ok("entry_sum_in_para", check_gradient(f, r, (p.clone(), x), H));
    let mut only = <EntrySum as Init>::Param::zeros();
    let (_, pull) = model.vjp_params(&p, x);
    pull(1.0, &mut only);
    let (dp, _) = model.changes(&p, x, 1.0);
    assert!((*only.cell.w - *dp.cell.w).amax() < 1e-12);
    assert!((only.cell.b - dp.cell.b).amax() < 1e-12);
}
