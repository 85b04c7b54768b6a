//! Mutation as rebinding: `x = e` and `x op= e` on `let mut` bindings, at the top level, in
//! blocks, in `if` without `else` (the untaken branch keeps the old value), in `if let` and in
//! `match` arms, each with the derivative of the program as written (checked against central
//! finite differences). Regression tests for the silent wrong gradient of an assignment inside
//! an `if` with no `else`, which used to be emitted as forward-only code. Generated code must
//! not warn.
#![deny(warnings)]
// Both `x = x + e` and `x += e` are tested on purpose: they are lowered differently.
// `match` on a comparison is tested on purpose too.
#![allow(clippy::assign_op_pattern, clippy::single_match)]

use paralens::prelude::*;
use paralens::{GradCheck, check_gradient};

const H: f64 = 1e-6;
const TOL: f64 = 1e-7;

fn ok(name: &str, r: GradCheck) {
    assert!(r.passes(TOL), "{name}: {r}");
}

// The example: f = x^2 + x when `flag`, else x; d = 2x + 1 or 1.
#[lens]
fn if_without_else(x: f64, flag: bool) -> f64 {
    let mut acc = 0.0;
    if flag {
        acc = acc + x * x;
    }
    acc + x
}

#[test]
fn assignment_in_if_without_else_is_differentiated() {
    assert_eq!(if_without_else_rev(0.7, true, 1.0), 2.0 * 0.7 + 1.0);
    assert_eq!(if_without_else_rev(0.7, false, 1.0), 1.0);
    for flag in [true, false] {
        ok(
            "if_without_else",
            check_gradient(
                |x| if_without_else(x, flag),
                |x, d| if_without_else_rev(x, flag, d),
                0.7,
                H,
            ),
        );
    }
}

// The same with `+=` (and the other compound operators); d = 2x + 1 when `flag`.
#[lens]
fn compound_in_if(x: f64, flag: bool) -> f64 {
    let mut acc = 0.0;
    if flag {
        acc += x * x;
    }
    acc + x
}

// acc = ((x - 1) * x) / (x + 2) - x: every compound operator once.
#[lens]
fn compound_operators(x: f64) -> f64 {
    let mut acc = x;
    acc -= 1.0;
    acc *= x;
    acc /= x + 2.0;
    acc -= x;
    acc
}

#[test]
fn compound_assignment_is_differentiated() {
    assert_eq!(compound_in_if_rev(0.7, true, 1.0), 2.0 * 0.7 + 1.0);
    for flag in [true, false] {
        ok(
            "compound_in_if",
            check_gradient(
                |x| compound_in_if(x, flag),
                |x, d| compound_in_if_rev(x, flag, d),
                0.7,
                H,
            ),
        );
    }
    ok(
        "compound_operators",
        check_gradient(compound_operators, compound_operators_rev, 0.9, H),
    );
    ok(
        "compound_operators",
        check_gradient(compound_operators, compound_operators_rev, -1.3, H),
    );
}

// `if let` without `else`: y = x * x^(k-1) = x^k when k > 0, else x.
#[lens]
fn if_let_without_else(x: f64, k: u32) -> f64 {
    let mut y = x;
    if let Some(j) = k.checked_sub(1) {
        y = y * x.powi(j as i32);
    }
    y
}

#[test]
fn assignment_in_if_let_is_differentiated() {
    for k in [3, 1, 0] {
        ok(
            "if_let_without_else",
            check_gradient(
                |x| if_let_without_else(x, k),
                |x, d| if_let_without_else_rev(x, k, d),
                1.1,
                H,
            ),
        );
    }
    assert_eq!(if_let_without_else_rev(2.0, 3, 1.0), 12.0);
}

// A differentiated value replaced by a constant in one branch: there its change is 0.
#[lens]
fn overwritten(x: f64, y: f64) -> f64 {
    let mut a = x * y;
    if x > 0.0 {
        a = 2.0;
    }
    a + y
}

