//! Generated reverse derivatives beside hand-written ones: the extended Rosenbrock function
//! (paired, on whole vectors; and chained, with a loop and indexing) and a sigmoid neuron with
//! squared error.

use criterion::{BatchSize, BenchmarkId, Criterion, Throughput};
use paralens::gemm::{View, ViewMut, gemm};
use paralens::prelude::*;
use std::hint::black_box;

/// Extended Rosenbrock (Moré, Garbow and Hillstrom): the `2M` variables in pairs `(u_i, v_i)`,
/// `f = sum 100 (v_i - u_i^2)^2 + (1 - u_i)^2`.
#[lens]
pub fn rosenbrock<const M: usize>(u: SVector<f64, M>, v: SVector<f64, M>) -> f64 {
    let t = v - u.component_mul(&u);
    let s = SVector::<f64, M>::repeat(1.0) - u;
    100.0 * t.dot(&t) + s.dot(&s)
}

/// The same gradient by hand: `du = -400 u t - 2 s`, `dv = 200 t`.
#[inline]
pub fn rosenbrock_hand<const M: usize>(
    u: SVector<f64, M>,
    v: SVector<f64, M>,
    d: f64,
) -> (SVector<f64, M>, SVector<f64, M>) {
    let t = v - u.component_mul(&u);
    let s = SVector::<f64, M>::repeat(1.0) - u;
    let du = (u.component_mul(&t) * -400.0 - s * 2.0) * d;
    (du, t * (200.0 * d))
}

/// A sigmoid neuron with squared error: `(sigma(w . x + b) - y)^2`.
#[lens]
pub fn neuron<const N: usize>(
    w: SVector<f64, N>,
    b: f64,
    #[nodiff] x: SVector<f64, N>,
    #[nodiff] y: f64,
) -> f64 {
    let p = sigmoid(w.dot(&x) + b);
    (p - y) * (p - y)
}

/// The same gradient by hand: `dz = 2 (p - y) p (1 - p)`, `dw = dz x`, `db = dz`.
#[inline]
pub fn neuron_hand<const N: usize>(
    w: SVector<f64, N>,
    b: f64,
    x: SVector<f64, N>,
    y: f64,
    d: f64,
) -> (SVector<f64, N>, f64) {
    let z = w.dot(&x) + b;
    let p = 1.0 / (1.0 + (-z).exp());
    let dz = 2.0 * (p - y) * p * (1.0 - p) * d;
    (x * dz, dz)
}

/// The chained Rosenbrock function and its gradient by hand, at one scalar type: the same
/// source for `f64` and `f32`.
macro_rules! chained_at {
    ($t:ty, $lens:ident, $lens_rev:ident, $hand:ident) => {
        /// The chained Rosenbrock function (Moré, Garbow and Hillstrom) over `N` variables,
        /// `sum_{i < N-1} 100 (x_{i+1} - x_i^2)^2 + (1 - x_i)^2`.
        #[lens]
        pub fn $lens<const N: usize>(x: SVector<$t, N>) -> $t {
            let mut f = 0.0;
            for i in 0..N - 1 {
                let t = x[i + 1] - x[i] * x[i];
                let s = 1.0 - x[i];
                f = f + 100.0 * t * t + s * s;
            }
            f
        }

        /// Its gradient by hand: one pass, each term adding into two entries.
        #[inline]
        pub fn $hand<const N: usize>(x: SVector<$t, N>, d: $t) -> SVector<$t, N> {
            let mut g = SVector::<$t, N>::zeros();
            for i in 0..N - 1 {
                let t = x[i + 1] - x[i] * x[i];
                g[i] += (-400.0 * x[i] * t - 2.0 * (1.0 - x[i])) * d;
                g[i + 1] += 200.0 * t * d;
            }
            g
        }
    };
}

chained_at!(f64, chained, chained_rev, chained_hand);
chained_at!(f32, chained32, chained32_rev, chained_hand32);

/// A dense layer of MNIST size written with `#[lens]` on heap matrices, its input batch
/// forward-only: `|W X|^2`, whose gradient is `2 (W X) X^T`.
#[lens]
pub fn heap_dense(w: HeapMatrix<f32, 128, 784>, #[nodiff] x: HeapMatrix<f32, 784, 32>) -> f32 {
    (w * x).norm_squared()
}

