//! The recurrent cells and sequence models unrolled by a differentiated loop: every
//! parameter change and input change against central finite differences in f64.

use paralens::prelude::*;
use paralens::recurrent::{ElmanCell, GruCell, LstmCell};
use paralens::{GradCheck, check_gradient};

const H: f64 = 1e-6;

fn ok(name: &str, r: GradCheck) {
    assert!(r.passes(1e-6), "{name}: {r}");
}

fn v<const N: usize>(seed: f64) -> SVector<f64, N> {
    SVector::<f64, N>::from_fn(|i, _| ((i as f64 + 1.0) * seed).sin())
}

/// Checks a model's parameter change and input change against finite differences.
fn check_model<M, X>(name: &str, model: &M, p: M::Param, x: X)
where
    M: Para<X>,
    M::Param: Flat<f64> + Clone,
    M::Out: Flat<f64> + Clone,
    X: Flat<f64> + Clone,
{
    ok(
        &format!("{name}: parameters"),
        check_gradient(
            |p: M::Param| model.forward(&p, x.clone()),
            |p: M::Param, d| model.changes(&p, x.clone(), d).0,
            p.clone(),
            H,
        ),
    );
    ok(
        &format!("{name}: input"),
        check_gradient(
            |x: X| model.forward(&p, x),
            |x: X, d| model.changes(&p, x, d).1,
            x,
            H,
        ),
    );
}

#[test]
fn elman_cell() {
    let cell = ElmanCell::<3, 4, f64>::new();
    check_model("elman", &cell, cell.init(1), (v::<3>(0.7), v::<4>(0.3)));
}

#[test]
fn gru_cell() {
    let cell = GruCell::<3, 4, f64>::new();
    check_model("gru", &cell, cell.init(2), (v::<3>(0.7), v::<4>(0.3)));
}

#[test]
fn lstm_cell() {
    let cell = LstmCell::<3, 4, f64>::new();
    check_model(
        "lstm",
        &cell,
        cell.init(3),
        (v::<3>(0.7), v::<4>(0.3), v::<4>(-0.5)),
    );
}

/// `a` and `b` agree entry by entry to 1e-12, relative (the heap path's products may round
/// differently).
fn close<P: Flat<f64>>(what: &str, a: &P, b: &P) {
    let a: Vec<f64> = a.slices().flatten().copied().collect();
    let b: Vec<f64> = b.slices().flatten().copied().collect();
    assert_eq!(a.len(), b.len(), "{what}");
    for (x, y) in a.iter().zip(&b) {
        assert!(
            (x - y).abs() <= 1e-12 * (1.0 + y.abs()),
            "{what}: {x} against {y}"
        );
    }
}

/// A batch of two columns on the heap, and the same values on the stack.
fn hm<const N: usize>(seed: f64) -> (HeapMatrix<f64, N, 2>, SMatrix<f64, N, 2>) {
    let m = SMatrix::<f64, N, 2>::from_fn(|i, j| ((i as f64 + 1.0) * seed + j as f64).sin());
    (HeapMatrix::from_matrix(&m), m)
}

// The cells on heap activations (their second forward function): the same values and
// changes as on static matrices, and every change against finite differences.
#[test]
fn cells_on_heap_matrices() {
    let ((x, xs), (h, hs), (c, cs)) = (hm::<3>(0.7), hm::<4>(0.3), hm::<4>(-0.5));
    let d = SMatrix::<f64, 4, 2>::from_fn(|i, j| 0.3 * i as f64 - 0.2 * j as f64 + 0.1);
    let dh = HeapMatrix::from_matrix(&d);

    let elman = ElmanCell::<3, 4, f64>::new();
    let p = elman.init(1);
    let y = elman.forward(&p, (x.clone(), h.clone()));
    close("elman", &*y, &elman.forward(&p, (xs, hs)));
    let (dp, (dx, dhh)) = elman.changes(&p, (x.clone(), h.clone()), dh.clone());
    let (dps, (dxs, dhs)) = elman.changes(&p, (xs, hs), d);
    close("elman changes", &(dp, (*dx, *dhh)), &(dps, (dxs, dhs)));
    check_model("elman on the heap", &elman, p, (x.clone(), h.clone()));

    let gru = GruCell::<3, 4, f64>::new();
    let p = gru.init(2);
    let y = gru.forward(&p, (x.clone(), h.clone()));
    close("gru", &*y, &gru.forward(&p, (xs, hs)));
    let (dp, (dx, dhh)) = gru.changes(&p, (x.clone(), h.clone()), dh.clone());
    let (dps, (dxs, dhs)) = gru.changes(&p, (xs, hs), d);
    close("gru changes", &(dp, (*dx, *dhh)), &(dps, (dxs, dhs)));
    check_model("gru on the heap", &gru, p, (x.clone(), h.clone()));

    let lstm = LstmCell::<3, 4, f64>::new();
    let p = lstm.init(3);
    let (yh, yc) = lstm.forward(&p, (x.clone(), h.clone(), c.clone()));
    close("lstm", &(*yh, *yc), &lstm.forward(&p, (xs, hs, cs)));
    let (dp, (dx, dhh, dc)) = lstm.changes(&p, (x.clone(), h.clone(), c.clone()), (dh.clone(), dh));
    let (dps, (dxs, dhs, dcs)) = lstm.changes(&p, (xs, hs, cs), (d, d));
    close(
        "lstm changes",
        &(dp, (*dx, *dhh, *dc)),
        &(dps, (dxs, dhs, dcs)),
    );
    check_model("lstm on the heap", &lstm, p, (x, h, c));
}