#[test]
fn a_value_overwritten_by_a_constant_gets_no_change() {
    let f = |(x, y): (f64, f64)| overwritten(x, y);
    let r = |(x, y): (f64, f64), d: f64| overwritten_rev(x, y, d);
    assert_eq!(r((0.5, 3.0), 1.0), (0.0, 1.0));
    assert_eq!(r((-0.5, 3.0), 1.0), (3.0, 1.0 - 0.5));
    ok("overwritten", check_gradient(f, r, (0.5, 3.0), H));
    ok("overwritten", check_gradient(f, r, (-0.5, 3.0), H));
}

// Assignments in `match` arms, nested `if`s, and a plain block; two variables mutated at once.
#[lens]
fn arms(x: f64, y: f64, n: usize) -> f64 {
    let mut a = x;
    let mut b = y;
    match n {
        0 => a = a * y,
        1 => {
            b *= x;
            if x > 1.0 {
                a += b.sin();
            }
        }
        _ => {}
    }
    {
        a = a + b * b;
    }
    a * b
}

#[test]
fn assignments_in_match_arms_nested_ifs_and_blocks() {
    let f = |n| move |(x, y): (f64, f64)| arms(x, y, n);
    let r = |n| move |(x, y): (f64, f64), d: f64| arms_rev(x, y, n, d);
    for n in 0..3 {
        for p in [(0.4, 1.3), (1.6, -0.7)] {
            ok("arms", check_gradient(f(n), r(n), p, H));
        }
    }
}

// A forward-only counter mutated beside differentiated values keeps working as written.
#[lens]
fn counter(x: f64) -> f64 {
    let mut n = 0;
    let mut y = x;
    if x > 0.0 {
        n += 2;
        y = y * x;
    }
    n += 1;
    y * (n as f64)
}

#[test]
fn forward_only_mutation_beside_rebinding() {
    assert_eq!(counter(2.0), 12.0);
    assert_eq!(counter(-2.0), -2.0);
    ok("counter", check_gradient(counter, counter_rev, 0.8, H));
    ok("counter", check_gradient(counter, counter_rev, -0.8, H));
}

// Vectors too: the nalgebra `+=` of a differentiated product.
#[lens]
fn vector_accumulate(x: SVector<f64, 3>, y: SVector<f64, 3>, twice: bool) -> f64 {
    let mut acc = x.component_mul(&y);
    if twice {
        acc += y * 2.0;
    }
    acc.dot(&x)
}

#[test]
fn vector_compound_assignment() {
    let x = SVector::<f64, 3>::new(0.3, -1.2, 2.0);
    let y = SVector::<f64, 3>::new(1.5, 0.4, -0.6);
    for twice in [true, false] {
        let f = |(x, y): (SVector<f64, 3>, SVector<f64, 3>)| vector_accumulate(x, y, twice);
        let r = |(x, y), d| vector_accumulate_rev(x, y, twice, d);
        ok("vector_accumulate", check_gradient(f, r, (x, y), H));
    }
}

para! {
    /// A term added only on one side: the issue's `para!` case (relative error 1.84 before).
    pub struct MaybeResidual { l: Dense<2, 2, f64> }
    fn forward(&self, x: SVector<f64, 2>) -> SVector<f64, 2> {
        let mut h = self.l(x);
        if x.sum() > 0.0 {
            h += x.component_mul(&x);
        }
        h
    }
}

#[test]
fn assignment_in_if_without_else_inside_para() {
    let m = MaybeResidual::default();
    let p = m.init(5);
    for x in [
        SVector::<f64, 2>::new(0.7, -0.3),
        SVector::<f64, 2>::new(-0.7, 0.3),
    ] {
        ok(
            "maybe_residual",
            check_gradient(
                |(p, x): (MaybeResidualParams, SVector<f64, 2>)| m.forward(&p, x),
                |(p, x), d| m.changes(&p, x, d),
                (p.clone(), x),
                H,
            ),
        );
    }
}

// Regression tests found by probing: each gave a wrong value or gradient before its fix.

// A `let` in the untaken-by-assignment branch shadowed the binding handed on after it.
// a = x * y when y > 0, else x; f = a^2.
#[lens]
fn shadow_in_other_branch(x: f64, y: f64) -> f64 {
    let mut a = x;
    if y > 0.0 {
        a = a * y;
    } else {
        let a = 5.0;
        let _ = a;
    }
    a * a
}

