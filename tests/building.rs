//! Building data from differentiated values and taking it apart: `SVector::new(a, b, c)` and
//! the other nalgebra constructors from entries (row by row for matrices), array literals,
//! arrays as arguments and results, and `let [a, b, c] = v` patterns. Every gradient is
//! checked against central finite differences in f64. Generated code must not warn.
#![deny(warnings)]

use paralens::check_gradient;
use paralens::nalgebra::{Matrix2x3, Vector3};
use paralens::prelude::*;

mod common;
use common::{H, ok};

// The example: `SVector::new(x, y * 2.0)` used to fail with "no function `new_vjp`".
#[lens]
fn from_scalars(x: f64, y: f64) -> f64 {
    let v = SVector::<f64, 2>::new(x, y * 2.0);
    let w = Vector3::new(x * y, 1.0, y.sin());
    v.dot(&v) + w.norm_squared() * v[1]
}

#[test]
fn vectors_built_from_scalars() {
    let f = |(x, y): (f64, f64)| from_scalars(x, y);
    let r = |(x, y): (f64, f64), d: f64| from_scalars_rev(x, y, d);
    for p in [(0.3, -0.8), (1.1, 0.4)] {
        ok("from_scalars", check_gradient(f, r, p, H));
    }
}

// A matrix's `new` takes its entries row by row: each entry's change must come from its own
// place (a column-major mix-up would swap the changes of b and d).
#[lens]
fn matrix_from_entries(a: f64, b: f64, c: f64, d: f64) -> f64 {
    let m = Matrix2x3::new(a, b, c, d, a * b, 0.5);
    let weights = Matrix2x3::<f64>::new(1.0, 2.0, 3.0, 4.0, 5.0, 6.0);
    m.component_mul(&weights).sum()
}

#[test]
fn matrices_built_row_by_row() {
    let (da, db, dc, dd) = matrix_from_entries_rev(0.5, -1.5, 2.0, 0.25, 1.0);
    assert_eq!(
        (da, db, dc, dd),
        (1.0 + 5.0 * -1.5, 2.0 + 5.0 * 0.5, 3.0, 4.0)
    );
}

// Array literals, arrays as arguments and results, and `let [..] = ..` patterns.
#[lens]
fn arrays(v: [f64; 3], s: f64) -> [f64; 2] {
    let [a, b, c] = v;
    let w = [a * s, b + c, (c * a).exp()];
    let [p, _, r] = w;
    [p + r, w[1] * s]
}

#[test]
fn array_literals_arguments_results_and_patterns() {
    let f = |(v, s): ([f64; 3], f64)| arrays(v, s);
    let r = |(v, s): ([f64; 3], f64), d: [f64; 2]| arrays_rev(v, s, d);
    ok("arrays", check_gradient(f, r, ([0.3, -0.6, 0.9], 1.4), H));
}

/// A struct of differentiated values: its change is a value of the same struct.
#[derive(Clone, Copy, Debug, PartialEq, Tangent)]
pub struct Pose {
    pub at: SVector<f64, 2>,
    pub angle: f64,
}

// Field access on an argument, a struct built as the result, and `.0` of a tuple.
#[lens]
fn step_pose(p: Pose, speed: f64) -> Pose {
    let heading = SVector::<f64, 2>::new(p.angle.cos(), p.angle.sin());
    let pair = (p.at + heading * speed, p.angle * 0.9);
    Pose {
        at: pair.0,
        angle: pair.1 + p.at[0] * 0.1,
    }
}

#[lens]
fn pose_score(p: Pose, speed: f64) -> f64 {
    let q = step_pose(p, speed);
    q.at.norm_squared() + q.angle * q.angle + p.angle
}

#[test]
fn structs_as_arguments_fields_and_results() {
    let p = Pose {
        at: SVector::<f64, 2>::new(0.4, -1.1),
        angle: 0.7,
    };
    ok(
        "pose_score",
        check_gradient(
            |(p, s): (Pose, f64)| pose_score(p, s),
            |(p, s): (Pose, f64), d: f64| pose_score_rev(p, s, d),
            (p, 1.3),
            H,
        ),
    );
}

// Regressions from a user probe: a value built from entries and then only indexed (its
// adjoint's type came from nothing and did not infer), and a tuple struct built by its
// constructor.
#[lens]
fn built_then_indexed(a: f64, b: f64) -> f64 {
    let v = SVector::<f64, 2>::new(a, b);
    let m = Matrix2x3::new(a, b, 1.0, a * b, 2.0, b);
    v[0] * v[1] + m[(1, 0)] * m[5] + SVector::<f64, 3>::new(a, b, a * b)[2]
}

#[test]
fn values_built_from_entries_and_only_indexed() {
    let f = |(a, b): (f64, f64)| built_then_indexed(a, b);
    let r = |(a, b): (f64, f64), d: f64| built_then_indexed_rev(a, b, d);
    ok("built_then_indexed", check_gradient(f, r, (0.7, -1.3), H));
}

/// A tuple struct of differentiated values.
#[derive(Clone, Copy, Debug, PartialEq, Tangent)]
pub struct Pair(pub f64, pub SVector<f64, 2>);