para! {
    /// A GRU reading five 3-vectors, then a readout of its last state.
    pub struct GruReader {
        cell: GruCell<3, 4, f64>,
        out: Dense<4, 2, f64>,
    }
    fn forward(&self, xs: [SVector<f64, 3>; 5]) -> SVector<f64, 2> {
        let mut h = SVector::<f64, 4>::zeros();
        for t in 0..5 {
            h = self.cell(xs[t], h);
        }
        self.out(h)
    }
}

para! {
    /// An LSTM reading five 3-vectors (state `h` and memory `c` carried).
    pub struct LstmReader {
        cell: LstmCell<3, 4, f64>,
        out: Dense<4, 2, f64>,
    }
    fn forward(&self, xs: [SVector<f64, 3>; 5]) -> SVector<f64, 2> {
        let mut h = SVector::<f64, 4>::zeros();
        let mut c = SVector::<f64, 4>::zeros();
        for t in 0..5 {
            let (h2, c2) = self.cell(xs[t], h, c);
            h = h2;
            c = c2;
        }
        self.out(h)
    }
}

para! {
    /// An Elman network reading the sequence backwards.
    pub struct ElmanBackwards {
        cell: ElmanCell<3, 4, f64>,
        out: Dense<4, 2, f64>,
    }
    fn forward(&self, xs: [SVector<f64, 3>; 5]) -> SVector<f64, 2> {
        let mut h = SVector::<f64, 4>::zeros();
        for t in (0..5).rev() {
            h = self.cell(xs[t], h);
        }
        self.out(h)
    }
}

fn sequence() -> [SVector<f64, 3>; 5] {
    core::array::from_fn(|t| v::<3>(0.4 + 0.3 * t as f64))
}

#[test]
fn unrolled_gru_shares_its_cell_across_steps() {
    let m = GruReader {
        cell: GruCell::new(),
        out: Dense::new(),
    };
    check_model("gru reader", &m, m.init(4), sequence());
}

#[test]
fn unrolled_lstm_carries_state_and_memory() {
    let m = LstmReader {
        cell: LstmCell::new(),
        out: Dense::new(),
    };
    check_model("lstm reader", &m, m.init(5), sequence());
}

#[test]
fn unrolled_elman_backwards() {
    let m = ElmanBackwards {
        cell: ElmanCell::new(),
        out: Dense::new(),
    };
    check_model("elman backwards", &m, m.init(6), sequence());
}

/// `m(seed)`: a 3-example batch as matrix columns.
fn m<const N: usize>(seed: f64) -> SMatrix<f64, N, 3> {
    SMatrix::<f64, N, 3>::from_fn(|i, j| ((i as f64 + 1.0) * seed + j as f64 * 0.9).sin())
}

/// The cells on batches (examples as the columns of matrices, through the dense layers'
/// matrix products): the same checks, and each column equal to the cell on that example.
#[test]
fn cells_on_batches() {
    let elman = ElmanCell::<3, 4, f64>::new();
    check_model(
        "elman batch",
        &elman,
        elman.init(1),
        (m::<3>(0.7), m::<4>(0.3)),
    );
    let gru = GruCell::<3, 4, f64>::new();
    check_model("gru batch", &gru, gru.init(2), (m::<3>(0.7), m::<4>(0.3)));
    let lstm = LstmCell::<3, 4, f64>::new();
    let p = lstm.init(3);
    let (x, h, c) = (m::<3>(0.7), m::<4>(0.3), m::<4>(-0.5));
    check_model("lstm batch", &lstm, p.clone(), (x, h, c));
    let (hb, cb) = lstm.forward(&p, (x, h, c));
    for j in 0..3 {
        let (h1, c1) = lstm.forward(
            &p,
            (
                x.column(j).into_owned(),
                h.column(j).into_owned(),
                c.column(j).into_owned(),
            ),
        );
        assert!((hb.column(j) - h1).amax() < 1e-12 && (cb.column(j) - c1).amax() < 1e-12);
    }
}