/// The same gradient by hand: the two products by the crate's `gemm`, into blocks allocated
/// once by the caller and cleared as slices (nalgebra's `fill` on a matrix this large goes
/// entry by entry, 14x slower than a slice's).
pub fn heap_dense_hand(
    w: &HeapMatrix<f32, 128, 784>,
    x: &HeapMatrix<f32, 784, 32>,
    y: &mut HeapMatrix<f32, 128, 32>,
    g: &mut HeapMatrix<f32, 128, 784>,
    d: f32,
) {
    y.as_mut_slice().fill(0.0);
    gemm(
        &View::col_major(w.as_slice(), 128, 784),
        &View::col_major(x.as_slice(), 784, 32).t(),
        &mut ViewMut::col_major(y.as_mut_slice(), 128, 32),
    );
    y.scale_mut(2.0 * d);
    g.as_mut_slice().fill(0.0);
    gemm(
        &View::col_major(y.as_slice(), 128, 32),
        &View::col_major(x.as_slice(), 784, 32),
        &mut ViewMut::col_major(g.as_mut_slice(), 128, 784),
    );
}

fn heap_dense_bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("lens_heap_dense_gradient");
    let w = HeapMatrix::<f32, 128, 784>::from_fn(|i, j| ((i * 7 + j * 3) % 11) as f32 / 50.0);
    let x = HeapMatrix::<f32, 784, 32>::from_fn(|i, j| ((i + j * 5) % 13) as f32 / 13.0);
    let (mut y, mut gw) = (HeapMatrix::zeros(), HeapMatrix::zeros());
    heap_dense_hand(&w, &x, &mut y, &mut gw, 1.0);
    let value = heap_dense(w.clone(), x.clone());
    let by_hand = (w.clone() * x.clone()).norm_squared();
    assert!(
        (value - by_hand).abs() <= 1e-4 * by_hand,
        "values {value} and {by_hand}"
    );
    let got = heap_dense_rev(w.clone(), x.clone(), 1.0);
    let diff = (*got - *gw).amax() / gw.amax();
    assert!(
        diff < 1e-4,
        "generated and hand-written gradients differ by {diff}"
    );
    // The operands are cloned outside the timing: `heap_dense_rev` takes them by value.
    g.bench_function("generated", |b| {
        b.iter_batched(
            || (w.clone(), x.clone()),
            |(w, x)| heap_dense_rev(w, x, 1.0),
            BatchSize::SmallInput,
        )
    });
    g.bench_function("hand_written", |b| {
        b.iter(|| heap_dense_hand(black_box(&w), black_box(&x), &mut y, &mut gw, 1.0))
    });
    g.finish();
}

/// Parameters of the `#[lens]` 784-64-10 model: the weights and biases of two layers.
type MlpParams = (
    HeapMatrix<f32, 64, 784>,
    SVector<f32, 64>,
    HeapMatrix<f32, 10, 64>,
    SVector<f32, 10>,
);

/// Weights of a 784-64-10 model that is not stuck at zero: a fixed pattern.
fn mlp_init<R: paralens::rand::Rng + ?Sized>(_: &mut R) -> MlpParams {
    (
        HeapMatrix::from_fn(|i, j| ((i * 31 + j * 17) % 29) as f32 / 290.0 - 0.05),
        SVector::from_fn(|i, _| (i % 5) as f32 * 0.01),
        HeapMatrix::from_fn(|i, j| ((i * 7 + j * 13) % 23) as f32 / 92.0 - 0.125),
        SVector::from_fn(|i, _| (i % 3) as f32 * 0.01),
    )
}

/// A 784-64-10 ReLU model on a batch of 32, written with `#[lens]` on heap matrices, with a
/// bias per layer as `Dense` has.
#[lens(init = mlp_init)]
pub fn lens_mlp(
    #[param] w1: HeapMatrix<f32, 64, 784>,
    #[param] b1: SVector<f32, 64>,
    #[param] w2: HeapMatrix<f32, 10, 64>,
    #[param] b2: SVector<f32, 10>,
    x: HeapMatrix<f32, 784, 32>,
) -> HeapMatrix<f32, 10, 32> {
    add_bias(w2 * relu(add_bias(w1 * x, b1)), b2)
}

para! {
    /// The same model from `Dense` layers (which add a bias).
    pub struct DenseMlp { l1: Dense<784, 64>, l2: Dense<64, 10> }
    fn forward(&self, x: HeapMatrix<f32, 784, 32>) -> HeapMatrix<f32, 10, 32> {
        self.l2(relu(self.l1(x)))
    }
}

