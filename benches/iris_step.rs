//! The Iris training step (4-16-3 MLP, ReLU, softmax cross-entropy, Adam) built from
//! lenses, beside a hand-written nalgebra step doing the same arithmetic.

use criterion::{Criterion, Throughput};
use nalgebra::{SMatrix, SVector};
use paralens::prelude::*;
use std::hint::black_box;

type X = SVector<f32, 4>;

para! {
    /// The same model declared with `para!`.
    pub struct IrisMlp { l1: Dense<4, 16>, l2: Dense<16, 3> }
    fn forward(&self, x: SVector<f32, 4>) -> SVector<f32, 3> {
        self.l2(relu(self.l1(x)))
    }
}

fn data() -> (Vec<X>, Vec<usize>) {
    let d = paralens::data::iris();
    let s = paralens::data::Standardizer::fit(&d.features);
    let xs = d
        .features
        .iter()
        .map(|r| {
            let r = s.apply(r);
            X::from_fn(|j, _| r[j] as f32)
        })
        .collect();
    (xs, d.labels)
}

/// Adam's state for one array, written out by hand.
#[derive(Clone)]
struct Moments<const R: usize, const C: usize> {
    m: SMatrix<f32, R, C>,
    v: SMatrix<f32, R, C>,
}

impl<const R: usize, const C: usize> Moments<R, C> {
    fn new() -> Self {
        Self {
            m: SMatrix::zeros(),
            v: SMatrix::zeros(),
        }
    }

    #[inline]
    fn update(&mut self, p: &mut SMatrix<f32, R, C>, g: &SMatrix<f32, R, C>, step: f32, eps: f32) {
        let slices = p.as_mut_slice().iter_mut().zip(g.as_slice()).zip(
            self.m
                .as_mut_slice()
                .iter_mut()
                .zip(self.v.as_mut_slice().iter_mut()),
        );
        for ((x, &g), (m, v)) in slices {
            let tiny = (f32::MIN_POSITIVE / 0.001).sqrt();
            let g = if g.abs() < tiny { 0.0 } else { g };
            let m1 = 0.9 * *m + 0.1 * g;
            let v1 = 0.999 * *v + 0.001 * g * g;
            *m = if m1.abs() < tiny { 0.0 } else { m1 };
            *v = if v1 < tiny * tiny { 0.0 } else { v1 };
            *x -= step * *m / (v.sqrt() + eps);
        }
    }
}

/// `p -= lr g`, entry by entry in one pass.
#[inline]
fn descend<const R: usize, const C: usize>(
    p: &mut SMatrix<f32, R, C>,
    g: &SMatrix<f32, R, C>,
    lr: f32,
) {
    for (p, g) in p.as_mut_slice().iter_mut().zip(g.as_slice()) {
        *p -= lr * g;
    }
}

/// The hand-written reference: forward, backward and Adam for the same MLP.
struct Hand {
    w1: SMatrix<f32, 16, 4>,
    b1: SVector<f32, 16>,
    w2: SMatrix<f32, 3, 16>,
    b2: SVector<f32, 3>,
    s: (
        Moments<16, 4>,
        Moments<16, 1>,
        Moments<3, 16>,
        Moments<3, 1>,
    ),
    b1t: f32,
    b2t: f32,
}

struct Grads {
    w1: SMatrix<f32, 16, 4>,
    b1: SVector<f32, 16>,
    w2: SMatrix<f32, 3, 16>,
    b2: SVector<f32, 3>,
}

impl Hand {
    fn new(p: &((DenseParams<f32, 4, 16>, ()), DenseParams<f32, 16, 3>)) -> Self {
        Self {
            w1: *p.0.0.w,
            b1: p.0.0.b,
            w2: *p.1.w,
            b2: p.1.b,
            s: (
                Moments::new(),
                Moments::new(),
                Moments::new(),
                Moments::new(),
            ),
            b1t: 1.0,
            b2t: 1.0,
        }
    }

