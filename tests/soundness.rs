//! Issue 42's reproducers: results that were silently wrong because a name decided what is
//! pure or which reverse a call reaches. Each is checked against the value computed by hand
//! and against central finite differences.
#![deny(warnings)]
#![allow(clippy::assign_op_pattern, clippy::needless_range_loop)]

use core::cell::Cell;
use paralens::prelude::*;

// ---- 1. Effects in a loop body are taped, never run again in the reverse ----

thread_local! {
    static FLIPS: Cell<usize> = const { Cell::new(0) };
}

/// A coin that comes up 1 at its first throw and 0 after, and counts its throws: an effect.
fn coin<T>() -> bool {
    FLIPS.with(|c| {
        let n = c.get();
        c.set(n + 1);
        n == 0
    })
}

#[allow(non_snake_case)]
fn COIN() -> bool {
    coin::<()>()
}

struct Rng;
impl Rng {
    fn draw<T>(&self) -> f64 {
        if coin::<T>() { 1.0 } else { 0.0 }
    }
}
static RNG: Rng = Rng;

fn flips() -> usize {
    FLIPS.with(Cell::get)
}

fn reset() {
    FLIPS.with(|c| c.set(0));
}

#[lens]
fn masked_turbofish_method(x: SVector<f64, 2>) -> f64 {
    let mut s = 0.0;
    for i in 0..2 {
        let m = RNG.draw::<f64>();
        s = s + m * x[i] * x[i];
    }
    s
}

#[lens]
fn masked_turbofish_call(x: SVector<f64, 2>) -> f64 {
    let mut s = 0.0;
    for i in 0..2 {
        let m = if coin::<f64>() { 1.0 } else { 0.0 };
        s = s + m * x[i] * x[i];
    }
    s
}

#[lens]
fn masked_upper_case_call(x: SVector<f64, 2>) -> f64 {
    let mut s = 0.0;
    for i in 0..2 {
        let m = if COIN() { 1.0 } else { 0.0 };
        s = s + m * x[i] * x[i];
    }
    s
}

#[lens]
fn masked_in_condition(x: SVector<f64, 2>) -> f64 {
    let mut s = 0.0;
    for i in 0..2 {
        if coin::<f64>() {
            s = s + x[i] * x[i];
        }
    }
    s
}

#[lens]
fn masked_upper_case_in_condition(x: SVector<f64, 2>) -> f64 {
    let mut s = 0.0;
    for i in 0..2 {
        if COIN() {
            s = s + x[i] * x[i];
        }
    }
    s
}

#[test]
fn effects_in_a_loop_run_once_and_the_reverse_sees_their_results() {
    type F = fn(SVector<f64, 2>, f64) -> SVector<f64, 2>;
    let table: [(&str, F); 5] = [
        ("turbofish method", masked_turbofish_method_rev),
        ("turbofish call", masked_turbofish_call_rev),
        ("upper-case call", masked_upper_case_call_rev),
        ("turbofish call in a condition", masked_in_condition_rev),
        (
            "upper-case call in a condition",
            masked_upper_case_in_condition_rev,
        ),
    ];
    let x = SVector::<f64, 2>::new(0.5, 1.0);
    for (name, rev) in table {
        reset();
        // The mask is 1, 0: f = x0^2, whose gradient is [2 x0, 0] = [1, 0]; run again in
        // the reverse, the mask would be 0, 0.
        let d = rev(x, 1.0);
        assert_eq!(d, SVector::<f64, 2>::new(1.0, 0.0), "{name}");
        assert_eq!(flips(), 2, "{name}: the effect ran {} times", flips());
    }
}