fn lens_mlp_bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("lens_mlp_adam_step");
    let x = HeapMatrix::<f32, 784, 32>::from_fn(|i, j| ((i * 3 + j * 11) % 17) as f32 / 17.0);
    let labels: [usize; 32] = core::array::from_fn(|j| (j * 7) % 10);
    let mut lens = Learner::new(
        LensMlp,
        LensMlp.init(0),
        PerColumn(SoftmaxCrossEntropy),
        Adam::new(1e-3),
    );
    let dense = DenseMlp::default();
    let mut dense = Learner::new(
        dense,
        dense.init(0),
        PerColumn(SoftmaxCrossEntropy),
        Adam::new(1e-3),
    );
    g.bench_function("lens", |b| b.iter(|| lens.step(black_box(&x), &labels)));
    g.bench_function("dense", |b| b.iter(|| dense.step(black_box(&x), &labels)));
    g.finish();
}

fn chained_bench<const N: usize>(c: &mut Criterion) {
    let mut g = c.benchmark_group("chained_rosenbrock_gradient");
    g.throughput(Throughput::Elements(1));
    let x = SVector::<f64, N>::from_fn(|i, _| (i as f64 * 0.37).sin());
    let diff = (chained_rev(x, 1.0) - chained_hand(x, 1.0)).amax();
    assert!(
        diff < 1e-9,
        "generated and hand-written gradients differ by {diff}"
    );
    g.bench_with_input(BenchmarkId::new("generated", N), &x, |b, &x| {
        b.iter(|| chained_rev(black_box(x), 1.0))
    });
    g.bench_with_input(BenchmarkId::new("hand_written", N), &x, |b, &x| {
        b.iter(|| chained_hand(black_box(x), 1.0))
    });
    // The noise yardstick, as in `rosen`.
    g.bench_with_input(BenchmarkId::new("hand_written_again", N), &x, |b, &x| {
        b.iter(|| chained_hand(black_box(x), 1.0))
    });
    let x = x.map(|v| v as f32);
    let diff = (chained32_rev(x, 1.0) - chained_hand32(x, 1.0)).amax();
    assert!(
        diff <= 1e-6 * chained_hand32(x, 1.0).amax(),
        "generated and hand-written f32 gradients differ by {diff}"
    );
    g.bench_with_input(BenchmarkId::new("generated_f32", N), &x, |b, &x| {
        b.iter(|| chained32_rev(black_box(x), 1.0))
    });
    g.bench_with_input(BenchmarkId::new("hand_written_f32", N), &x, |b, &x| {
        b.iter(|| chained_hand32(black_box(x), 1.0))
    });
    g.finish();
}

fn rosen<const M: usize>(c: &mut Criterion) {
    let mut g = c.benchmark_group("rosenbrock_gradient");
    g.throughput(Throughput::Elements(1));
    let u = SVector::<f64, M>::from_fn(|i, _| (i as f64 * 0.37).sin());
    let v = SVector::<f64, M>::from_fn(|i, _| (i as f64 * 0.91).cos());
    let n = 2 * M;
    g.bench_with_input(BenchmarkId::new("generated", n), &(u, v), |b, &(u, v)| {
        b.iter(|| rosenbrock_rev(black_box(u), black_box(v), 1.0))
    });
    // The pullback of `rosenbrock_vjp`: what `rosenbrock_rev` ran before it was expanded in
    // one frame (the captures moved into the closure and out of the function first).
    g.bench_with_input(BenchmarkId::new("through_vjp", n), &(u, v), |b, &(u, v)| {
        b.iter(|| {
            let (_, pullback) = rosenbrock_vjp(black_box(u), black_box(v));
            pullback(1.0)
        })
    });
    g.bench_with_input(
        BenchmarkId::new("hand_written", n),
        &(u, v),
        |b, &(u, v)| b.iter(|| rosenbrock_hand(black_box(u), black_box(v), 1.0)),
    );
    // The same hand-written function timed again: the ratio of the two is what the machine's
    // noise alone gives, the yardstick for reading generated / hand-written at a few ns.
    g.bench_with_input(
        BenchmarkId::new("hand_written_again", n),
        &(u, v),
        |b, &(u, v)| b.iter(|| rosenbrock_hand(black_box(u), black_box(v), 1.0)),
    );
    g.finish();
}

