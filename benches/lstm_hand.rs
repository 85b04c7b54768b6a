//! One training step of the MNIST row LSTM (28 steps of 28 pixels, 128 hidden units, batch
//! 32, a dense readout, mean softmax cross-entropy, Adam) written by hand the way an expert
//! would: the four gates stacked into one `4H x I` and one `4H x H` matrix with one bias (one
//! product of each per step), backpropagation through time over the activations of every step
//! kept in static storage allocated once, products by `matrixmultiply::sgemm` directly on that
//! storage (transposes as swapped strides), in-place Adam. Beside it, in the same run, the
//! library's step of `examples/mnist_lstm.rs`.

use crate::mnist_hand::{Moments, gemm_beta, mat, tr};
use criterion::{Criterion, Throughput};
use nalgebra::{SMatrix, SVector};
use paralens::prelude::*;
use std::hint::black_box;

#[allow(dead_code)]
#[path = "../examples/mnist_lstm.rs"]
mod mnist_lstm;

const I: usize = 28;
const H: usize = 128;
const G: usize = 4 * H;
const O: usize = 10;
const B: usize = mnist_lstm::BATCH;
const T: usize = 28;

/// The hand-written learner's whole state, allocated once.
pub struct HandLstm {
    wx: Box<SMatrix<f32, G, I>>,
    wh: Box<SMatrix<f32, G, H>>,
    b: SVector<f32, G>,
    wo: Box<SMatrix<f32, O, H>>,
    bo: SVector<f32, O>,
    /// `h_t` and `c_t` for t = 0..=T.
    hs: Box<[SMatrix<f32, H, B>; T + 1]>,
    cs: Box<[SMatrix<f32, H, B>; T + 1]>,
    /// The gates after their activations (i, f, o, g stacked) and `tanh c_{t+1}`, per step.
    gates: Box<[SMatrix<f32, G, B>; T]>,
    tcs: Box<[SMatrix<f32, H, B>; T]>,
    gwx: Box<SMatrix<f32, G, I>>,
    gwh: Box<SMatrix<f32, G, H>>,
    gwo: Box<SMatrix<f32, O, H>>,
    da: Box<SMatrix<f32, G, B>>,
    dh: Box<SMatrix<f32, H, B>>,
    dc: Box<SMatrix<f32, H, B>>,
    z: Box<SMatrix<f32, O, B>>,
    s_wx: Moments<G, I>,
    s_wh: Moments<G, H>,
    s_b: Moments<G, 1>,
    s_wo: Moments<O, H>,
    s_bo: Moments<O, 1>,
    lr: f32,
    b1t: f32,
    b2t: f32,
}

fn sigmoid(v: f32) -> f32 {
    1.0 / (1.0 + (-v).exp())
}

impl HandLstm {
    /// From the library's parameters (the gates stacked, each gate's two biases added).
    pub fn new(p: &mnist_lstm::RowLstmParams, lr: f32) -> Self {
        let mut wx = Box::new(SMatrix::<f32, G, I>::zeros());
        let mut wh = Box::new(SMatrix::<f32, G, H>::zeros());
        let mut b = SVector::<f32, G>::zeros();
        let gates = [&p.cell.i, &p.cell.f, &p.cell.o, &p.cell.g];
        for (k, gate) in gates.iter().enumerate() {
            wx.fixed_view_mut::<H, I>(k * H, 0).copy_from(&*gate.x.w);
            wh.fixed_view_mut::<H, H>(k * H, 0).copy_from(&*gate.h.w);
            b.fixed_rows_mut::<H>(k * H)
                .copy_from(&(gate.x.b + gate.h.b));
        }
        Self {
            wx,
            wh,
            b,
            wo: Box::new(*p.out.w),
            bo: p.out.b,
            hs: Box::new([SMatrix::zeros(); T + 1]),
            cs: Box::new([SMatrix::zeros(); T + 1]),
            gates: Box::new([SMatrix::zeros(); T]),
            tcs: Box::new([SMatrix::zeros(); T]),
            gwx: Box::new(SMatrix::zeros()),
            gwh: Box::new(SMatrix::zeros()),
            gwo: Box::new(SMatrix::zeros()),
            da: Box::new(SMatrix::zeros()),
            dh: Box::new(SMatrix::zeros()),
            dc: Box::new(SMatrix::zeros()),
            z: Box::new(SMatrix::zeros()),
            s_wx: Moments::new(),
            s_wh: Moments::new(),
            s_b: Moments::new(),
            s_wo: Moments::new(),
            s_bo: Moments::new(),
            lr,
            b1t: 1.0,
            b2t: 1.0,
        }
    }

