//! Indexing in `#[lens]` and `para!` bodies: `v[i]` of vectors, `m[(r, c)]` and `m[i]` of
//! static and heap matrices, `a[i]` of arrays (of scalars and of vectors), by literals, loop
//! counters and arithmetic on them; the reverse adds each entry's change into the adjoint at
//! that place.
//! Every gradient is checked against central finite differences in f64. Generated code must
//! not warn.
#![deny(warnings)]
#![allow(clippy::assign_op_pattern)]

use paralens::check_gradient;
use paralens::prelude::*;

mod common;
use common::{H, ok};

/// The chained Rosenbrock function, the form other libraries use:
/// `sum_{i < N-1} 100 (x_{i+1} - x_i^2)^2 + (1 - x_i)^2`.
#[lens]
fn chained_rosenbrock<const N: usize>(x: SVector<f64, N>) -> f64 {
    let mut f = 0.0;
    for i in 0..N - 1 {
        let t = x[i + 1] - x[i] * x[i];
        let s = 1.0 - x[i];
        f = f + 100.0 * t * t + s * s;
    }
    f
}

/// Its gradient by hand.
fn chained_rosenbrock_hand<const N: usize>(x: SVector<f64, N>) -> SVector<f64, N> {
    let mut g = SVector::<f64, N>::zeros();
    for i in 0..N - 1 {
        let t = x[i + 1] - x[i] * x[i];
        g[i] += -400.0 * x[i] * t - 2.0 * (1.0 - x[i]);
        g[i + 1] += 200.0 * t;
    }
    g
}

#[test]
fn chained_rosenbrock_matches_the_hand_written_gradient() {
    let x = SVector::<f64, 8>::from_fn(|i, _| (i as f64 * 0.7).sin());
    let g = chained_rosenbrock_rev(x, 1.0);
    let h = chained_rosenbrock_hand(x);
    assert!((g - h).amax() < 1e-12, "{g} against {h}");
    ok(
        "chained_rosenbrock",
        check_gradient(chained_rosenbrock::<8>, chained_rosenbrock_rev::<8>, x, H),
    );
    // At the minimum (all ones) the gradient is zero.
    assert_eq!(
        chained_rosenbrock_rev(SVector::<f64, 8>::repeat(1.0), 1.0),
        SVector::<f64, 8>::zeros()
    );
}

// Matrix entries by `(row, column)` and by column-major position, read in nested loops.
#[lens]
fn weighted_entries(m: SMatrix<f64, 3, 2>) -> f64 {
    let mut acc = m[(0, 0)] * m[5];
    for r in 0..3 {
        for c in 0..2 {
            acc = acc + (r as f64 + 1.0) * m[(r, c)] * m[(r, c)].sin();
        }
    }
    acc
}

#[test]
fn matrix_entries_by_pair_and_position() {
    let m = SMatrix::<f64, 3, 2>::from_fn(|r, c| 0.3 * r as f64 - 0.5 * c as f64 + 0.2);
    ok(
        "weighted_entries",
        check_gradient(weighted_entries, weighted_entries_rev, m, H),
    );
}

// An array of vectors indexed by a reversed counter, with an entry of the indexed element.
#[lens]
fn array_of_vectors(a: [SVector<f64, 2>; 4], w: SVector<f64, 2>) -> f64 {
    let mut h = 0.0;
    for i in (0..4).rev() {
        let v = a[i];
        h = (h + v.dot(&w)).tanh() + a[3 - i][1];
    }
    h
}

#[test]
fn arrays_of_vectors_indexed_in_a_loop() {
    let a: [SVector<f64, 2>; 4] =
        core::array::from_fn(|i| SVector::<f64, 2>::new(0.2 * i as f64, -0.3 + 0.1 * i as f64));
    let w = SVector::<f64, 2>::new(0.7, -1.1);
    ok(
        "array_of_vectors",
        check_gradient(
            |(a, w)| array_of_vectors(a, w),
            |(a, w), d| array_of_vectors_rev(a, w, d),
            (a, w),
            H,
        ),
    );
}