// A `let` after the assignment in the same branch: a = 2x when x > 0; f = a^2.
#[lens]
fn shadow_after_assignment(x: f64) -> f64 {
    let mut a = x;
    if x > 0.0 {
        a = a * 2.0;
        let a = 0.0;
        let _ = a;
    }
    a * a
}

// A `match` arm's pattern binding hides `a`; the other arm doubles it. f = a^2.
#[lens]
fn shadow_by_pattern(x: f64, k: i32) -> f64 {
    let mut a = x;
    match (k > 0).then_some(3.0) {
        Some(a) => assert!(a > 0.0),
        None => a *= 2.0,
    }
    a * a
}

#[test]
fn a_binding_hidden_in_a_branch_is_still_handed_on() {
    for p in [(0.5, -1.0), (0.5, 2.0)] {
        let (x, y) = p;
        assert_eq!(
            shadow_in_other_branch_vjp(x, y).0,
            shadow_in_other_branch(x, y)
        );
        ok(
            "shadow_in_other_branch",
            check_gradient(
                |(x, y): (f64, f64)| shadow_in_other_branch(x, y),
                |(x, y), d| shadow_in_other_branch_rev(x, y, d),
                p,
                H,
            ),
        );
    }
    for x in [0.5, -0.5] {
        assert_eq!(shadow_after_assignment_vjp(x).0, shadow_after_assignment(x));
        ok(
            "shadow_after_assignment",
            check_gradient(shadow_after_assignment, shadow_after_assignment_rev, x, H),
        );
    }
    for k in [1, -1] {
        assert_eq!(shadow_by_pattern_vjp(0.5, k).0, shadow_by_pattern(0.5, k));
        ok(
            "shadow_by_pattern",
            check_gradient(
                |x| shadow_by_pattern(x, k),
                |x, d| shadow_by_pattern_rev(x, k, d),
                0.5,
                H,
            ),
        );
    }
}

// Forward-only data assigned from a read of a differentiated value (the assignment was
// dropped): f = x^2 when x > 0, else 3x.
#[lens]
#[allow(unused_assignments)] // the first value of `pos` is never read, as written
fn flag_from_comparison(x: f64) -> f64 {
    let mut pos = false;
    pos = x > 0.0;
    if pos { x * x } else { 3.0 * x }
}

// An index chosen inside a branch from a differentiated vector: f = v[argmax v] when the sum
// is positive; d = e_argmax.
#[lens]
fn index_from_branch(v: SVector<f64, 3>) -> f64 {
    let mut best = 0;
    if v.sum() > 0.0 {
        best = v.imax();
    }
    v.dot(&SVector::<f64, 3>::ith(best, 1.0))
}

// A count of comparisons (`+=` of forward-only data), a `match` on a comparison and a
// `mut` argument assigned in the body: f = n * x * y (+ x when x > 1).
#[lens]
fn count_match_and_mut_argument(mut x: f64, y: f64) -> f64 {
    let mut n = 0usize;
    n += (x > 0.0) as usize;
    n += (y > 0.0) as usize;
    match x > 1.0 {
        true => x += 1.0,
        false => {}
    }
    x = x * y;
    x * (n as f64)
}

#[test]
fn forward_only_data_from_reads_of_differentiated_values() {
    for x in [1.0, -1.0] {
        assert_eq!(flag_from_comparison_vjp(x).0, flag_from_comparison(x));
        ok(
            "flag_from_comparison",
            check_gradient(flag_from_comparison, flag_from_comparison_rev, x, H),
        );
    }
    let v = SVector::<f64, 3>::new(0.1, 0.9, 0.3);
    assert_eq!(index_from_branch_vjp(v).0, 0.9);
    assert_eq!(
        index_from_branch_rev(v, 1.0),
        SVector::<f64, 3>::new(0.0, 1.0, 0.0)
    );
    ok(
        "index_from_branch",
        check_gradient(index_from_branch, index_from_branch_rev, v, H),
    );
    let f = |(x, y): (f64, f64)| count_match_and_mut_argument(x, y);
    let r = |(x, y): (f64, f64), d: f64| count_match_and_mut_argument_rev(x, y, d);
    for p in [(0.5, 2.0), (1.5, 2.0), (-0.5, 2.0), (1.5, -2.0)] {
        assert_eq!(count_match_and_mut_argument_vjp(p.0, p.1).0, f(p));
        ok("count_match_and_mut_argument", check_gradient(f, r, p, H));
    }
}

