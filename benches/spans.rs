//! Span layers: the compiled (gather) form of a 2-D convolution, forward and both reverse
//! passes, on MNIST-sized images; throughput in multiply-adds.

use criterion::{Criterion, Throughput};
use paralens::span::{CompiledSpan, ConvGeometry, instances};
use std::hint::black_box;

pub fn bench(c: &mut Criterion) {
    // 1 channel of 28x28 -> 16 channels of 24x24, 5x5 kernels, a batch of 32 images.
    let span = instances::conv2d(1, 28, 28, 16, 5, 1, 0, 1);
    let cells = span.cells.len() as u64;
    let conv = CompiledSpan::<f32>::new(&span);
    let xs: Vec<Vec<f32>> = (0..32)
        .map(|b| (0..784).map(|i| ((i * 7 + b) % 13) as f32 / 13.0).collect())
        .collect();
    let w: Vec<f32> = (0..span.params)
        .map(|i| (i % 5) as f32 * 0.1 - 0.2)
        .collect();
    let dy = vec![0.5f32; span.outputs];
    let mut y = vec![0.0f32; span.outputs];
    let mut dx = vec![0.0f32; span.inputs];
    let mut dw = vec![0.0f32; span.params];
    let mut g = c.benchmark_group("conv2d_28x28_1to16_k5_batch32_span");
    // One multiply-add per cell per image; reported as elements = multiply-adds.
    g.throughput(Throughput::Elements(cells * 32));
    g.bench_function("forward", |b| {
        b.iter(|| {
            for x in &xs {
                conv.forward(black_box(x), &w, &mut y);
            }
        })
    });
    g.bench_function("reverse_input", |b| {
        b.iter(|| {
            for _ in 0..32 {
                conv.reverse_input(&w, black_box(&dy), &mut dx);
            }
        })
    });
    g.bench_function("reverse_param", |b| {
        b.iter(|| {
            for x in &xs {
                conv.reverse_param(black_box(x), &dy, &mut dw);
            }
        })
    });
    let fast = ConvGeometry::new(1, 28, 28, 16, 5, 1, 0, 1).expect("fits");
    g.bench_function("fast_forward", |b| {
        b.iter(|| {
            for x in &xs {
                fast.forward(black_box(x), &w, &mut y);
            }
        })
    });
    g.bench_function("fast_reverse_input", |b| {
        b.iter(|| {
            for _ in 0..32 {
                fast.reverse_input(&w, black_box(&dy), &mut dx);
            }
        })
    });
    g.bench_function("fast_reverse_param", |b| {
        b.iter(|| {
            for x in &xs {
                fast.reverse_param(black_box(x), &dy, &mut dw);
            }
        })
    });
    g.finish();
}
