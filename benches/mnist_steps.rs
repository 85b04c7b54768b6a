//! Training steps of the MNIST examples' models (Adam), on synthetic images of the right
//! shape: the MLP (784-128-10) and the CNN (two 5x5 convolutions), one image per step and a
//! batch of 32 as matrix columns. Throughput in multiply-adds of forward and reverse passes.

use criterion::{Criterion, Throughput};
use paralens::prelude::*;
use paralens::span::{Bias, Conv2d, MaxPool2d};
use std::hint::black_box;

/// Images per batched step.
const B: usize = 32;

para! {
    /// The MLP of `mnist_mlp` on a batch (columns are images).
    pub struct MlpBatch { l1: Dense<784, 128>, l2: Dense<128, 10> }
    fn forward(&self, x: SMatrix<f32, 784, B>) -> SMatrix<f32, 10, B> {
        self.l2(relu(self.l1(x)))
    }
}

para! {
    /// The CNN of `mnist_cnn` on a batch.
    #[derive(Clone, Debug)]
    pub struct CnnBatch {
        c1: Conv2d<f32, 784, 9216, 400>,
        b1: Bias<9216>,
        p1: MaxPool2d<9216, 2304>,
        c2: Conv2d<f32, 2304, 2048, 12800>,
        b2: Bias<2048>,
        p2: MaxPool2d<2048, 512>,
        fc: Dense<512, 10>,
    }
    fn forward(&self, x: SMatrix<f32, 784, B>) -> SMatrix<f32, 10, B> {
        let h = self.p1(relu(self.b1(self.c1(x))));
        let h = self.p2(relu(self.b2(self.c2(h))));
        self.fc(h)
    }
}

fn batch_bench<M>(c: &mut Criterion, name: &str, model: M, macs: u64)
where
    M: Para<SMatrix<f32, 784, B>, Out = SMatrix<f32, 10, B>>
        + Init<Param = <M as Para<SMatrix<f32, 784, B>>>::Param>,
    <M as Para<SMatrix<f32, 784, B>>>::Param: Flat<f32>,
{
    let x = SMatrix::<f32, 784, B>::from_fn(|i, k| ((i * 31 + k * 17) % 97) as f32 / 97.0);
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
    g.finish();
}

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

/// Runs on the large-stack thread `main` starts, which holds these models' weights,
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
    // A batch of 32 moves megabytes of activations by value; `main` runs the benchmarks
    // on a thread with a large stack, as the examples run their training.
    let mlp = MlpBatch {
        l1: Dense::new(),
        l2: Dense::glorot(),
    };
    batch_bench(c, "mlp_784_128_10", mlp, 784 * 128 + 128 * 10);
    let cnn = CnnBatch {
        c1: Conv2d::new::<1, 28, 28, 16, 5, 1, 0>(),
        b1: Bias::new(),
        p1: MaxPool2d::new::<16, 24, 24, 2, 2>(),
        c2: Conv2d::new::<16, 12, 12, 32, 5, 1, 0>(),
        b2: Bias::new(),
        p2: MaxPool2d::new::<32, 8, 8, 2, 2>(),
        fc: Dense::glorot(),
    };
    batch_bench(c, "cnn_conv16_conv32", cnn, macs);
}
