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

use paralens::check_gradient;
use paralens::prelude::*;

mod common;
use common::{H, ok};

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

// ---- Mutation and branching as users write them (a reviewer's probes, merged here) ----
/// Review probes: mutation and branching as real users write them. Each generated reverse is
/// checked against central finite differences at points covering every branch, and the forward
/// value of the generated `_vjp` is compared with the function as written.
mod as_users_write_it {
    // The probes are written the way users write code, lint-worthy patterns included.
    #![allow(
        clippy::assign_op_pattern,
        clippy::needless_else,
        clippy::manual_swap,
        unused_assignments
    )]

    use crate::common::{H, TOL};

    use paralens::prelude::*;
    use paralens::{GradCheck, check_gradient};

    thread_local!(static BAD: std::cell::Cell<bool> = const { std::cell::Cell::new(false) });

    fn ok(name: &str, r: GradCheck) {
        if !r.passes(TOL) {
            println!("GRADIENT {name}: {r}");
            BAD.with(|b| b.set(true));
        }
    }

    fn same(name: &str, written: f64, generated: f64) {
        if (written - generated).abs() > 1e-12 * written.abs().max(1.0) {
            println!("VALUE {name}: as written {written}, generated _vjp {generated}");
            BAD.with(|b| b.set(true));
        }
    }

    fn done() {
        assert!(!BAD.with(|b| b.get()), "see above");
    }

    type V2 = SVector<f64, 2>;
    type V3 = SVector<f64, 3>;

    // 1. if / else-if chain, a different mutation in each arm, two variables.
    #[lens]
    fn chain(x: f64, y: f64) -> f64 {
        let mut a = x;
        let mut b = y;
        if x > 1.0 {
            a *= y;
        } else if x > 0.0 {
            b -= x * x;
        } else if y > 0.0 {
            a = b;
            b = 2.0;
        } else {
            a /= y;
        }
        a * b + a
    }

    #[test]
    fn p01_chain() {
        for p in [(1.5, 0.7), (0.5, 0.7), (-0.5, 0.7), (-0.5, -0.7)] {
            ok(
                "chain",
                check_gradient(
                    |(x, y): (f64, f64)| chain(x, y),
                    |(x, y), d| chain_rev(x, y, d),
                    p,
                    H,
                ),
            );
            same("chain", chain(p.0, p.1), chain_vjp(p.0, p.1).0);
        }
        done();
    }

    // 2. match with guards, reading the differentiated value in a guard.
    #[lens]
    fn guards(x: f64, k: i32) -> f64 {
        let mut a = x * x;
        match k {
            n if n < 0 => a -= x,
            0 => {}
            n if n % 2 == 0 && x > 0.5 => {
                a *= x;
                a += 1.0;
            }
            2 | 4 => a = a.sin(),
            _ => a = 3.0,
        }
        a + x
    }

    #[test]
    fn p02_guards() {
        for k in [-1, 0, 2, 3] {
            for x in [0.8, 0.2] {
                ok(
                    "guards",
                    check_gradient(|x| guards(x, k), |x, d| guards_rev(x, k, d), x, H),
                );
                same("guards", guards(x, k), guards_vjp(x, k).0);
            }
        }
        done();
    }

    // 3. Nested plain blocks, a square by compound assignment, a let in the block.
    #[lens]
    fn nested_blocks(x: f64, y: f64) -> f64 {
        let mut a = x;
        {
            a += y;
            {
                a *= a;
            }
            let t = a * 0.5;
            a -= t;
        }
        a
    }

    #[test]
    fn p03_nested_blocks() {
        let p = (0.3, 1.2);
        ok(
            "nested_blocks",
            check_gradient(
                |(x, y): (f64, f64)| nested_blocks(x, y),
                |(x, y), d| nested_blocks_rev(x, y, d),
                p,
                H,
            ),
        );
        same(
            "nested_blocks",
            nested_blocks(p.0, p.1),
            nested_blocks_vjp(p.0, p.1).0,
        );
        done();
    }

    // 4. Several variables mutated in one branch; one of them read in a later branch.
    #[lens]
    fn later(x: f64, y: f64) -> f64 {
        let mut a = x;
        let mut b = y;
        let mut c = 1.0;
        if x > 0.0 {
            a = a * y;
            b += a;
            c = b * x;
        }
        if y > 0.0 {
            c += a * b;
        } else {
            b = c - a;
        }
        a + b * c
    }

    #[test]
    fn p04_later() {
        for p in [(0.6, 0.9), (0.6, -0.9), (-0.6, 0.9), (-0.6, -0.9)] {
            ok(
                "later",
                check_gradient(
                    |(x, y): (f64, f64)| later(x, y),
                    |(x, y), d| later_rev(x, y, d),
                    p,
                    H,
                ),
            );
            same("later", later(p.0, p.1), later_vjp(p.0, p.1).0);
        }
        done();
    }

    // 5. Every compound operator, each inside a branch, with differentiated right-hand sides.
    #[lens]
    fn all_compound(x: f64, y: f64, k: usize) -> f64 {
        let mut a = x + 1.0;
        match k {
            0 => a += y * x,
            1 => a -= y.exp(),
            2 => a *= y - x,
            _ => a /= y * y + 1.0,
        }
        if k > 1 {
            a += a;
        }
        a * y
    }

    #[test]
    fn p05_all_compound() {
        for k in 0..4 {
            let p = (0.4, 0.7);
            ok(
                "all_compound",
                check_gradient(
                    |(x, y): (f64, f64)| all_compound(x, y, k),
                    |(x, y), d| all_compound_rev(x, y, k, d),
                    p,
                    H,
                ),
            );
            same(
                "all_compound",
                all_compound(p.0, p.1, k),
                all_compound_vjp(p.0, p.1, k).0,
            );
        }
        done();
    }

    // 6. Reassigning to a constant, then compounding the constant with a differentiated value.
    #[lens]
    fn to_const(x: f64, y: f64) -> f64 {
        let mut a = x * y;
        if x > 0.0 {
            a = 3.0;
            a *= y;
        } else {
            a = 0.0;
        }
        a += x;
        a
    }

    #[test]
    fn p06_to_const() {
        for p in [(0.5, 1.5), (-0.5, 1.5)] {
            ok(
                "to_const",
                check_gradient(
                    |(x, y): (f64, f64)| to_const(x, y),
                    |(x, y), d| to_const_rev(x, y, d),
                    p,
                    H,
                ),
            );
            same("to_const", to_const(p.0, p.1), to_const_vjp(p.0, p.1).0);
        }
        done();
    }

    // 7. Reassigning from another mutable variable; a swap through a temporary in a branch.
    #[lens]
    fn swap(x: f64, y: f64) -> f64 {
        let mut a = x * 2.0;
        let mut b = y + 1.0;
        if x < y {
            let t = a;
            a = b;
            b = t;
        }
        a = a - b;
        b = a * b;
        a * 3.0 + b
    }

    #[test]
    fn p07_swap() {
        for p in [(0.2, 0.9), (0.9, 0.2)] {
            ok(
                "swap",
                check_gradient(
                    |(x, y): (f64, f64)| swap(x, y),
                    |(x, y), d| swap_rev(x, y, d),
                    p,
                    H,
                ),
            );
            same("swap", swap(p.0, p.1), swap_vjp(p.0, p.1).0);
        }
        done();
    }

    // 8a. In a branch: assign the outer binding, then shadow it with `let`, then use the shadow.
    #[lens]
    fn shadow_after_assign(x: f64, y: f64) -> f64 {
        let mut a = x;
        let mut b = 0.0;
        if y > 0.0 {
            a = a * y;
            let a = a * 3.0;
            b = a + 1.0;
        }
        a + b
    }

    #[test]
    fn p08a_shadow_after_assign() {
        for p in [(0.5, 0.8), (0.5, -0.8)] {
            same(
                "shadow_after_assign",
                shadow_after_assign(p.0, p.1),
                shadow_after_assign_vjp(p.0, p.1).0,
            );
            ok(
                "shadow_after_assign",
                check_gradient(
                    |(x, y): (f64, f64)| shadow_after_assign(x, y),
                    |(x, y), d| shadow_after_assign_rev(x, y, d),
                    p,
                    H,
                ),
            );
        }
        done();
    }

    // 8b. Shadow with `let` in an inner block of a branch, then assign the outer one after it.
    #[lens]
    fn shadow_inner_block(x: f64, y: f64) -> f64 {
        let mut a = x;
        let mut s = 0.0;
        if x > 0.0 {
            {
                let a = a * y;
                s = a + y;
            }
            a = a + s;
        }
        a * s
    }

    #[test]
    fn p08b_shadow_inner_block() {
        for p in [(0.5, 0.8), (-0.5, 0.8)] {
            same(
                "shadow_inner_block",
                shadow_inner_block(p.0, p.1),
                shadow_inner_block_vjp(p.0, p.1).0,
            );
            ok(
                "shadow_inner_block",
                check_gradient(
                    |(x, y): (f64, f64)| shadow_inner_block(x, y),
                    |(x, y), d| shadow_inner_block_rev(x, y, d),
                    p,
                    H,
                ),
            );
        }
        done();
    }

    // 8c. Shadow in the *other* branch (the one that leaves the outer binding alone).
    #[lens]
    fn shadow_other_branch(x: f64, y: f64) -> f64 {
        let mut a = x;
        let mut b = y;
        if y > 0.0 {
            a = a * y;
        } else {
            let a = y * 5.0;
            b = b + a;
        }
        a + b
    }

    #[test]
    fn p08c_shadow_other_branch() {
        for p in [(0.5, 0.8), (0.5, -0.8)] {
            same(
                "shadow_other_branch",
                shadow_other_branch(p.0, p.1),
                shadow_other_branch_vjp(p.0, p.1).0,
            );
            ok(
                "shadow_other_branch",
                check_gradient(
                    |(x, y): (f64, f64)| shadow_other_branch(x, y),
                    |(x, y), d| shadow_other_branch_rev(x, y, d),
                    p,
                    H,
                ),
            );
        }
        done();
    }

    fn scale_of(k: i32) -> Option<f64> {
        (k > 0).then_some(0.5)
    }

    // 8d. An `if let` whose pattern binds the same name as a mutable outer binding.
    #[lens]
    fn iflet_same_name(x: f64, k: i32) -> f64 {
        let mut a = x * 2.0;
        let mut w = 1.0;
        if let Some(a) = scale_of(k) {
            w = a;
        } else {
            a = a * x;
        }
        a * w
    }

    #[test]
    fn p08d_iflet_same_name() {
        for o in [1, -1] {
            let x = 0.7;
            same(
                "iflet_same_name",
                iflet_same_name(x, o),
                iflet_same_name_vjp(x, o).0,
            );
            ok(
                "iflet_same_name",
                check_gradient(
                    |x| iflet_same_name(x, o),
                    |x, d| iflet_same_name_rev(x, o, d),
                    x,
                    H,
                ),
            );
        }
        done();
    }

    // 9. `let mut` of tuple elements (from a tuple literal and from a lens call).
    #[lens]
    fn pair(x: f64, y: f64) -> (f64, f64) {
        (x * y, x - y)
    }

    #[lens]
    fn tuple_elems(x: f64, y: f64) -> f64 {
        let (mut a, b) = (x * y, x + y);
        let (mut p, mut q) = pair(x, b);
        if a > b {
            a -= b;
            q *= a;
        } else {
            p = p + q;
        }
        a * b + p * q
    }

    #[test]
    fn p09_tuple_elems() {
        for p in [(2.0, 3.0), (0.3, 0.4)] {
            ok(
                "tuple_elems",
                check_gradient(
                    |(x, y): (f64, f64)| tuple_elems(x, y),
                    |(x, y), d| tuple_elems_rev(x, y, d),
                    p,
                    H,
                ),
            );
            same(
                "tuple_elems",
                tuple_elems(p.0, p.1),
                tuple_elems_vjp(p.0, p.1).0,
            );
        }
        done();
    }

    // 10. A forward-only counter mutated in several branches beside differentiated mutation.
    #[lens]
    fn counter2(x: f64, y: f64) -> f64 {
        let mut n = 0usize;
        let mut steps = 1;
        let mut acc = x;
        if x > 0.0 {
            n += 1;
            acc *= y;
        } else if y > 0.0 {
            n = 5;
            steps *= 3;
        }
        match n {
            0 => acc -= y,
            _ => {
                n -= 1;
                acc += x * (n as f64);
            }
        }
        acc * (steps as f64) + (n as f64)
    }

    #[test]
    fn p10_counter2() {
        for p in [(0.5, 0.5), (-0.5, 0.5), (-0.5, -0.5)] {
            ok(
                "counter2",
                check_gradient(
                    |(x, y): (f64, f64)| counter2(x, y),
                    |(x, y), d| counter2_rev(x, y, d),
                    p,
                    H,
                ),
            );
            same("counter2", counter2(p.0, p.1), counter2_vjp(p.0, p.1).0);
        }
        done();
    }

    // 11. `if` as a statement with a differentiated `println!` inside.
    #[lens]
    fn printing(x: f64) -> f64 {
        let mut a = x;
        if x > 0.5 {
            println!("a = {}, x^2 = {}", a, x * x);
            a *= x;
        }
        if a < 0.0 {
            println!("{a}");
        }
        eprintln!("a = {a:.3}");
        a
    }

    #[test]
    fn p11_printing() {
        for x in [0.8, 0.2, -0.3] {
            ok("printing", check_gradient(printing, printing_rev, x, H));
            same("printing", printing(x), printing_vjp(x).0);
        }
        done();
    }

    // 12. Branches that return a value and mutate.
    #[lens]
    fn value_and_mutate(x: f64, y: f64) -> f64 {
        let mut a = x;
        let mut b = y;
        let v = if x > 0.0 {
            a *= y;
            a + 1.0
        } else {
            b -= x;
            a * b
        };
        let pos = y > 0.0;
        let w = match pos {
            true => {
                b = b * v;
                b - a
            }
            false => a,
        };
        v * a + w * b
    }

    #[test]
    fn p12_value_and_mutate() {
        for p in [(0.5, 0.8), (-0.5, 0.8), (0.5, -0.8), (-0.5, -0.8)] {
            ok(
                "value_and_mutate",
                check_gradient(
                    |(x, y): (f64, f64)| value_and_mutate(x, y),
                    |(x, y), d| value_and_mutate_rev(x, y, d),
                    p,
                    H,
                ),
            );
            same(
                "value_and_mutate",
                value_and_mutate(p.0, p.1),
                value_and_mutate_vjp(p.0, p.1).0,
            );
        }
        done();
    }

    // 13. An assignment as the tail expression of a branch (no semicolon), and in a block value.
    #[lens]
    fn tail_assign(x: f64, y: f64) -> f64 {
        let mut a = x;
        if y > 0.0 {
            a = a * y
        }
        let b = {
            a += x;
            a * 2.0
        };
        a * b
    }

    #[test]
    fn p13_tail_assign() {
        for p in [(0.5, 0.8), (0.5, -0.8)] {
            ok(
                "tail_assign",
                check_gradient(
                    |(x, y): (f64, f64)| tail_assign(x, y),
                    |(x, y), d| tail_assign_rev(x, y, d),
                    p,
                    H,
                ),
            );
            same(
                "tail_assign",
                tail_assign(p.0, p.1),
                tail_assign_vjp(p.0, p.1).0,
            );
        }
        done();
    }

    // 14. A forward-only flag set from a comparison of a differentiated value (statement form).
    #[lens]
    fn flag_stmt(x: f64) -> f64 {
        let mut pos = false;
        pos = x > 0.0;
        if pos { x * x } else { 3.0 * x }
    }

    #[test]
    fn p14_flag_stmt() {
        for x in [1.0, -1.0] {
            same("flag_stmt", flag_stmt(x), flag_stmt_vjp(x).0);
            ok("flag_stmt", check_gradient(flag_stmt, flag_stmt_rev, x, H));
        }
        done();
    }

    // 14b. The same flag set inside a branch (statement form).
    #[lens]
    fn flag_in_branch(x: f64, y: f64) -> f64 {
        let mut big = false;
        if y > 0.0 {
            big = x > 1.0;
        }
        if big { x * y } else { x + y }
    }

    #[test]
    fn p14b_flag_in_branch() {
        for p in [(2.0, 0.5), (0.5, 0.5), (2.0, -0.5)] {
            same(
                "flag_in_branch",
                flag_in_branch(p.0, p.1),
                flag_in_branch_vjp(p.0, p.1).0,
            );
            ok(
                "flag_in_branch",
                check_gradient(
                    |(x, y): (f64, f64)| flag_in_branch(x, y),
                    |(x, y), d| flag_in_branch_rev(x, y, d),
                    p,
                    H,
                ),
            );
        }
        done();
    }

    // 14c. A forward-only float set from a no-change method of a differentiated value.
    #[lens]
    fn sign_stmt(x: f64) -> f64 {
        let mut s = 1.0;
        s = x.signum();
        s * x * x
    }

    #[test]
    fn p14c_sign_stmt() {
        for x in [0.7, -0.7] {
            same("sign_stmt", sign_stmt(x), sign_stmt_vjp(x).0);
            ok("sign_stmt", check_gradient(sign_stmt, sign_stmt_rev, x, H));
        }
        done();
    }

    // 14d. The same with `*=` (a forward-only float compounded with forward-only data read from x).
    #[lens]
    fn sign_compound(x: f64) -> f64 {
        let mut s = 2.0;
        s *= x.signum();
        s * x * x
    }

    #[test]
    fn p14d_sign_compound() {
        for x in [0.7, -0.7] {
            same("sign_compound", sign_compound(x), sign_compound_vjp(x).0);
            ok(
                "sign_compound",
                check_gradient(sign_compound, sign_compound_rev, x, H),
            );
        }
        done();
    }

    // 15. Deep nesting: if inside a match arm inside a block inside an if-let, several variables.
    #[lens]
    fn deep(x: f64, y: f64, k: u32) -> f64 {
        let mut a = x;
        let mut b = y;
        if let Some(j) = k.checked_sub(1) {
            {
                match j {
                    0 => {
                        if x > y {
                            a *= b;
                        } else {
                            b *= a;
                            a = b + 1.0;
                        }
                    }
                    1 => b = a - b,
                    _ => {}
                }
                a += 0.5;
            }
            b -= a * 0.25;
        }
        a * b
    }

    #[test]
    fn p15_deep() {
        for k in 0..4 {
            for p in [(0.9, 0.3), (0.3, 0.9)] {
                ok(
                    "deep",
                    check_gradient(
                        |(x, y): (f64, f64)| deep(x, y, k),
                        |(x, y), d| deep_rev(x, y, k, d),
                        p,
                        H,
                    ),
                );
                same("deep", deep(p.0, p.1, k), deep_vjp(p.0, p.1, k).0);
            }
        }
        done();
    }

    // 16. Assignment that reads a new value of another variable, several rebinds in a row, neg.
    #[lens]
    fn chain_reads(x: f64, y: f64) -> f64 {
        let mut a = x;
        let mut b = y;
        a = b;
        b = a * x;
        a = -a;
        a = a.abs();
        b = b.max(a);
        let c = a;
        a += 1.0;
        a * b + c
    }

    #[test]
    fn p16_chain_reads() {
        for p in [(0.5, 0.8), (2.0, -0.3)] {
            ok(
                "chain_reads",
                check_gradient(
                    |(x, y): (f64, f64)| chain_reads(x, y),
                    |(x, y), d| chain_reads_rev(x, y, d),
                    p,
                    H,
                ),
            );
            same(
                "chain_reads",
                chain_reads(p.0, p.1),
                chain_reads_vjp(p.0, p.1).0,
            );
        }
        done();
    }

    // 17. Re-declaring with `let mut` (shadowing a mutable with a mutable), then mutating.
    #[lens]
    fn redeclare(x: f64, y: f64) -> f64 {
        let mut a = x;
        a *= 2.0;
        let mut a = a + y;
        if y > 0.0 {
            a *= y;
        }
        a
    }

    #[test]
    fn p17_redeclare() {
        for p in [(0.5, 0.8), (0.5, -0.8)] {
            ok(
                "redeclare",
                check_gradient(
                    |(x, y): (f64, f64)| redeclare(x, y),
                    |(x, y), d| redeclare_rev(x, y, d),
                    p,
                    H,
                ),
            );
            same("redeclare", redeclare(p.0, p.1), redeclare_vjp(p.0, p.1).0);
        }
        done();
    }

    // 18. A #[nodiff] float argument compounded into a differentiated binding.
    #[lens]
    fn nodiff_scale(x: f64, #[nodiff] s: f64) -> f64 {
        let mut a = x;
        if s > 0.0 {
            a *= s;
        }
        a /= s + 2.0;
        a * x
    }

    #[test]
    fn p18_nodiff_scale() {
        for s in [0.5, -0.5] {
            ok(
                "nodiff_scale",
                check_gradient(
                    |x| nodiff_scale(x, s),
                    |x, d| nodiff_scale_rev(x, s, d),
                    0.7,
                    H,
                ),
            );
            same(
                "nodiff_scale",
                nodiff_scale(0.7, s),
                nodiff_scale_vjp(0.7, s).0,
            );
        }
        done();
    }

    // 19. A forward-only binding that becomes differentiated in one branch only.
    #[lens]
    fn becomes_diff(x: f64, y: f64) -> f64 {
        let mut a = 1.0;
        if x > 0.0 {
            a = x * y;
        } else {
            a += 2.0;
        }
        a * y
    }

    #[test]
    fn p19_becomes_diff() {
        for p in [(0.5, 0.8), (-0.5, 0.8)] {
            ok(
                "becomes_diff",
                check_gradient(
                    |(x, y): (f64, f64)| becomes_diff(x, y),
                    |(x, y), d| becomes_diff_rev(x, y, d),
                    p,
                    H,
                ),
            );
            same(
                "becomes_diff",
                becomes_diff(p.0, p.1),
                becomes_diff_vjp(p.0, p.1).0,
            );
        }
        done();
    }

    // 21. A match arm that assigns and whose arm value is used.
    #[lens]
    fn arm_values(x: f64, k: usize) -> f64 {
        let mut a = x;
        let mut b = x * x;
        let r = match k {
            0 => {
                a = b;
                a * 2.0
            }
            1 => {
                b += a;
                b
            }
            _ => x,
        };
        r + a * b
    }

    #[test]
    fn p21_arm_values() {
        for k in 0..3 {
            ok(
                "arm_values",
                check_gradient(|x| arm_values(x, k), |x, d| arm_values_rev(x, k, d), 0.6, H),
            );
            same("arm_values", arm_values(0.6, k), arm_values_vjp(0.6, k).0);
        }
        done();
    }

    // ------------------------------------ vectors ------------------------------------------------

    // 22. if / else-if with vector compound assignments, scaling, reassignment from another mut.
    #[lens]
    fn v_branchy(x: V3, y: V3, s: f64) -> f64 {
        let mut acc = x * s;
        let mut t = y;
        if s > 0.0 {
            acc -= y.component_mul(&x);
            t *= s;
        } else if x.sum() > 0.0 {
            acc = t;
            t = x + y;
        }
        acc.dot(&t) + acc.sum() * s
    }

    #[test]
    fn p22_v_branchy() {
        let x = V3::new(0.3, -0.2, 0.8);
        let y = V3::new(1.1, 0.4, -0.5);
        for s in [0.7, -0.7] {
            for xx in [x, -x] {
                ok(
                    "v_branchy",
                    check_gradient(
                        |(x, y, s): (V3, V3, f64)| v_branchy(x, y, s),
                        |(x, y, s), d| v_branchy_rev(x, y, s, d),
                        (xx, y, s),
                        H,
                    ),
                );
                same("v_branchy", v_branchy(xx, y, s), v_branchy_vjp(xx, y, s).0);
            }
        }
        done();
    }

    // 23. Statement-form if/else, both branches mutate a vector.
    #[lens]
    fn v_stmt_ifelse(x: V2, y: V2) -> f64 {
        let mut v = x;
        if x.dot(&y) > 0.0 {
            v += y;
        } else {
            v = v.component_mul(&y);
        }
        v.dot(&v)
    }

    #[test]
    fn p23_v_stmt_ifelse() {
        let y = V2::new(0.4, -1.3);
        for x in [V2::new(1.0, 0.2), V2::new(-1.0, 0.2)] {
            ok(
                "v_stmt_ifelse",
                check_gradient(
                    |(x, y): (V2, V2)| v_stmt_ifelse(x, y),
                    |(x, y), d| v_stmt_ifelse_rev(x, y, d),
                    (x, y),
                    H,
                ),
            );
            same(
                "v_stmt_ifelse",
                v_stmt_ifelse(x, y),
                v_stmt_ifelse_vjp(x, y).0,
            );
        }
        done();
    }

    // 24. Vector reset to a constant in one arm, scaled by division in another, match with guard.
    #[lens]
    fn v_match(x: V3, y: V3, k: i32) -> V3 {
        let mut v = x.component_mul(&y);
        let mut w = y;
        match k {
            0 => v = V3::zeros(),
            n if n > 0 && x.sum() > 0.0 => {
                v /= 2.0;
                w -= x;
            }
            _ => v *= x.dot(&y),
        }
        v + w * x.sum()
    }

    #[test]
    fn p24_v_match() {
        let x = V3::new(0.3, -0.2, 0.8);
        let y = V3::new(1.1, 0.4, -0.5);
        for k in [0, 1, -1] {
            for xx in [x, -x] {
                ok(
                    "v_match",
                    check_gradient(
                        |(x, y): (V3, V3)| v_match(x, y, k),
                        |(x, y), d| v_match_rev(x, y, k, d),
                        (xx, y),
                        H,
                    ),
                );
                let a = v_match(xx, y, k);
                let b = v_match_vjp(xx, y, k).0;
                same("v_match", (a - b).norm(), 0.0);
            }
        }
        done();
    }

    // 25. Vector accumulator with a counter and a scalar accumulator in the same branches.
    #[lens]
    fn v_accumulators(x: V2, y: V2) -> f64 {
        let mut total = 0.0;
        let mut v = x;
        let mut n = 0;
        if x.sum() > 0.0 {
            total += x.dot(&y);
            v = v * 2.0 - y;
            n += 1;
        }
        if y.sum() > 0.0 {
            total -= v.sum();
            v += x.component_mul(&v);
            n += 1;
        }
        total * (n as f64 + 1.0) + v.dot(&y)
    }

    #[test]
    fn p25_v_accumulators() {
        for (x, y) in [
            (V2::new(0.5, 0.3), V2::new(0.2, 0.4)),
            (V2::new(-0.5, 0.3), V2::new(0.2, 0.4)),
            (V2::new(0.5, 0.3), V2::new(-0.2, -0.4)),
        ] {
            ok(
                "v_accumulators",
                check_gradient(
                    |(x, y): (V2, V2)| v_accumulators(x, y),
                    |(x, y), d| v_accumulators_rev(x, y, d),
                    (x, y),
                    H,
                ),
            );
            same(
                "v_accumulators",
                v_accumulators(x, y),
                v_accumulators_vjp(x, y).0,
            );
        }
        done();
    }

    // ------------------------------------ para! --------------------------------------------------

    para! {
        /// A sub-model applied again in one branch (weight sharing through a branch), a counter,
        /// and a compound with a sub-model call on the right.
        pub struct Branchy { a: Dense<2, 2, f64>, b: Dense<2, 2, f64> }
        fn forward(&self, x: SVector<f64, 2>) -> SVector<f64, 2> {
            let mut h = self.a(x);
            let mut k = 0;
            if h.sum() > 0.0 {
                h = self.b(h);
                k += 1;
            } else {
                h -= self.a(h);
            }
            match k {
                0 => h *= 2.0,
                _ => {}
            }
            h += self.b(x) * 0.5;
            h
        }
    }

    para! {
        /// Scalar outputs, two mutable bindings and an else-if chain reading a mutated value.
        pub struct Scored { l: Dense<2, 2, f64> }
        fn forward(&self, x: SVector<f64, 2>, y: SVector<f64, 2>) -> f64 {
            let mut s = 0.0;
            let mut h = self.l(x);
            if x.sum() > 1.0 {
                s = h.dot(&y);
            } else if h.sum() > 0.0 {
                h = self.l(h + y);
                s += h.sum();
            } else {
                s -= x.dot(&x);
            }
            s * h.sum()
        }
    }

    #[test]
    fn p26_para_branchy() {
        let m = Branchy::default();
        for seed in [1, 2, 3, 4] {
            let p = m.init(seed);
            for x in [V2::new(0.7, -0.3), V2::new(-0.7, 0.3), V2::new(1.2, 0.9)] {
                ok(
                    "branchy",
                    check_gradient(
                        |(p, x): (BranchyParams, V2)| m.forward(&p, x),
                        |(p, x), d| m.changes(&p, x, d),
                        (p.clone(), x),
                        H,
                    ),
                );
                let a = m.forward(&p, x);
                let b = m.vjp(&p, x).0;
                same("branchy", (a - b).norm(), 0.0);
            }
        }
        done();
    }

    #[test]
    fn p27_para_scored() {
        let m = Scored::default();
        for seed in [1, 2, 3] {
            let p = m.init(seed);
            for (x, y) in [
                (V2::new(0.9, 0.8), V2::new(0.1, -0.4)),
                (V2::new(0.3, -0.1), V2::new(0.5, 0.4)),
                (V2::new(-0.3, -0.6), V2::new(0.5, 0.4)),
            ] {
                ok(
                    "scored",
                    check_gradient(
                        |(p, x, y): (ScoredParams, V2, V2)| m.forward(&p, (x, y)),
                        |(p, x, y), d| {
                            let (dp, (dx, dy)) = m.changes(&p, (x, y), d);
                            (dp, dx, dy)
                        },
                        (p.clone(), x, y),
                        H,
                    ),
                );
                same("scored", m.forward(&p, (x, y)), m.vjp(&p, (x, y)).0);
            }
        }
        done();
    }

    // 28. argmax kept in a mutable index, set in a branch (a no-change method of a diff value).
    #[lens]
    fn argmax_pick(v: V3) -> f64 {
        let mut best = 0;
        if v.sum() > 0.0 {
            best = v.imax();
        }
        let e = V3::ith(best, 1.0);
        v.dot(&e) * v.sum()
    }

    #[test]
    fn p28_argmax_pick() {
        for v in [V3::new(0.1, 0.9, 0.3), V3::new(-0.1, -0.9, 0.3)] {
            same("argmax_pick", argmax_pick(v), argmax_pick_vjp(v).0);
            ok(
                "argmax_pick",
                check_gradient(argmax_pick, argmax_pick_rev, v, H),
            );
        }
        done();
    }

    // 29. Reassigning from if / match expressions, else-if-let, nested lens calls, map, powi,
    //     type-annotated `let mut`.
    #[lens]
    fn sq(x: f64) -> f64 {
        x * x
    }

    #[lens]
    fn from_exprs(x: f64, y: f64, k: i32) -> f64 {
        let mut a: f64 = x;
        a = if y > 0.0 { a * y } else { y - a };
        a += match k {
            0 => x,
            _ => sq(y),
        };
        if k > 5 {
            a = 0.0;
        } else if let Some(j) = k.checked_add(1) {
            a = sq(a).powi(j);
        }
        a * x
    }

    #[test]
    fn p29_from_exprs() {
        for k in [0, 1, 7] {
            for p in [(0.5, 0.8), (0.5, -0.8)] {
                ok(
                    "from_exprs",
                    check_gradient(
                        |(x, y): (f64, f64)| from_exprs(x, y, k),
                        |(x, y), d| from_exprs_rev(x, y, k, d),
                        p,
                        H,
                    ),
                );
                same(
                    "from_exprs",
                    from_exprs(p.0, p.1, k),
                    from_exprs_vjp(p.0, p.1, k).0,
                );
            }
        }
        done();
    }

    // 30. Const-generic vector function with mutation, map of a lens function, tuple output.
    #[lens]
    fn generic_mut<const N: usize>(x: SVector<f64, N>, s: f64) -> (f64, SVector<f64, N>) {
        let mut v = x * s;
        let mut total = 0.0;
        if s > 0.0 {
            v = v.map(sq);
            total += v.sum();
        } else {
            v -= x;
        }
        total *= s;
        (total + v.dot(&x), v)
    }

    #[test]
    fn p30_generic_mut() {
        let x = SVector::<f64, 4>::new(0.2, -0.7, 1.1, 0.4);
        for s in [0.6, -0.6] {
            ok(
                "generic_mut",
                check_gradient(
                    |(x, s): (SVector<f64, 4>, f64)| generic_mut(x, s),
                    |(x, s), d| generic_mut_rev::<4>(x, s, d),
                    (x, s),
                    H,
                ),
            );
            same(
                "generic_mut",
                generic_mut(x, s).0,
                generic_mut_vjp(x, s).0.0,
            );
        }
        done();
    }

    // 31. The shadow mix-up of 8c seen through composition: a lens that calls it.
    #[lens]
    fn uses_shadow(x: f64, y: f64) -> f64 {
        let s = shadow_other_branch(x, y);
        s * s
    }

    #[test]
    fn p31_uses_shadow() {
        for p in [(0.5, 0.8), (0.5, -0.8)] {
            ok(
                "uses_shadow",
                check_gradient(
                    |(x, y): (f64, f64)| uses_shadow(x, y),
                    |(x, y), d| uses_shadow_rev(x, y, d),
                    p,
                    H,
                ),
            );
        }
        done();
    }

    // 32. Match arm pattern binding shadowing a mutable that another arm assigns.
    #[lens]
    fn arm_pattern_shadow(x: f64, k: i32) -> f64 {
        let mut a = x;
        let mut n = 0;
        match scale_of(k) {
            Some(a) => n = (a * 10.0) as i32,
            None => a = a * x,
        }
        a + n as f64
    }

    #[test]
    fn p32_arm_pattern_shadow() {
        for k in [1, -1] {
            same(
                "arm_pattern_shadow",
                arm_pattern_shadow(0.7, k),
                arm_pattern_shadow_vjp(0.7, k).0,
            );
            ok(
                "arm_pattern_shadow",
                check_gradient(
                    |x| arm_pattern_shadow(x, k),
                    |x, d| arm_pattern_shadow_rev(x, k, d),
                    0.7,
                    H,
                ),
            );
        }
        done();
    }

    // 33. A forward-only zero vector that becomes differentiated in one branch; `else`-only
    //     assignment; assert with a format string reading a mutated value.
    #[lens]
    fn zero_start(x: V3, y: V3) -> f64 {
        let mut acc = V3::zeros();
        let mut s = 0.0;
        if x.sum() > 0.0 {
            acc += x;
        } else {
        }
        if y.sum() > 0.0 {
        } else {
            s = y.dot(&acc);
            acc -= y * 2.0;
        }
        assert!(s.is_finite(), "s = {s}, acc = {acc}");
        debug_assert!(acc.sum().is_finite());
        acc.dot(&y) + s
    }

    #[test]
    fn p33_zero_start() {
        let x = V3::new(0.3, -0.2, 0.8);
        let y = V3::new(1.1, 0.4, -0.5);
        for (xx, yy) in [(x, y), (-x, y), (x, -y), (-x, -y)] {
            ok(
                "zero_start",
                check_gradient(
                    |(x, y): (V3, V3)| zero_start(x, y),
                    |(x, y), d| zero_start_rev(x, y, d),
                    (xx, yy),
                    H,
                ),
            );
            same("zero_start", zero_start(xx, yy), zero_start_vjp(xx, yy).0);
        }
        done();
    }

    // 34. A #[param] argument mutated through, used through the generated Para impl.
    #[lens]
    fn gated_scale(#[param] w: f64, x: f64) -> f64 {
        let mut a = x;
        let mut g = w;
        if a > 0.0 {
            a *= w;
            g = g * g;
        }
        a + g
    }

    #[test]
    fn p34_param_mut() {
        for x in [0.6, -0.6] {
            let w = 1.3;
            ok(
                "gated_scale",
                check_gradient(
                    |(w, x): (f64, f64)| gated_scale(w, x),
                    |(w, x), d| gated_scale_rev(w, x, d),
                    (w, x),
                    H,
                ),
            );
            let (y, pb) = Para::vjp(&GatedScale, &w, x);
            same("gated_scale", gated_scale(w, x), y);
            let mut dw = 0.0;
            let dx = pb(1.0, &mut dw);
            let (rw, rx) = gated_scale_rev(w, x, 1.0);
            same("gated_scale dw", rw, dw);
            same("gated_scale dx", rx, dx);
        }
        done();
    }
}
