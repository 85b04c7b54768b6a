//! Span layers: a 2-D convolution's forward and both reverse passes on MNIST-sized images,
//! in the compiled (gather) form and by the fast path, the dense layer and the matrix product
//! alone; throughput in multiply-adds.

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
    g.finish();
    conv_fast(
        c,
        "conv2d_28x28_1to16_k5_batch32_fast",
        ConvGeometry::new(1, 28, 28, 16, 5, 1, 0, 1).expect("fits"),
    );
    // The second convolution of the MNIST network: 16 channels of 12x12 to 32 of 8x8.
    conv_fast(
        c,
        "conv2d_12x12_16to32_k5_batch32_fast",
        ConvGeometry::new(16, 12, 12, 32, 5, 1, 0, 1).expect("fits"),
    );
    dense(c);
    raw_gemm(c);
}

/// The fast path's three passes on a batch of 32 images (the direct kernels where the CPU
/// has AVX-512, else one matrix product per pass); throughput in multiply-adds.
fn conv_fast(c: &mut Criterion, name: &str, conv: ConvGeometry) {
    let (ni, no, np) = conv.sizes();
    let x: Vec<f32> = (0..32 * ni).map(|i| ((i * 7) % 13) as f32 / 13.0).collect();
    let w: Vec<f32> = (0..np).map(|i| (i % 5) as f32 * 0.1 - 0.2).collect();
    let dy = vec![0.5f32; 32 * no];
    let (mut y, mut dx, mut dw) = (
        vec![0.0f32; 32 * no],
        vec![0.0f32; 32 * ni],
        vec![0.0f32; np],
    );
    let mut g = c.benchmark_group(name);
    g.throughput(Throughput::Elements((32 * no * conv.fan_in()) as u64));
    g.bench_function("forward", |b| {
        b.iter(|| conv.forward(black_box(&x), &w, &mut y))
    });
    g.bench_function("reverse_input", |b| {
        b.iter(|| conv.reverse_input(&w, black_box(&dy), &mut dx))
    });
    g.bench_function("reverse_param", |b| {
        b.iter(|| conv.reverse_param(black_box(&x), &dy, &mut dw))
    });
    g.finish();
}

/// The product alone on column-major matrices, for the kernel's own speed.
fn raw_gemm(c: &mut Criterion) {
    use paralens::gemm::{View, ViewMut, gemm};
    let mut g = c.benchmark_group("gemm_f32");
    // The core's peak: 24 independent FMA chains and nothing else (multiply-adds counted).
    if paralens::gemm::fma_peak_probe(1).is_some() {
        g.throughput(Throughput::Elements(16 * 24 * 4096));
        g.bench_function("fma_peak", |bch| {
            bch.iter(|| paralens::gemm::fma_peak_probe(black_box(4096)))
        });
    }
    for (m, n, k) in [
        (256, 256, 256),
        (128, 32, 784),
        (16, 18432, 25),
        (32, 2048, 400),
    ] {
        let a: Vec<f32> = (0..m * k).map(|i| ((i * 7) % 13) as f32 * 0.1).collect();
        let b: Vec<f32> = (0..k * n).map(|i| ((i * 5) % 11) as f32 * 0.1).collect();
        let mut out = vec![0.0f32; m * n];
        g.throughput(Throughput::Elements((m * n * k) as u64));
        g.bench_function(format!("{m}x{n}x{k}"), |bch| {
            bch.iter(|| {
                gemm(
                    &View::col_major(black_box(&a), m, k),
                    &View::col_major(&b, k, n).t(),
                    &mut ViewMut::col_major(&mut out, m, n),
                )
            })
        });
    }
    g.finish();
}

/// The MLP's layers on a batch of 32 through gemm: 784 -> 128 and 128 -> 10.
fn dense(c: &mut Criterion) {
    use paralens::prelude::*;
    let layer = Dense::<784, 128>::new();
    let p = layer.init(0);
    let x = SMatrix::<f32, 784, 32>::from_fn(|i, j| ((i * 7 + j) % 13) as f32 / 13.0);
    let dy = SMatrix::<f32, 128, 32>::from_fn(|i, j| ((i + j) % 5) as f32 * 0.1);
    let mut g = c.benchmark_group("dense_784_to_128_batch32_gemm");
    g.throughput(Throughput::Elements(784 * 128 * 32));
    g.bench_function("forward", |b| {
        b.iter(|| Para::forward(&layer, &p, black_box(x)))
    });
    // The parameter change goes to one buffer, as in a learner (boxed: 400 KB).
    let mut dp = Box::new(p.clone());
    g.bench_function("forward_and_reverse", |b| {
        b.iter(|| {
            // Results are observed through references: passing them to `black_box` by
            // value copied half a megabyte per call, a seventh of the time measured.
            let (y, pull) = Para::vjp(&layer, &p, black_box(x));
            black_box(&y);
            let dx = pull(dy, &mut dp);
            black_box(&dx);
            black_box(&dp);
        })
    });
    g.finish();
}
