//! Training steps of the MNIST examples' models (one image per step, Adam), on synthetic
//! images of the right shape: the MLP (784-128-10) and the CNN (two 5x5 convolutions).
//! Throughput in multiply-adds of forward and reverse passes.

use criterion::{Criterion, Throughput};
use paralens::prelude::*;
use std::hint::black_box;

#[allow(dead_code)]
#[path = "../examples/mnist_cnn.rs"]
mod mnist_cnn;
#[allow(dead_code)]
#[path = "../examples/mnist_mlp.rs"]
mod mnist_mlp;

fn images(n: usize) -> Vec<SVector<f32, 784>> {
    (0..n)
        .map(|k| SVector::from_fn(|i, _| ((i * 31 + k * 17) % 97) as f32 / 97.0))
        .collect()
}

fn step_bench<M>(c: &mut Criterion, name: &str, model: M, macs: u64)
where
    M: Para<SVector<f32, 784>, Out = SVector<f32, 10>>
        + Init<Param = <M as Para<SVector<f32, 784>>>::Param>,
    <M as Para<SVector<f32, 784>>>::Param: Flat<f32>,
{
    let xs = images(64);
    let params = model.init(0);
    let mut learner = Learner::new(model, params, SoftmaxCrossEntropy, Adam::new(1e-3));
    let mut g = c.benchmark_group("mnist_training_step");
    // Forward, input change and parameter change: three times the forward multiply-adds.
    g.throughput(Throughput::Elements(3 * macs));
    let mut i = 0;
    g.bench_function(name, |b| {
        b.iter(|| {
            i = (i + 1) % xs.len();
            black_box(learner.step(black_box(&xs[i]), &(i % 10)))
        })
    });
    g.finish();
}

/// Runs on criterion's (main) thread, whose 8 MB stack holds these models' weights,
/// activations and changes.
pub fn bench(c: &mut Criterion) {
    step_bench(
        c,
        "mlp_784_128_10",
        mnist_mlp::model(),
        784 * 128 + 128 * 10,
    );
    let macs = 16 * 24 * 24 * 25 + 32 * 8 * 8 * 400 + 512 * 10;
    step_bench(c, "cnn_conv16_conv32", mnist_cnn::model(), macs);
}
