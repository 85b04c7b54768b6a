//! `#[lens]` and `para!` written inside `macro_rules!` macros, as a crate generating a family
//! of functions does: the names the macros declare and the names they place at the user's
//! expressions resolve alike whatever hygiene context the tokens come from (they did not:
//! "cannot find `__pb1`", "expected value, found module `self`"). Every gradient is checked
//! against central finite differences. Generated code must not warn.
#![deny(warnings)]

use paralens::prelude::*;
use paralens::{GradCheck, check_gradient};

const H: f64 = 1e-6;

fn ok(name: &str, r: GradCheck) {
    assert!(r.passes(1e-7), "{name}: {r}");
}

/// Passes a whole item through: its tokens come from the caller, `#[lens]` from the macro.
macro_rules! through {
    ($($item:tt)*) => {
        #[lens]
        $($item)*
    };
}

through! {
    fn square(x: f64) -> f64 {
        x * x
    }
}

through! {
    fn mixed(x: SVector<f64, 3>, y: f64) -> f64 {
        let mut s = 0.0;
        for i in 0..3 {
            if x[i] > 0.0 {
                s += x[i] * y;
            } else {
                s -= y * y;
            }
        }
        let n = match s > 1.0 {
            true => {
                s = s * 2.0;
                2usize
            }
            false => 1,
        };
        let mut v = x;
        v[1] = s * n as f64;
        v.norm_squared() + square(y).sin()
    }
}

/// Builds the body itself, with the caller's name and constant in it: the body's tokens
/// come from the macro, the name and the constant from the caller.
macro_rules! weighted_sum_of_squares {
    ($name:ident, $k:expr) => {
        #[lens]
        fn $name(x: SVector<f64, 2>) -> f64 {
            let mut acc = 0.0;
            for i in 0..2 {
                acc += x[i] * x[i] * $k;
            }
            acc.sin()
        }
    };
}

weighted_sum_of_squares!(twice_squares, 2.0);

macro_rules! model {
    ($($t:tt)*) => {
        para! { $($t)* }
    };
}

model! {
    /// A layer then a sum, written through a macro.
    pub struct Through {
        l: Dense<2, 3, f64>,
    }
    fn forward(&self, x: SVector<f64, 2>) -> f64 {
        let h = self.l(x);
        (h * 2.0).norm_squared()
    }
}

#[test]
fn a_lens_passed_through_a_macro_matches_finite_differences() {
    assert_eq!(square_rev(2.0, 1.0), 4.0);
    ok("square", check_gradient(square, square_rev, 0.7, H));
    for x in [
        SVector::<f64, 3>::new(0.5, -1.25, 2.0),
        SVector::<f64, 3>::new(-0.5, -1.25, 0.1),
    ] {
        ok(
            "mixed",
            check_gradient(
                |(x, y): (SVector<f64, 3>, f64)| mixed(x, y),
                |(x, y), d| mixed_rev(x, y, d),
                (x, 0.8),
                H,
            ),
        );
    }
}

#[test]
fn a_lens_built_by_a_macro_matches_finite_differences() {
    let x = SVector::<f64, 2>::new(0.3, 0.4);
    let acc: f64 = 2.0 * (0.09 + 0.16);
    assert!((twice_squares(x) - acc.sin()).abs() < 1e-15);
    ok(
        "twice_squares",
        check_gradient(twice_squares, twice_squares_rev, x, H),
    );
}

#[test]
fn a_para_model_passed_through_a_macro_matches_finite_differences() {
    let m = Through::default();
    let p = m.init(7);
    ok(
        "through",
        check_gradient(
            |(p, x): (ThroughParams, SVector<f64, 2>)| m.forward(&p, x),
            |(p, x), d| m.changes(&p, x, d),
            (p, SVector::<f64, 2>::new(0.5, -0.3)),
            H,
        ),
    );
}