    // Inlined into both steps (Adam's and SGD's), as it was into the one step it had.
    #[inline(always)]
    fn grads(&self, x: &X, y: usize) -> (f32, Grads) {
        let z1 = self.w1 * x + self.b1;
        let h = z1.map(|v| if v <= 0.0 { 0.0 } else { v });
        let z2 = self.w2 * h + self.b2;
        let m = z2.max();
        let lse = m + z2.iter().map(|v| (v - m).exp()).sum::<f32>().ln();
        let loss = lse - z2[y];
        let floor = f32::MIN_POSITIVE.ln();
        let mut dz2 = z2.map(|v| {
            let e = v - lse;
            if e < floor { 0.0 } else { e.exp() }
        });
        dz2[y] -= 1.0;
        let dh = self.w2.tr_mul(&dz2);
        let dz1 = dh.zip_map(&z1, |d, z| if z > 0.0 { d } else { 0.0 });
        let g = Grads {
            w1: dz1 * x.transpose(),
            b1: dz1,
            w2: dz2 * h.transpose(),
            b2: dz2,
        };
        (loss, g)
    }

    #[inline]
    fn adam(&mut self, g: &Grads) {
        self.b1t *= 0.9;
        self.b2t *= 0.999;
        let c2 = (1.0 - self.b2t).sqrt();
        let step = 0.01 * c2 / (1.0 - self.b1t);
        let eps = 1e-8 * c2;
        self.s.0.update(&mut self.w1, &g.w1, step, eps);
        self.s.1.update(&mut self.b1, &g.b1, step, eps);
        self.s.2.update(&mut self.w2, &g.w2, step, eps);
        self.s.3.update(&mut self.b2, &g.b2, step, eps);
    }

    fn step(&mut self, x: &X, y: usize) -> f32 {
        let (loss, g) = self.grads(x, y);
        self.adam(&g);
        loss
    }

    /// The batch-1 step with plain gradient descent: forward, backward, and the update
    /// `p -= lr g` fused into one pass over each parameter, nothing checked.
    fn step_sgd(&mut self, x: &X, y: usize, lr: f32) -> f32 {
        let (loss, g) = self.grads(x, y);
        descend(&mut self.w1, &g.w1, lr);
        descend(&mut self.b1, &g.b1, lr);
        descend(&mut self.w2, &g.w2, lr);
        descend(&mut self.b2, &g.b2, lr);
        loss
    }

    /// The batch as matrices: `Z1 = W1 X + b1`, ..., gradients by matrix products.
    fn step_batch<const B: usize>(&mut self, xs: &[X], ys: &[usize]) -> f32 {
        let x = SMatrix::<f32, 4, B>::from_fn(|i, j| xs[j][i]);
        let mut z1 = self.w1 * x;
        for mut col in z1.column_iter_mut() {
            col += self.b1;
        }
        let h = z1.map(|v| if v <= 0.0 { 0.0 } else { v });
        let mut z2 = self.w2 * h;
        for mut col in z2.column_iter_mut() {
            col += self.b2;
        }
        let k = 1.0 / B as f32;
        let floor = f32::MIN_POSITIVE.ln();
        let mut total = 0.0;
        let mut dz2 = SMatrix::<f32, 3, B>::zeros();
        for j in 0..B {
            let z = z2.column(j);
            let m = z.max();
            let lse = m + z.iter().map(|v| (v - m).exp()).sum::<f32>().ln();
            total += lse - z[ys[j]];
            for i in 0..3 {
                let e = z[i] - lse;
                dz2[(i, j)] = if e < floor { 0.0 } else { e.exp() * k };
            }
            dz2[(ys[j], j)] -= k;
        }
        let dh = self.w2.tr_mul(&dz2);
        let dz1 = dh.zip_map(&z1, |d, z| if z > 0.0 { d } else { 0.0 });
        let g = Grads {
            w1: dz1 * x.transpose(),
            b1: dz1.column_sum(),
            w2: dz2 * h.transpose(),
            b2: dz2.column_sum(),
        };
        self.adam(&g);
        total * k
    }
}

/// The `para!` model at the `then` model's parameters `p`.
fn para_macro_model(
    p: &((DenseParams<f32, 4, 16>, ()), DenseParams<f32, 16, 3>),
) -> (IrisMlp, IrisMlpParams) {
    let model = IrisMlp {
        l1: Dense::new(),
        l2: Dense::glorot(),
    };
    let params = IrisMlpParams {
        l1: p.0.0.clone(),
        l2: p.1.clone(),
    };
    (model, params)
}