pub fn bench(c: &mut Criterion) {
    // Pairs from 4 to 256: the generated reverse used to fall off a cliff past 32 pairs.
    rosen::<4>(c);
    rosen::<8>(c);
    rosen::<16>(c);
    rosen::<32>(c);
    rosen::<64>(c);
    rosen::<128>(c);
    rosen::<256>(c);
    chained_bench::<16>(c);
    chained_bench::<64>(c);
    chained_bench::<256>(c);
    heap_dense_bench(c);
    lens_mlp_bench(c);
    let mut g = c.benchmark_group("sigmoid_mse_neuron_gradient");
    g.throughput(Throughput::Elements(1));
    let w = SVector::<f64, 16>::from_fn(|i, _| (i as f64 * 0.3).sin());
    let x = SVector::<f64, 16>::from_fn(|i, _| (i as f64 * 0.7).cos());
    g.bench_function("generated", |b| {
        b.iter(|| neuron_rev(black_box(w), black_box(0.1), black_box(x), 1.0, 1.0))
    });
    g.bench_function("hand_written", |b| {
        b.iter(|| neuron_hand(black_box(w), black_box(0.1), black_box(x), 1.0, 1.0))
    });
    g.finish();
}

/// The gradient named `which`, as the Rosenbrock groups run it: a closure that runs it `n`
/// times, for counting instructions (`benches/count.sh`) and for interleaved timing
/// (`benches/ratio.sh`): `chained_{generated,hand}_{16,64,256}` (variables; `chained32_..`
/// in `f32`) and
/// `paired_{generated,hand}_{8,..,256}` (pairs). `None` if `which` names none.
pub fn workload(which: &str) -> Option<Box<dyn FnMut(usize)>> {
    fn chained_n<const N: usize>(generated: bool) -> Box<dyn FnMut(usize)> {
        let x = SVector::<f64, N>::from_fn(|i, _| (i as f64 * 0.37).sin());
        if generated {
            Box::new(move |n| {
                for _ in 0..n {
                    black_box(chained_rev(black_box(x), 1.0));
                }
            })
        } else {
            Box::new(move |n| {
                for _ in 0..n {
                    black_box(chained_hand(black_box(x), 1.0));
                }
            })
        }
    }
    fn paired_n<const M: usize>(generated: bool) -> Box<dyn FnMut(usize)> {
        let u = SVector::<f64, M>::from_fn(|i, _| (i as f64 * 0.37).sin());
        let v = SVector::<f64, M>::from_fn(|i, _| (i as f64 * 0.91).cos());
        if generated {
            Box::new(move |n| {
                for _ in 0..n {
                    black_box(rosenbrock_rev(black_box(u), black_box(v), 1.0));
                }
            })
        } else {
            Box::new(move |n| {
                for _ in 0..n {
                    black_box(rosenbrock_hand(black_box(u), black_box(v), 1.0));
                }
            })
        }
    }
    fn chained32_n<const N: usize>(generated: bool) -> Box<dyn FnMut(usize)> {
        let x = SVector::<f32, N>::from_fn(|i, _| (i as f32 * 0.37).sin());
        if generated {
            Box::new(move |n| {
                for _ in 0..n {
                    black_box(chained32_rev(black_box(x), 1.0));
                }
            })
        } else {
            Box::new(move |n| {
                for _ in 0..n {
                    black_box(chained_hand32(black_box(x), 1.0));
                }
            })
        }
    }
    let (form, rest) = which.split_once('_')?;
    let (who, size) = rest.split_once('_')?;
    let generated = match who {
        "generated" => true,
        "hand" => false,
        _ => return None,
    };
    Some(match (form, size) {
        ("chained", "16") => chained_n::<16>(generated),
        ("chained", "64") => chained_n::<64>(generated),
        ("chained", "256") => chained_n::<256>(generated),
        ("chained32", "16") => chained32_n::<16>(generated),
        ("chained32", "64") => chained32_n::<64>(generated),
        ("chained32", "256") => chained32_n::<256>(generated),
        ("paired", "8") => paired_n::<8>(generated),
        ("paired", "16") => paired_n::<16>(generated),
        ("paired", "32") => paired_n::<32>(generated),
        ("paired", "64") => paired_n::<64>(generated),
        ("paired", "128") => paired_n::<128>(generated),
        ("paired", "256") => paired_n::<256>(generated),
        _ => return None,
    })
}