// An entry of a value computed in the body (its adjoint starts at zero there), an entry
// read in a branch, and an array of scalars.
#[lens]
fn entries_of_temporaries(x: SVector<f64, 3>, s: [f64; 3], pick: usize) -> f64 {
    let y = x * s[1] + x.component_mul(&x);
    let mut out = y[0] * s[0];
    if pick < 3 {
        out = out + y[pick] * x[pick];
    } else {
        out = out - s[2];
    }
    out
}

#[test]
fn entries_of_values_computed_in_the_body_and_in_branches() {
    let x = SVector::<f64, 3>::new(0.4, -0.9, 1.3);
    let s = [0.5, -1.5, 2.0];
    for pick in [0, 2, 7] {
        ok(
            "entries_of_temporaries",
            check_gradient(
                |(x, s)| entries_of_temporaries(x, s, pick),
                |(x, s), d| entries_of_temporaries_rev(x, s, pick, d),
                (x, s),
                H,
            ),
        );
    }
}

// Indexing inside `para!`: a recurrence over the rows of a sequence given as an array.
para! {
    /// `h <- tanh(W h + x_t)` over four inputs, then the sum of `h`'s entries weighted.
    pub struct OverSequence {
        cell: Dense<2, 2, f64>,
    }
    fn forward(&self, xs: [SVector<f64, 2>; 4]) -> f64 {
        let mut h = xs[0];
        for t in 1..4 {
            let z = self.cell(h) + xs[t];
            h = z.map(tanh);
        }
        h[0] - 0.5 * h[1]
    }
}

#[test]
fn a_recurrence_over_an_indexed_sequence_in_para() {
    let model = OverSequence { cell: Dense::new() };
    let p = model.init(5);
    let xs: [SVector<f64, 2>; 4] = core::array::from_fn(|t| {
        SVector::<f64, 2>::new(0.3 * t as f64 - 0.4, 0.2 - 0.1 * t as f64)
    });
    let (dp, dxs) = model.changes(&p, xs, 1.0);
    let mut worst: f64 = 0.0;
    for t in 0..4 {
        for j in 0..2 {
            let (mut a, mut b) = (xs, xs);
            a[t][j] += H;
            b[t][j] -= H;
            let num = (model.forward(&p, a) - model.forward(&p, b)) / (2.0 * H);
            worst = worst.max((num - dxs[t][j]).abs());
        }
    }
    for i in 0..2 {
        for j in 0..2 {
            let (mut a, mut b) = (p.clone(), p.clone());
            a.cell.w[(i, j)] += H;
            b.cell.w[(i, j)] -= H;
            let num = (model.forward(&a, xs) - model.forward(&b, xs)) / (2.0 * H);
            worst = worst.max((num - dp.cell.w[(i, j)]).abs());
        }
    }
    assert!(worst < 1e-7, "largest error {worst}");
}

// Writing entries: `v[i] = e` rebinds `v` to a copy with the entry replaced (the entry's old
// value gets no change from what follows), `+=` and friends read it first.

/// A prefix sum written in place: y_i = sum_{j <= i} x_j^2, then a weighted total.
#[lens]
fn prefix_squares<const N: usize>(x: SVector<f64, N>) -> f64 {
    let mut y = SVector::<f64, N>::zeros();
    y[0] = x[0] * x[0];
    for i in 1..N {
        y[i] = y[i - 1] + x[i] * x[i];
    }
    let mut total = 0.0;
    for i in 0..N {
        total = total + (i as f64 + 1.0) * y[i];
    }
    total
}

#[test]
fn entries_written_in_a_loop() {
    let x = SVector::<f64, 5>::new(0.3, -0.7, 1.1, 0.4, -0.2);
    ok(
        "prefix_squares",
        check_gradient(prefix_squares, prefix_squares_rev, x, H),
    );
}