#[lens]
fn swap_scale(w: Pair, s: f64) -> Pair {
    Pair(w.1[0] * w.0 * s, w.1 * w.0)
}

#[lens]
fn pair_score(w: Pair, s: f64) -> f64 {
    let q = swap_scale(w, s);
    q.0 * q.0 + q.1.norm_squared()
}

#[test]
fn tuple_structs_built_by_their_constructor() {
    let w = Pair(0.6, SVector::<f64, 2>::new(-0.4, 1.2));
    ok(
        "pair_score",
        check_gradient(
            |(w, s): (Pair, f64)| pair_score(w, s),
            |(w, s): (Pair, f64), d: f64| pair_score_rev(w, s, d),
            (w, 1.7),
            H,
        ),
    );
}

/// A tuple struct named through its module.
pub mod geom {
    use paralens::prelude::*;

    /// A weight and a point.
    #[derive(Clone, Copy, Debug, PartialEq, Tangent)]
    pub struct Pt(pub f64, pub SVector<f64, 2>);
}

// A tuple struct built through a module path (`geom::Pt(..)`, `crate::geom::Pt(..)`), as
// `Pt(..)` is: it was called as a function, "cannot find `Pt_vjp` in `geom`" (a prober's
// finding).
#[lens]
fn module_tuple_struct(w: geom::Pt, s: f64) -> f64 {
    let a = geom::Pt(w.1[0] * s, w.1 * w.0);
    let b = crate::geom::Pt(a.0 * a.0, a.1 * s);
    b.0 + b.1.norm_squared() + a.1[1]
}

#[test]
fn tuple_structs_built_through_a_module_path() {
    let w = geom::Pt(0.6, SVector::<f64, 2>::new(-0.4, 1.2));
    ok(
        "module_tuple_struct",
        check_gradient(
            |(w, s): (geom::Pt, f64)| module_tuple_struct(w, s),
            |(w, s): (geom::Pt, f64), d: f64| module_tuple_struct_rev(w, s, d),
            (w, 1.7),
            H,
        ),
    );
}

// `from_fn` with a closure reading differentiated values: filled entry by entry (column
// major, each entry at its own place); one that reads none is forward-only data; a const
// generic shape.
#[lens]
fn matrix_from_fn(x: f64, y: f64) -> f64 {
    let m = SMatrix::<f64, 2, 3>::from_fn(|r, c| x * (r as f64 + 1.0) + y * y * (c as f64));
    let v = SVector::<f64, 3>::from_fn(|i, _| x.powi(i as i32 + 1));
    let weights = SMatrix::<f64, 2, 3>::from_fn(|r: usize, c: usize| (r * 3 + c) as f64);
    m.component_mul(&weights).sum() + v.dot(&v) * m[(1, 2)]
}

#[lens]
fn generic_from_fn<const N: usize>(x: SVector<f64, N>, s: f64) -> f64 {
    let scaled = SVector::<f64, N>::from_fn(|i, _| x[i] * s * (i as f64 + 1.0));
    scaled.norm_squared()
}

#[test]
fn matrices_built_by_from_fn() {
    // Exact: d/dx of the weighted sum is sum (r + 1) w_rc = 1*(0+1+2) + 2*(3+4+5) = 27, and
    // d/dy is sum 2y c w_rc.
    let (x, y): (f64, f64) = (0.7, -0.4);
    let m12 = x * 2.0 + y * y * 2.0;
    let vv = x * x + x.powi(4) + x.powi(6);
    let dvv = 2.0 * x + 4.0 * x.powi(3) + 6.0 * x.powi(5);
    let want_x = 27.0 + dvv * m12 + vv * 2.0;
    let want_y = 2.0 * y * (1.0 + 2.0 * 2.0 + 4.0 + 2.0 * 5.0) + vv * 4.0 * y;
    let (gx, gy) = matrix_from_fn_rev(x, y, 1.0);
    assert!(
        (gx - want_x).abs() < 1e-12 && (gy - want_y).abs() < 1e-12,
        "{gx} {gy}"
    );
    let f = |(x, y): (f64, f64)| matrix_from_fn(x, y);
    let r = |(x, y): (f64, f64), d: f64| matrix_from_fn_rev(x, y, d);
    for p in [(0.3, -0.8), (1.1, 0.4)] {
        ok("matrix_from_fn", check_gradient(f, r, p, H));
    }
    let x = SVector::<f64, 4>::new(0.5, -1.0, 2.0, 0.25);
    let f = |(x, s): (SVector<f64, 4>, f64)| generic_from_fn(x, s);
    let r = |(x, s): (SVector<f64, 4>, f64), d: f64| generic_from_fn_rev(x, s, d);
    ok("generic_from_fn", check_gradient(f, r, (x, 1.3), H));
}

// Through type aliases (`V3::new`, a 2x3 matrix's alias): the constructor is read as
// nalgebra's, as the alias is (it was "no function `new_vjp`" for the alias's type). Row by
// row for the matrix, as `Matrix2x3::new` is.
type V3 = SVector<f64, 3>;
type M23 = SMatrix<f64, 2, 3>;