// Forward-only data chosen by a comparison of a differentiated value: an `i32` exponent by
// `if`, by `match` and by a block, and a flag set in a branch. Each is data, not
// differentiated: the derivative is the one of the branch taken (k y^(k-1), ...).
#[lens]
fn exponent_by_if(y: f64) -> f64 {
    let k = if y > 1.0 { 2 } else { 3 };
    y.powi(k)
}

#[lens]
fn exponent_by_match(y: f64) -> f64 {
    let k = match y > 1.0 {
        true => 2,
        false => 3,
    };
    let scale = { 0.5 };
    scale * y.powi(k)
}

#[lens]
fn flag_set_in_a_branch(y: f64) -> f64 {
    let mut big = false;
    if y > 1.0 {
        big = true;
    }
    if big { y * y } else { 3.0 * y }
}

#[test]
fn data_chosen_by_a_comparison_is_not_differentiated() {
    for y in [0.6f64, 1.7] {
        let k = if y > 1.0 { 2.0 } else { 3.0 };
        let want = k * y.powf(k - 1.0);
        assert!((exponent_by_if_rev(y, 1.0) - want).abs() < 1e-12, "{y}");
        assert!(
            (exponent_by_match_rev(y, 1.0) - 0.5 * want).abs() < 1e-12,
            "{y}"
        );
        let want = if y > 1.0 { 2.0 * y } else { 3.0 };
        assert!(
            (flag_set_in_a_branch_rev(y, 1.0) - want).abs() < 1e-12,
            "{y}"
        );
        ok(
            "exponent_by_if",
            check_gradient(exponent_by_if, exponent_by_if_rev, y, H),
        );
        ok(
            "exponent_by_match",
            check_gradient(exponent_by_match, exponent_by_match_rev, y, H),
        );
        ok(
            "flag_set_in_a_branch",
            check_gradient(flag_set_in_a_branch, flag_set_in_a_branch_rev, y, H),
        );
    }
}

// A branch that rebinds a differentiated binding and whose value is forward-only data (a
// length, a count): the value is data after the branch (it was taken for a differentiated
// value, and `n as f64` refused as a cast of one), whatever its type (no change needed).
#[lens]
fn data_valued_match(x: f64, #[nodiff] label: Option<String>) -> f64 {
    let mut y = x;
    let n = match label {
        Some(s) => {
            y = y * s.len() as f64;
            s.len()
        }
        None => {
            y = y * y;
            0
        }
    };
    y + n as f64 * x
}

#[lens]
fn data_valued_if_in_a_loop(x: nalgebra::SVector<f64, 4>) -> f64 {
    let mut acc = 0.0;
    let mut seen = 0usize;
    for i in 0..4 {
        let step = if x[i] > 0.0 {
            acc += x[i] * x[i];
            2usize
        } else {
            acc -= x[i];
            1
        };
        seen += step;
        acc = acc * (seen as f64).sqrt();
    }
    acc
}