pub fn bench(c: &mut Criterion) {
    let (xs, ys) = data();
    let model = Dense::<4, 16>::new()
        .then(Relu)
        .then(Dense::<16, 3>::glorot());
    let params = model.init(0);

    let mut g = c.benchmark_group("iris_step_batch1_adam");
    g.throughput(Throughput::Elements(1));
    let mut learner = Learner::new(model, params.clone(), SoftmaxCrossEntropy, Adam::new(0.01));
    let mut i = 0;
    g.bench_function("paralens", |b| {
        b.iter(|| {
            i = (i + 1) % xs.len();
            black_box(learner.step(black_box(&xs[i]), &ys[i]))
        })
    });
    let (macro_model, macro_params) = para_macro_model(&params);
    let mut learner = Learner::new(
        macro_model,
        macro_params,
        SoftmaxCrossEntropy,
        Adam::new(0.01),
    );
    let mut i = 0;
    g.bench_function("paralens_para_macro", |b| {
        b.iter(|| {
            i = (i + 1) % xs.len();
            black_box(learner.step(black_box(&xs[i]), &ys[i]))
        })
    });
    let mut hand = Hand::new(&params);
    let mut i = 0;
    g.bench_function("hand_written", |b| {
        b.iter(|| {
            i = (i + 1) % xs.len();
            black_box(hand.step(black_box(&xs[i]), ys[i]))
        })
    });
    // The same hand-written step timed again from the same start: the ratio of the two is
    // what the machine's noise alone gives, the yardstick for the ratios above.
    let mut hand = Hand::new(&params);
    let mut i = 0;
    g.bench_function("hand_written_again", |b| {
        b.iter(|| {
            i = (i + 1) % xs.len();
            black_box(hand.step(black_box(&xs[i]), ys[i]))
        })
    });
    g.finish();

    // The same step with plain gradient descent, where the learner's fixed cost per step
    // (the label check, the finiteness scan, clearing the change) is not hidden behind Adam's.
    let mut learner = Learner::new(model, params.clone(), SoftmaxCrossEntropy, Sgd::new(SGD_LR));
    let mut hand = Hand::new(&params);
    for i in 0..20 {
        let a = learner.step(&xs[i], &ys[i]);
        let b = hand.step_sgd(&xs[i], ys[i], SGD_LR);
        assert!(
            (a - b).abs() < 1e-5,
            "library {a} and hand-written {b} SGD losses differ at step {i}"
        );
    }
    let mut g = c.benchmark_group("iris_step_batch1_sgd");
    g.throughput(Throughput::Elements(1));
    for (name, which) in [
        ("paralens", "sgd_paralens"),
        ("paralens_para_macro", "sgd_para_macro"),
        ("hand_written", "sgd_hand"),
        ("hand_written_again", "sgd_hand"),
    ] {
        let mut run = workload(which).expect("an SGD workload");
        g.bench_function(name, |b| b.iter(|| run(1)));
    }
    g.finish();

    let mut g = c.benchmark_group("iris_step_batch32_adam");
    g.throughput(Throughput::Elements(32));
    let mut learner = Learner::new(model, params.clone(), SoftmaxCrossEntropy, Adam::new(0.01));
    let mut i = 0;
    g.bench_function("paralens", |b| {
        b.iter(|| {
            i = (i + 32) % (xs.len() - 32);
            black_box(learner.step_batch::<32>(black_box(&xs[i..i + 32]), &ys[i..i + 32]))
        })
    });
    let mut hand = Hand::new(&params);
    let mut i = 0;
    g.bench_function("hand_written", |b| {
        b.iter(|| {
            i = (i + 32) % (xs.len() - 32);
            black_box(hand.step_batch::<32>(black_box(&xs[i..i + 32]), &ys[i..i + 32]))
        })
    });
    g.finish();

    // The whole data set as one batch of 150: a step is three small matrix-matrix products
    // each way. The two steps are checked equal first.
    let mut g = c.benchmark_group("iris_step_batch150_adam");
    g.throughput(Throughput::Elements(150));
    let mut learner = Learner::new(model, params.clone(), SoftmaxCrossEntropy, Adam::new(0.01));
    let mut hand = Hand::new(&params);
    for _ in 0..3 {
        let a = learner.step_batch::<150>(&xs, &ys);
        let b = hand.step_batch::<150>(&xs, &ys);
        assert!(
            (a - b).abs() < 1e-4,
            "library {a} and hand-written {b} losses differ"
        );
    }
    g.bench_function("paralens", |b| {
        b.iter(|| black_box(learner.step_batch::<150>(black_box(&xs), &ys)))
    });
    g.bench_function("hand_written", |b| {
        b.iter(|| black_box(hand.step_batch::<150>(black_box(&xs), &ys)))
    });
    g.finish();
}