#[lens]
fn through_aliases(x: f64, y: f64) -> f64 {
    let v = V3::new(x, 2.0 * x, y * y);
    let m = M23::new(x, y, 1.0, x * y, 0.5, y);
    (m * v).norm_squared() + v.dot(&v)
}

#[test]
fn constructors_through_aliases() {
    for (x, y) in [(0.3, -0.7), (1.2, 0.4)] {
        let v = Vector3::new(x, 2.0 * x, y * y);
        let m = Matrix2x3::new(x, y, 1.0, x * y, 0.5, y);
        let want = (m * v).norm_squared() + v.dot(&v);
        assert!((through_aliases(x, y) - want).abs() < 1e-12);
        assert_eq!(through_aliases_vjp(x, y).0, through_aliases(x, y));
        ok(
            "through_aliases",
            check_gradient(
                |p: SVector<f64, 2>| through_aliases(p[0], p[1]),
                |p: SVector<f64, 2>, d| {
                    let (a, b) = through_aliases_rev(p[0], p[1], d);
                    SVector::<f64, 2>::new(a, b)
                },
                SVector::<f64, 2>::new(x, y),
                H,
            ),
        );
    }
}

// `repeat` and `from_element` of a differentiated value: every entry is it, so its change is
// the sum of the entries' (it was rustc's "no function `repeat_vjp`").
#[lens]
fn repeated(x: f64, y: f64) -> f64 {
    let v = SVector::<f64, 3>::repeat(x * y);
    let m = SMatrix::<f64, 2, 2>::from_element(y);
    let w = Vector3::new(1.0, 2.0, 3.0);
    v.dot(&w) * x + m.sum() * m[(0, 1)]
}

#[test]
fn repeated_entries() {
    for (x, y) in [(0.3, -0.7), (1.2, 0.4)] {
        // 6 x^2 y + 4 y^2: d/dx = 12 x y, d/dy = 6 x^2 + 8 y.
        assert!((repeated(x, y) - (6.0 * x * x * y + 4.0 * y * y)).abs() < 1e-12);
        let (dx, dy) = repeated_rev(x, y, 1.0);
        assert!((dx - 12.0 * x * y).abs() < 1e-12, "{dx}");
        assert!((dy - (6.0 * x * x + 8.0 * y)).abs() < 1e-12, "{dy}");
    }
}

/// A struct whose `Tangent` is written by hand (no field known by name to the sweep): its
/// literal's change is read field by field as it is.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ByHand {
    pub a: f64,
    pub b: f64,
}

impl Tangent for ByHand {
    fn zeros() -> Self {
        ByHand { a: 0.0, b: 0.0 }
    }
    fn accumulate(&mut self, other: &Self) {
        self.a += other.a;
        self.b += other.b;
    }
}

/// A generic struct deriving `Tangent`, with a field of a type that names no parameter.
#[derive(Clone, Copy, Debug, PartialEq, Tangent)]
pub struct Weighted<T> {
    pub value: T,
    pub weight: f64,
}

// Literals naming their fields in another order than declared, one of them raw, of a struct
// with a hand-written `Tangent` and of a generic one (their changes go through
// `guard::FieldsOf`, which checks the names a literal gives).
#[lens]
fn literals_of_every_kind(x: f64, y: f64) -> f64 {
    let h = ByHand {
        b: x * y,
        a: x.sin(),
    };
    let w = Weighted {
        weight: y * y,
        r#value: SVector::<f64, 2>::new(x, h.a * h.b),
    };
    let p = Pair(w.weight * h.b, w.value * x);
    h.a * 3.0 + w.value[1] * w.weight + p.0 + p.1[1]
}

#[test]
fn literals_of_hand_written_generic_and_reordered_structs() {
    let f = |(x, y): (f64, f64)| literals_of_every_kind(x, y);
    let r = |(x, y): (f64, f64), d: f64| literals_of_every_kind_rev(x, y, d);
    ok(
        "literals_of_every_kind",
        check_gradient(f, r, (0.8, -0.6), H),
    );
}

#[test]
fn a_struct_built_as_the_result_on_its_own() {
    // `step_pose`'s reverse alone (not through `pose_score`): every output field's change
    // checked against finite differences, through each field as the cotangent in turn.
    let p = Pose {
        at: SVector::<f64, 2>::new(0.4, -1.1),
        angle: 0.7,
    };
    let unit = |at: [f64; 2], angle: f64| Pose {
        at: SVector::<f64, 2>::new(at[0], at[1]),
        angle,
    };
    for d in [
        unit([1.0, 0.0], 0.0),
        unit([0.0, 1.0], 0.0),
        unit([0.0, 0.0], 1.0),
    ] {
        let score = |q: Pose| q.at.dot(&d.at) + q.angle * d.angle;
        ok(
            "step_pose",
            check_gradient(
                |(p, s): (Pose, f64)| score(step_pose(p, s)),
                |(p, s): (Pose, f64), g: f64| {
                    step_pose_rev(
                        p,
                        s,
                        Pose {
                            at: d.at * g,
                            angle: d.angle * g,
                        },
                    )
                },
                (p, 1.3),
                H,
            ),
        );
    }
}