/// An overwritten entry passes no change to its old value; `*=` and `-=` on entries of a
/// matrix and an array; a forward-only vector that becomes differentiated when written.
#[lens]
fn overwrite(v: SVector<f64, 3>, m: SMatrix<f64, 2, 2>, s: f64) -> f64 {
    let mut v = v;
    v[1] = s * 2.0; // the old v[1] no longer matters
    v[2] *= s;
    let mut m = m;
    m[(0, 1)] -= v[0] * s;
    let mut a = [s, s * s];
    a[1] += v[2];
    let mut w = SVector::<f64, 2>::zeros();
    w[1] = a[1] * m[(0, 1)];
    v.dot(&v) + m.sum() + w[1] + a[0]
}

#[test]
fn entries_overwritten_and_updated_in_place() {
    let f = |(v, m, s): (SVector<f64, 3>, SMatrix<f64, 2, 2>, f64)| overwrite(v, m, s);
    let r =
        |(v, m, s): (SVector<f64, 3>, SMatrix<f64, 2, 2>, f64), d: f64| overwrite_rev(v, m, s, d);
    let p = (
        SVector::<f64, 3>::new(0.5, -1.2, 0.8),
        SMatrix::<f64, 2, 2>::new(0.3, -0.4, 1.5, 0.9),
        0.7,
    );
    ok("overwrite", check_gradient(f, r, p, H));
    // The old v[1] is overwritten: its change is exactly zero.
    let (dv, _, _) = overwrite_rev(p.0, p.1, p.2, 1.0);
    assert_eq!(dv[1], 0.0);
}

// Entries of heap matrices, read by pair and by position and written in place: the adjoint
// is a heap matrix, added into at each place (there was no rule: two errors naming
// `IndexRule`).
#[lens]
fn heap_entries(m: HeapMatrix<f64, 3, 2>, s: f64) -> f64 {
    let mut acc = m[(0, 0)] * m[5];
    for r in 0..3 {
        acc = acc + (r as f64 + 1.0) * m[(r, 1)].sin() * s;
    }
    let mut w = m;
    w[(1, 0)] = s * s;
    w[2] += acc;
    (w * SVector::<f64, 2>::new(0.5, -1.5)).norm_squared()
}

#[test]
fn heap_matrix_entries_read_and_written() {
    let m = HeapMatrix::<f64, 3, 2>::from_fn(|r, c| 0.3 * r as f64 - 0.5 * c as f64 + 0.2);
    ok(
        "heap_entries",
        check_gradient(
            |(m, s): (HeapMatrix<f64, 3, 2>, f64)| heap_entries(m, s),
            |(m, s), d| heap_entries_rev(m, s, d),
            (m, 0.7),
            H,
        ),
    );
}

// An index computed by `%` and `<<` from forward-only data read from differentiated values
// (a rounded value, a comparison): forward-only data too, like the cast it starts from (it
// was refused as a `%` or a shift of differentiated values).
#[lens]
fn index_by_remainder_and_shift(x: SVector<f64, 4>) -> f64 {
    let k = (x[0].abs().floor() as usize) % 4;
    let j = ((x[1] > 0.0) as usize) << 1;
    let mut n = 0;
    for i in 0..4 {
        n += (x[i] > 0.0) as usize % 2;
    }
    x[k] * x[j] + x[3] * n as f64
}

#[test]
fn indices_from_remainders_and_shifts_of_forward_only_data() {
    for x in [
        SVector::<f64, 4>::new(2.3, 0.5, -0.7, 1.9),
        SVector::<f64, 4>::new(-5.4, -0.2, 0.6, -1.3),
    ] {
        let k = (x[0].abs().floor() as usize) % 4;
        let j = usize::from(x[1] > 0.0) << 1;
        let n = x.iter().filter(|v| **v > 0.0).count();
        assert_eq!(
            index_by_remainder_and_shift(x),
            x[k] * x[j] + x[3] * n as f64
        );
        ok(
            "index_by_remainder_and_shift",
            check_gradient(
                index_by_remainder_and_shift,
                index_by_remainder_and_shift_rev,
                x,
                H,
            ),
        );
    }
}