/// The learning rate of the SGD workloads.
const SGD_LR: f32 = 0.05;

/// `n` calls of `step` (one example and its label to a loss), cycling through the examples.
fn cycling(
    xs: Vec<X>,
    ys: Vec<usize>,
    mut step: impl FnMut(&X, usize) -> f32 + 'static,
) -> Box<dyn FnMut(usize)> {
    let mut k = 0;
    Box::new(move |n| {
        for _ in 0..n {
            k = (k + 1) % xs.len();
            black_box(step(black_box(&xs[k]), ys[k]));
        }
    })
}

/// The batch-1 step of the learner named `which` (`paralens`, `para_macro`, `hand` with
/// Adam as the `iris_step_batch1_adam` group runs it; `sgd_paralens`, `sgd_para_macro`,
/// `sgd_hand` with plain gradient descent, as `iris_step_batch1_sgd`): a closure that runs `n` steps, cycling through the
/// examples, for counting instructions (`benches/count.sh`) and for interleaved timing
/// (`benches/ratio.sh`); also the parts of the learner's `put` alone (`adam_update`,
/// `adam_update_clear`, `all_finite`). `None` if `which` names none.
pub fn workload(which: &str) -> Option<Box<dyn FnMut(usize)>> {
    let (xs, ys) = data();
    let model = Dense::<4, 16>::new()
        .then(Relu)
        .then(Dense::<16, 3>::glorot());
    let params = model.init(0);
    Some(match which {
        "paralens" => {
            let mut learner = Learner::new(model, params, SoftmaxCrossEntropy, Adam::new(0.01));
            cycling(xs, ys, move |x, y| learner.step(x, &y))
        }
        "para_macro" => {
            let (macro_model, macro_params) = para_macro_model(&params);
            let mut learner = Learner::new(
                macro_model,
                macro_params,
                SoftmaxCrossEntropy,
                Adam::new(0.01),
            );
            cycling(xs, ys, move |x, y| learner.step(x, &y))
        }
        "hand" => {
            let mut hand = Hand::new(&params);
            cycling(xs, ys, move |x, y| hand.step(x, y))
        }
        "sgd_paralens" => {
            let mut learner = Learner::new(model, params, SoftmaxCrossEntropy, Sgd::new(SGD_LR));
            cycling(xs, ys, move |x, y| learner.step(x, &y))
        }
        "sgd_para_macro" => {
            let (macro_model, macro_params) = para_macro_model(&params);
            let mut learner = Learner::new(
                macro_model,
                macro_params,
                SoftmaxCrossEntropy,
                Sgd::new(SGD_LR),
            );
            cycling(xs, ys, move |x, y| learner.step(x, &y))
        }
        "sgd_hand" => {
            let mut hand = Hand::new(&params);
            cycling(xs, ys, move |x, y| hand.step_sgd(x, y, SGD_LR))
        }
        // The parts of the learner's `put`, on the model's parameters and a change of
        // typical size: Adam's update alone, Adam clearing the change, the finiteness scan.
        "adam_update" | "adam_update_clear" | "all_finite" => {
            let adam = Adam::new(0.01_f32);
            let mut p = params;
            let mut state = Optimizer::<_>::init_state(&adam, &p);
            // A change of zeros: what `update_and_clear` leaves, so both runs read the same.
            let mut dp = p.clone();
            dp.scale(0.0);
            let which = which.to_owned();
            Box::new(move |n| {
                for _ in 0..n {
                    match which.as_str() {
                        "adam_update" => adam.update(&mut state, &mut p, black_box(&dp)),
                        "adam_update_clear" => {
                            adam.update_and_clear(&mut state, &mut p, black_box(&mut dp));
                        }
                        _ => {
                            black_box(black_box(&dp).all_finite());
                        }
                    }
                }
                black_box((&p, &dp));
            })
        }
        _ => return None,
    })
}