    /// One step on the rows of a batch; returns the mean loss before it.
    pub fn step(&mut self, rows: &mnist_lstm::Rows, labels: &[usize; B]) -> f32 {
        // Forward, keeping every step's gates and states.
        for t in 0..T {
            let a = &mut self.gates[t];
            gemm_beta(mat(&self.wx), mat(&rows[t]), a, 0.0);
            gemm_beta(mat(&self.wh), mat(&self.hs[t]), a, 1.0);
            let (c_prev, rest) = self.cs.split_at_mut(t + 1);
            let (c_prev, c_next) = (&c_prev[t], &mut rest[0]);
            let h_next = &mut self.hs[t + 1];
            let tc = &mut self.tcs[t];
            for j in 0..B {
                let col = &mut a.as_mut_slice()[j * G..(j + 1) * G];
                for (v, bias) in col.iter_mut().zip(self.b.iter()) {
                    *v += bias;
                }
                for r in 0..H {
                    let i = sigmoid(col[r]);
                    let f = sigmoid(col[H + r]);
                    let o = sigmoid(col[2 * H + r]);
                    let g = col[3 * H + r].tanh();
                    col[r] = i;
                    col[H + r] = f;
                    col[2 * H + r] = o;
                    col[3 * H + r] = g;
                    let c = f * c_prev[(r, j)] + i * g;
                    c_next[(r, j)] = c;
                    let t_c = c.tanh();
                    tc[(r, j)] = t_c;
                    h_next[(r, j)] = o * t_c;
                }
            }
        }
        // The readout and the loss; z becomes dL/dz (mean over the batch).
        gemm_beta(mat(&self.wo), mat(&self.hs[T]), &mut self.z, 0.0);
        let inv_b = 1.0 / B as f32;
        let mut loss = 0.0;
        for (mut col, &c) in self.z.column_iter_mut().zip(labels) {
            col += &self.bo;
            let max = col.max();
            let sum: f32 = col.iter().map(|v| (v - max).exp()).sum();
            let lse = max + sum.ln();
            loss += lse - col[c];
            col.apply(|v| *v = (*v - lse).exp() * inv_b);
            col[c] -= inv_b;
        }
        gemm_beta(mat(&self.z), tr(&self.hs[T]), &mut self.gwo, 0.0);
        let g_bo = SMatrix::<f32, O, 1>::from_fn(|i, _| self.z.row(i).sum());
        gemm_beta(tr(&self.wo), mat(&self.z), &mut self.dh, 0.0);
        self.dc.fill(0.0);
        let mut g_b = SMatrix::<f32, G, 1>::zeros();
        // Backward through time.
        for t in (0..T).rev() {
            let gates = &self.gates[t];
            let (tc, c_prev) = (&self.tcs[t], &self.cs[t]);
            for j in 0..B {
                let gcol = &gates.as_slice()[j * G..(j + 1) * G];
                let dcol = &mut self.da.as_mut_slice()[j * G..(j + 1) * G];
                for r in 0..H {
                    let (i, f, o, g) = (gcol[r], gcol[H + r], gcol[2 * H + r], gcol[3 * H + r]);
                    let (dh, t_c) = (self.dh[(r, j)], tc[(r, j)]);
                    let dct = self.dc[(r, j)] + dh * o * (1.0 - t_c * t_c);
                    dcol[r] = dct * g * i * (1.0 - i);
                    dcol[H + r] = dct * c_prev[(r, j)] * f * (1.0 - f);
                    dcol[2 * H + r] = dh * t_c * o * (1.0 - o);
                    dcol[3 * H + r] = dct * i * (1.0 - g * g);
                    self.dc[(r, j)] = dct * f;
                }
            }
            let beta = if t == T - 1 { 0.0 } else { 1.0 };
            gemm_beta(mat(&self.da), tr(&rows[t]), &mut self.gwx, beta);
            gemm_beta(mat(&self.da), tr(&self.hs[t]), &mut self.gwh, beta);
            for (k, v) in g_b.iter_mut().enumerate() {
                *v += self.da.row(k).sum();
            }
            gemm_beta(tr(&self.wh), mat(&self.da), &mut self.dh, 0.0);
        }
        self.b1t *= 0.9;
        self.b2t *= 0.999;
        let c2 = (1.0 - self.b2t).sqrt();
        let step = self.lr * c2 / (1.0 - self.b1t);
        let eps = 1e-8 * c2;
        self.s_wx.update(&mut self.wx, &self.gwx, step, eps);
        self.s_wh.update(&mut self.wh, &self.gwh, step, eps);
        self.s_b.update(&mut self.b, &g_b, step, eps);
        self.s_wo.update(&mut self.wo, &self.gwo, step, eps);
        self.s_bo.update(&mut self.bo, &g_bo, step, eps);
        loss * inv_b
    }
}

/// The library's step beside the hand-written one, from the same weights. Their first losses
/// (the same forward pass) are checked equal, and both must fall over ten steps on one batch.
pub fn bench(c: &mut Criterion) {
    let model = mnist_lstm::model();
    let params = model.init(0);
    let mut hand = HandLstm::new(&params, 1e-3);
    let mut learner = Learner::new(
        model,
        params,
        PerColumn(SoftmaxCrossEntropy),
        Adam::new(1e-3),
    );
    let rows: mnist_lstm::Rows = std::array::from_fn(|t| {
        HeapMatrix::from_fn(|i, k| ((t * 28 + i) * 31 % 97 + k * 17 % 13) as f32 / 110.0)
    });
    let labels: [usize; B] = std::array::from_fn(|k| k % 10);
    let (l0, h0) = (learner.step(&rows, &labels), hand.step(&rows, &labels));
    assert!((l0 - h0).abs() < 1e-4, "first losses {l0} and {h0}");
    let (mut l, mut h) = (l0, h0);
    for _ in 0..10 {
        l = learner.step(&rows, &labels);
        h = hand.step(&rows, &labels);
    }
    assert!(l < l0 && h < h0, "losses {l0} -> {l} and {h0} -> {h}");
    let mut g = c.benchmark_group("mnist_row_lstm_step_batch32");
    g.throughput(Throughput::Elements(B as u64));
    g.bench_function("paralens", |b| {
        b.iter_batched(
            || rows.clone(),
            |x| black_box(learner.step_owned(x, &labels)),
            criterion::BatchSize::SmallInput,
        )
    });
    g.bench_function("hand_written", |b| {
        b.iter(|| black_box(hand.step(black_box(&rows), &labels)))
    });
    g.finish();
}