#[test]
fn a_branch_valued_in_forward_only_data_is_data_after_it() {
    // y = 2x (label "ab"), + 2x: 4x; y = x^2 (no label): 2x.
    assert!((data_valued_match(1.5, Some("ab".into())) - 6.0).abs() < 1e-12);
    assert!((data_valued_match_rev(1.5, Some("ab".into()), 1.0) - 4.0).abs() < 1e-12);
    assert!((data_valued_match_rev(1.5, None, 1.0) - 3.0).abs() < 1e-12);
    for label in [Some("abc".to_string()), None] {
        ok(
            "data_valued_match",
            check_gradient(
                |x| data_valued_match(x, label.clone()),
                |x, d| data_valued_match_rev(x, label.clone(), d),
                0.8,
                H,
            ),
        );
    }
    let x = nalgebra::SVector::<f64, 4>::new(0.5, -1.25, 2.0, -0.75);
    ok(
        "data_valued_if_in_a_loop",
        check_gradient(data_valued_if_in_a_loop, data_valued_if_in_a_loop_rev, x, H),
    );
    // The same loop in plain Rust: the value as written.
    let (mut acc, mut seen) = (0.0f64, 0usize);
    for i in 0..4 {
        let step = if x[i] > 0.0 {
            acc += x[i] * x[i];
            2
        } else {
            acc -= x[i];
            1
        };
        seen += step;
        acc *= (seen as f64).sqrt();
    }
    assert!((data_valued_if_in_a_loop(x) - acc).abs() < 1e-12);
}

// The same in a loop whose body has no other effect, valued in a float: the loop is
// recomputed in the reverse (the declaration and the assignments of the value are pure).
#[lens]
fn float_valued_if_in_a_loop(x: nalgebra::SVector<f64, 4>) -> f64 {
    let mut acc = 0.0;
    for i in 0..4 {
        let mut t = x[i];
        let k = if t > 0.0 {
            t = t * t;
            2.0
        } else {
            t = t * 3.0;
            1.0
        };
        acc = acc * t + k;
    }
    acc
}

#[test]
fn a_float_valued_data_branch_in_a_recomputed_loop() {
    let x = nalgebra::SVector::<f64, 4>::new(0.5, -1.25, 2.0, -0.75);
    let mut acc = 0.0f64;
    for i in 0..4 {
        let (t, k) = if x[i] > 0.0 {
            (x[i] * x[i], 2.0)
        } else {
            (x[i] * 3.0, 1.0)
        };
        acc = acc * t + k;
    }
    assert!((float_valued_if_in_a_loop(x) - acc).abs() < 1e-12);
    ok(
        "float_valued_if_in_a_loop",
        check_gradient(
            float_valued_if_in_a_loop,
            float_valued_if_in_a_loop_rev,
            x,
            H,
        ),
    );
}

// A lowered branch with a block that diverges (`None => panic!()`): the sweeps pair each
// block's value with its pullback after it, which tripped `unreachable_code` at `#[lens]` (an
// error under `#![deny(warnings)]`). The lint is denied here, so the warning fails the build.
#[deny(unreachable_code)]
mod diverging_block {
    use paralens::prelude::*;

    #[lens]
    pub fn scaled(x: f64, #[nodiff] scale: Option<f64>) -> f64 {
        let mut y = x;
        let k = match scale {
            Some(s) => {
                y = y * s;
                1.5
            }
            None => panic!("no scale"),
        };
        y * k * x
    }
}

#[test]
fn a_diverging_block_in_a_lowered_branch_is_differentiated_without_a_warning() {
    use diverging_block::{scaled, scaled_rev};
    let s = Some(3.0);
    ok(
        "diverging",
        check_gradient(|x| scaled(x, s), |x, d| scaled_rev(x, s, d), 0.8, H),
    );
    assert!(std::panic::catch_unwind(|| scaled_rev(0.8, None, 1.0)).is_err());
}

// Defect 2 of the issue: a statement-form `if`/`else` that only mentions a differentiated
// value (here in a `println!` in both arms) failed with E0282 at `#[lens]`. It compiles, and
// the printing changes nothing in the derivative: d = 3x^2.
#[lens]
fn printing_in_both_arms(x: f64, verbose: bool) -> f64 {
    let y = x * x * x;
    if verbose {
        println!("x = {x}, y = {y}");
    } else {
        println!("y = {y}");
    }
    y
}

#[test]
fn a_statement_if_else_mentioning_a_differentiated_value() {
    for verbose in [true, false] {
        assert_eq!(printing_in_both_arms_rev(0.5, verbose, 1.0), 0.75);
        ok(
            "printing_in_both_arms",
            check_gradient(
                |x| printing_in_both_arms(x, verbose),
                |x, d| printing_in_both_arms_rev(x, verbose, d),
                -1.3,
                H,
            ),
        );
    }
}
