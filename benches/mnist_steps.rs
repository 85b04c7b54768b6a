//! Training steps of the MNIST examples' models (Adam) on a batch of 32 synthetic images as
//! matrix columns: the MLP (784-128-10) and the CNN (two 5x5 convolutions). Throughput in
//! multiply-adds of forward and reverse passes.

use crate::mnist_hand::{Hand, Product};
use criterion::{Criterion, Throughput};
use paralens::gemm::{Kernel, with_kernel};
use paralens::prelude::*;
use std::hint::black_box;

/// Images per batched step.
const B: usize = mnist_mlp::BATCH;

fn batch_bench<M>(c: &mut Criterion, name: &str, model: M, macs: u64)
where
    M: Para<HeapMatrix<f32, 784, B>, Out = HeapMatrix<f32, 10, B>>
        + Init<Param = <M as Para<HeapMatrix<f32, 784, B>>>::Param>,
    <M as Para<HeapMatrix<f32, 784, B>>>::Param: Flat<f32>,
{
    let x = HeapMatrix::<f32, 784, B>::from_fn(|i, k| ((i * 31 + k * 17) % 97) as f32 / 97.0);
    let labels: [usize; B] = core::array::from_fn(|k| k % 10);
    let params = model.init(0);
    let mut learner = Learner::new(
        model,
        params,
        PerColumn(SoftmaxCrossEntropy),
        Adam::new(1e-3),
    );
    let mut g = c.benchmark_group("mnist_training_step_batch32");
    g.throughput(Throughput::Elements(3 * macs * B as u64));
    g.bench_function(name, |b| {
        b.iter(|| black_box(learner.step(black_box(&x), &labels)))
    });
    // The AVX2 path forced, as for the MLP (the convolution's direct kernels, AVX-512, off).
    if Kernel::Avx2Fma.available() {
        g.bench_function(format!("{name}_forced_avx2"), |b| {
            b.iter(|| {
                with_kernel(Kernel::Avx2Fma, || {
                    black_box(learner.step(black_box(&x), &labels))
                })
            })
        });
    }
    g.finish();
}

#[allow(dead_code)]
#[path = "../examples/mnist_cnn.rs"]
mod mnist_cnn;
#[allow(dead_code)]
#[path = "../examples/mnist_mlp.rs"]
mod mnist_mlp;

/// The library's MLP step beside the hand-written one, from the same weights; one step of
/// each is checked to agree before anything is timed.
fn mlp_against_hand(c: &mut Criterion) {
    let model = mnist_mlp::model();
    let params = model.init(0);
    let hand = |how| {
        Hand::new(
            &params.l1.w,
            params.l1.b,
            &params.l2.w,
            params.l2.b,
            1e-3,
            how,
        )
    };
    let mut hands = [hand(Product::MatrixMultiply), hand(Product::Paralens)];
    let mut learner = Learner::new(
        model,
        params,
        PerColumn(SoftmaxCrossEntropy),
        Adam::new(1e-3),
    );
    let x = SMatrix::<f32, 784, B>::from_fn(|i, k| ((i * 31 + k * 17) % 97) as f32 / 97.0);
    let xh = HeapMatrix::from_matrix(&x);
    let labels: [usize; B] = core::array::from_fn(|k| k % 10);
    let ll = learner.step(&xh, &labels);
    for hand in &mut hands {
        let lh = hand.step(&x, &labels);
        assert!((lh - ll).abs() < 1e-5, "losses {lh} and {ll}");
        let diff = (*hand.w2 - *learner.params().l2.w).amax();
        assert!(
            diff < 1e-5,
            "hand-written and library steps disagree by {diff}"
        );
    }
    let mut g = c.benchmark_group("mnist_training_step_batch32");
    g.throughput(Throughput::Elements(3 * (784 * 128 + 128 * 10) * B as u64));
    g.bench_function("mlp_784_128_10", |b| {
        b.iter(|| black_box(learner.step(black_box(&xh), &labels)))
    });
    // The input given away (`step_owned`), as a training loop that builds each batch does:
    // no copy of it inside the step. The copy made here, in the setup, is not timed.
    g.bench_function("mlp_784_128_10_owned_input", |b| {
        b.iter_batched(
            || xh.clone(),
            |x| black_box(learner.step_owned(x, &labels)),
            criterion::BatchSize::SmallInput,
        )
    });
    // The AVX2 path forced (products, packing and Adam's loops; `gemm::with_kernel`): on an
    // AVX-512 machine, what an AVX2 machine gets; on an AVX2 machine, the default path.
    if Kernel::Avx2Fma.available() {
        g.bench_function("mlp_784_128_10_forced_avx2", |b| {
            b.iter(|| {
                with_kernel(Kernel::Avx2Fma, || {
                    black_box(learner.step(black_box(&xh), &labels))
                })
            })
        });
    }
    let [mm, own] = &mut hands;
    g.bench_function("mlp_784_128_10_hand_matrixmultiply", |b| {
        b.iter(|| black_box(mm.step(black_box(&x), &labels)))
    });
    g.bench_function("mlp_784_128_10_hand_paralens_gemm", |b| {
        b.iter(|| black_box(own.step(black_box(&x), &labels)))
    });
    g.finish();
}

/// The models keep weights, changes and activations on the heap: no large stack needed.
pub fn bench(c: &mut Criterion) {
    mlp_against_hand(c);
    let macs = 16 * 24 * 24 * 25 + 32 * 8 * 8 * 400 + 512 * 10;
    batch_bench(c, "cnn_conv16_conv32", mnist_cnn::model(), macs);
}
