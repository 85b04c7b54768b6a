//! Span layers: each instance against an independent direct-loop implementation written
//! here (a wrong index map in a span would pass the adjoint and finite-difference tests,
//! since its reverse is derived from the same span), the compiled form against the span's
//! definition, the adjoint identity, and finite differences.

use nalgebra::SVector;
use paralens::span::{CompiledSpan, Span, SpanLayer, instances};
use paralens::{Para, check_gradient};

fn vals(n: usize, seed: f64) -> Vec<f64> {
    (0..n)
        .map(|i| ((i as f64 + 1.0) * 0.731 + seed).sin())
        .collect()
}

fn close(a: &[f64], b: &[f64]) {
    assert_eq!(a.len(), b.len());
    for (i, (x, y)) in a.iter().zip(b).enumerate() {
        assert!((x - y).abs() < 1e-12, "index {i}: {x} vs {y}");
    }
}

/// Runs a span on (x, w) by its definition.
fn run(span: &Span, x: &[f64], w: &[f64]) -> Vec<f64> {
    let mut y = vec![0.0; span.outputs];
    span.apply(x, w, &mut y);
    y
}

/// Direct 2-D convolution, written independently of the span.
#[allow(clippy::too_many_arguments)]
fn conv2d_direct(
    x: &[f64],
    w: &[f64],
    (c, h, wd): (usize, usize, usize),
    co: usize,
    k: usize,
    stride: usize,
    pad: usize,
    dil: usize,
) -> Vec<f64> {
    let oh = (h + 2 * pad - dil * (k - 1) - 1) / stride + 1;
    let ow = (wd + 2 * pad - dil * (k - 1) - 1) / stride + 1;
    let mut y = vec![0.0; co * oh * ow];
    for o in 0..co {
        for r in 0..oh {
            for q in 0..ow {
                let mut acc = 0.0;
                for i in 0..c {
                    for a in 0..k {
                        for b in 0..k {
                            let (yy, xx) = (
                                (r * stride + a * dil) as isize - pad as isize,
                                (q * stride + b * dil) as isize - pad as isize,
                            );
                            if yy >= 0 && xx >= 0 && (yy as usize) < h && (xx as usize) < wd {
                                acc += x[i * h * wd + yy as usize * wd + xx as usize]
                                    * w[o * c * k * k + i * k * k + a * k + b];
                            }
                        }
                    }
                }
                y[o * oh * ow + r * ow + q] = acc;
            }
        }
    }
    y
}

#[test]
fn conv2d_matches_a_direct_loop_with_channels_stride_padding_dilation() {
    for &(c, h, w, co, k, s, p, d) in &[
        (1, 5, 5, 1, 3, 1, 0, 1),
        (2, 7, 6, 3, 3, 2, 1, 1),
        (3, 8, 8, 2, 2, 1, 2, 2),
        (2, 6, 9, 4, 3, 3, 1, 2),
    ] {
        let span = instances::conv2d(c, h, w, co, k, s, p, d);
        let x = vals(span.inputs, 0.1);
        let wt = vals(span.params, 0.9);
        close(
            &run(&span, &x, &wt),
            &conv2d_direct(&x, &wt, (c, h, w), co, k, s, p, d),
        );
    }
}

#[test]
fn conv1d_dense_bias_depthwise_pool_and_graph_match_direct_loops() {
    // conv1d: y[o][t] = sum_i sum_k x[i][t s + k d - p] w[o][i][k]
    let (c, n, co, k, s, p, d) = (2, 9, 3, 3, 2, 1, 2);
    let span = instances::conv1d(c, n, co, k, s, p, d);
    let (x, w) = (vals(span.inputs, 0.2), vals(span.params, 0.4));
    let on = (n + 2 * p - d * (k - 1) - 1) / s + 1;
    let mut want = vec![0.0; co * on];
    for o in 0..co {
        for t in 0..on {
            for i in 0..c {
                for kk in 0..k {
                    let pos = (t * s + kk * d) as isize - p as isize;
                    if pos >= 0 && (pos as usize) < n {
                        want[o * on + t] += x[i * n + pos as usize] * w[(o * c + i) * k + kk];
                    }
                }
            }
        }
    }
    close(&run(&span, &x, &w), &want);

    // dense: y = W x with W row-major (output by input)
    let span = instances::dense(4, 3);
    let (x, w) = (vals(4, 0.3), vals(12, 0.5));
    let want: Vec<f64> = (0..3)
        .map(|o| (0..4).map(|i| w[o * 4 + i] * x[i]).sum())
        .collect();
    close(&run(&span, &x, &w), &want);

    // bias: y = w
    let span = instances::bias(5);
    let w = vals(5, 0.6);
    close(&run(&span, &[], &w), &w);

    // depthwise: each channel its own kernel
    let (c, h, wd, k) = (3, 5, 4, 2);
    let span = instances::depthwise2d(c, h, wd, k, 1, 0, 1);
    let (x, w) = (vals(span.inputs, 0.7), vals(span.params, 0.8));
    let mut want = Vec::new();
    for ch in 0..c {
        let xs = &x[ch * h * wd..(ch + 1) * h * wd];
        let ws = &w[ch * k * k..(ch + 1) * k * k];
        want.extend(conv2d_direct(xs, ws, (1, h, wd), 1, k, 1, 0, 1));
    }
    close(&run(&span, &x, &w), &want);

    // average pooling 2x2 stride 2
    let span = instances::avg_pool2d(2, 4, 6, 2, 2);
    let x = vals(span.inputs, 0.9);
    let mut want = Vec::new();
    for ch in 0..2 {
        for r in 0..2 {
            for q in 0..3 {
                let at = |a: usize, b: usize| x[ch * 24 + (2 * r + a) * 6 + 2 * q + b];
                want.push((at(0, 0) + at(0, 1) + at(1, 0) + at(1, 1)) / 4.0);
            }
        }
    }
    close(&run(&span, &x, &[]), &want);

    // graph convolution on a path 0-1-2 plus an isolated node 3: Y = A' X W
    let (nodes, fi, fo) = (4, 2, 3);
    let span = instances::graph_conv(nodes, &[(0, 1), (1, 2)], fi, fo);
    let (x, w) = (vals(nodes * fi, 1.1), vals(fi * fo, 1.3));
    let deg: [f64; 4] = [2.0, 3.0, 2.0, 1.0];
    let edge =
        |i: usize, j: usize| i == j || (i as isize - j as isize).abs() == 1 && i < 3 && j < 3;
    let mut want = vec![0.0; nodes * fo];
    for i in 0..nodes {
        for j in 0..nodes {
            if edge(i, j) {
                let a: f64 = 1.0 / (deg[i] * deg[j]).sqrt();
                for g in 0..fo {
                    for f in 0..fi {
                        want[i * fo + g] += a * x[j * fi + f] * w[f * fo + g];
                    }
                }
            }
        }
    }
    close(&run(&span, &x, &w), &want);
}

#[test]
fn transposed_convolution_scatters_each_input_through_the_kernel() {
    // Direct transposed convolution: every input pixel adds kernel * value at its strided
    // position in the larger output (cropped by the padding).
    let (c, h, w, co, k, s, p) = (2, 3, 3, 2, 3, 2, 1);
    let span = instances::conv_transpose2d(c, h, w, co, k, s, p, 1);
    let (oh, ow) = ((h - 1) * s + k - 2 * p, (w - 1) * s + k - 2 * p);
    assert_eq!(span.outputs, co * oh * ow);
    let (x, wt) = (vals(span.inputs, 0.2), vals(span.params, 0.3));
    let mut want = vec![0.0; co * oh * ow];
    // The span's parameter layout is that of the forward convolution from `co` to `c`
    // channels: w[((ci * co + o) * k + a) * k + b] for input channel ci, output channel o.
    for ci in 0..c {
        for r in 0..h {
            for q in 0..w {
                for o in 0..co {
                    for a in 0..k {
                        for b in 0..k {
                            let (yy, xx) = (
                                (r * s + a) as isize - p as isize,
                                (q * s + b) as isize - p as isize,
                            );
                            if yy >= 0 && xx >= 0 && (yy as usize) < oh && (xx as usize) < ow {
                                want[(o * oh + yy as usize) * ow + xx as usize] +=
                                    x[(ci * h + r) * w + q] * wt[((ci * co + o) * k + a) * k + b];
                            }
                        }
                    }
                }
            }
        }
    }
    close(&run(&span, &x, &wt), &want);
}

/// Every instance, for the generic checks.
fn all_spans() -> Vec<(&'static str, Span)> {
    vec![
        ("dense", instances::dense(5, 3)),
        ("bias", instances::bias(4)),
        ("conv1d", instances::conv1d(2, 9, 3, 3, 2, 1, 2)),
        ("conv2d", instances::conv2d(2, 7, 6, 3, 3, 2, 1, 1)),
        ("depthwise", instances::depthwise2d(3, 5, 4, 2, 1, 1, 1)),
        (
            "transposed",
            instances::conv_transpose2d(2, 3, 3, 2, 3, 2, 1, 1),
        ),
        ("avg_pool", instances::avg_pool2d(2, 4, 6, 2, 2)),
        (
            "graph",
            instances::graph_conv(4, &[(0, 1), (1, 2), (2, 3), (3, 0)], 2, 3),
        ),
    ]
}

#[test]
fn compiled_form_equals_the_definition_in_both_directions() {
    for (_, span) in all_spans() {
        let c = CompiledSpan::<f64>::new(&span);
        let (x, w, dy) = (
            vals(span.inputs, 0.1),
            vals(span.params, 0.2),
            vals(span.outputs, 0.3),
        );
        let mut y = vec![0.0; span.outputs];
        c.forward(&x, &w, &mut y);
        close(&y, &run(&span, &x, &w));
        let (mut dx, mut dw) = (vec![0.0; span.inputs], vec![0.0; span.params]);
        span.apply_reverse(&x, &w, &dy, &mut dx, &mut dw);
        let (mut cdx, mut cdw) = (vec![0.0; span.inputs], vec![0.0; span.params]);
        c.reverse_input(&w, &dy, &mut cdx);
        c.reverse_param(&x, &dy, &mut cdw);
        close(&cdx, &dx);
        close(&cdw, &dw);
    }
}

#[test]
fn adjoint_identity_holds_for_every_instance() {
    // The layer is linear in x (for fixed w) and in w (for fixed x), so
    // <f(x, w), z> = <x, R_x(z)> = <w, R_w(z)>. Bias and pooling are linear in one argument
    // only: for them the identity holds for the argument they read.
    for (name, span) in all_spans() {
        let (x, w, z) = (
            vals(span.inputs, 0.4),
            vals(span.params, 0.5),
            vals(span.outputs, 0.6),
        );
        let y = run(&span, &x, &w);
        let lhs: f64 = y.iter().zip(&z).map(|(a, b)| a * b).sum();
        let (mut dx, mut dw) = (vec![0.0; span.inputs], vec![0.0; span.params]);
        span.apply_reverse(&x, &w, &z, &mut dx, &mut dw);
        let via_x: f64 = x.iter().zip(&dx).map(|(a, b)| a * b).sum();
        let via_w: f64 = w.iter().zip(&dw).map(|(a, b)| a * b).sum();
        if span.params > 0 && span.inputs > 0 {
            assert!((lhs - via_x).abs() < 1e-10, "{name}: {lhs} vs {via_x}");
            assert!((lhs - via_w).abs() < 1e-10, "{name}: {lhs} vs {via_w}");
        } else if span.inputs > 0 {
            assert!((lhs - via_x).abs() < 1e-10, "{name}: {lhs} vs {via_x}");
        } else {
            assert!((lhs - via_w).abs() < 1e-10, "{name}: {lhs} vs {via_w}");
        }
    }
}

#[test]
fn span_layers_match_finite_differences() {
    // 2 channels of 5x5 -> 2 channels of 3x3, kernel 3: a Para lens on static vectors.
    let layer = SpanLayer::<f64, 50, 18, 36>::conv2d::<2, 5, 5, 2, 3, 1, 0>();
    let (w, x) = (
        SVector::<f64, 36>::from_vec(vals(36, 0.7)),
        SVector::<f64, 50>::from_vec(vals(50, 0.8)),
    );
    let r = check_gradient(
        |(w, x): (SVector<f64, 36>, SVector<f64, 50>)| layer.forward(&w, x),
        |(w, x), d| layer.changes(&w, x, d),
        (w, x),
        1e-6,
    );
    assert!(r.passes(1e-7), "{r}");
    let dense = SpanLayer::<f64, 4, 3, 12>::dense();
    let r = check_gradient(
        |(w, x): (SVector<f64, 12>, SVector<f64, 4>)| dense.forward(&w, x),
        |(w, x), d| dense.changes(&w, x, d),
        (
            SVector::from_vec(vals(12, 0.1)),
            SVector::from_vec(vals(4, 0.2)),
        ),
        1e-6,
    );
    assert!(r.passes(1e-7), "{r}");
}

#[test]
fn spans_with_cells_out_of_range_are_refused() {
    let mut span = instances::dense(2, 2);
    span.cells[0].t = 9;
    let e = span.validate().unwrap_err();
    assert!(
        e.contains("outside the span's sizes (2 inputs, 4 parameters, 2 outputs)"),
        "{e}"
    );
    let r = std::panic::catch_unwind(|| SpanLayer::<f64, 2, 2, 3>::new(&instances::dense(2, 2)));
    assert!(
        r.is_err(),
        "a layer type that does not fit the span is refused"
    );
}

#[allow(dead_code)]
#[path = "../examples/digits_cnn.rs"]
mod digits_cnn;

#[test]
fn digits_cnn_reaches_97_percent() {
    // Two seeded stratified splits, 20 epochs (the example runs 30); the bar is 97%.
    let accs: Vec<f64> = (0..2)
        .map(|s| digits_cnn::run(s, 20, false).test_accuracy)
        .collect();
    let mean = accs.iter().sum::<f64>() / 2.0;
    assert!(mean >= 0.97, "mean test accuracy {mean} over {accs:?}");
    assert!(accs.iter().all(|&a| a >= 0.96), "{accs:?}");
}

#[allow(dead_code)]
#[path = "../examples/graph_conv.rs"]
mod graph_conv;

#[test]
fn graph_convolution_separates_the_karate_club_from_two_labels() {
    // The graph is the published one: 34 members, 78 undirected friendships, no repeats.
    let mut seen = std::collections::HashSet::new();
    for &(a, b) in &graph_conv::EDGES {
        assert!(a < b && b < 34 && seen.insert((a, b)));
    }
    for seed in 0..3 {
        let acc = graph_conv::run(200, seed, false);
        assert!(
            acc >= 0.9,
            "seed {seed}: accuracy {acc} on the unlabelled members"
        );
    }
}

#[test]
fn max_pooling_matches_a_direct_loop_and_routes_changes_to_the_winners() {
    use paralens::Lens;
    use paralens::span::MaxPool2d;
    // 2 channels of 4x6, 2x2 windows, stride 2.
    let pool = MaxPool2d::<48, 12>::new::<2, 4, 6, 2, 2>();
    let x = SVector::<f64, 48>::from_vec(vals(48, 0.3));
    let y = pool.apply(x);
    for ch in 0..2 {
        for r in 0..2 {
            for q in 0..3 {
                let at = |a: usize, b: usize| x[ch * 24 + (2 * r + a) * 6 + 2 * q + b];
                let want = at(0, 0).max(at(0, 1)).max(at(1, 0)).max(at(1, 1));
                assert_eq!(y[ch * 6 + r * 3 + q], want);
            }
        }
    }
    // Away from ties the max is differentiable: finite differences agree.
    let r = check_gradient(|x| pool.apply(x), |x, d| pool.reverse(x, d), x, 1e-6);
    assert!(r.passes(1e-7), "{r}");
}

/// Max pooling of a batch written as a plain loop: each output is the first largest value
/// of its window, and its change goes to that input.
fn pool_direct(
    x: &[f64],
    (c, h, w, k, s): (usize, usize, usize, usize, usize),
    dy: &[f64],
) -> (Vec<f64>, Vec<f64>) {
    let (oh, ow) = ((h - k) / s + 1, (w - k) / s + 1);
    let (mut y, mut dx) = (Vec::new(), vec![0.0; x.len()]);
    for ch in 0..c {
        for oy in 0..oh {
            for ox in 0..ow {
                let mut best = ch * h * w + oy * s * w + ox * s;
                for ky in 0..k {
                    for kx in 0..k {
                        let i = ch * h * w + (oy * s + ky) * w + ox * s + kx;
                        if x[i] > x[best] {
                            best = i;
                        }
                    }
                }
                dx[best] += dy[y.len()];
                y.push(x[best]);
            }
        }
    }
    (y, dx)
}

#[test]
fn max_pooling_batches_match_the_plain_loop_with_ties_and_odd_sizes() {
    use nalgebra::SMatrix;
    use paralens::Lens;
    use paralens::span::MaxPool2d;
    // Values on three levels, so that windows hold ties (the first wins).
    let tied = |n: usize, seed: usize| -> Vec<f64> {
        (0..n).map(|i| ((i * 7 + seed) % 3) as f64 * 0.5).collect()
    };
    // 2x2 windows, stride 2, on odd sizes (the last row and column are left out).
    let pool = MaxPool2d::<70, 12>::new::<2, 5, 7, 2, 2>();
    let (x, dy) = (tied(70 * 3, 1), tied(12 * 3, 2));
    let xm = SMatrix::<f64, 70, 3>::from_column_slice(&x);
    let (y, pull) = pool.apply_vjp(xm);
    let dx = pull(SMatrix::<f64, 12, 3>::from_column_slice(&dy));
    for b in 0..3 {
        let (wy, wdx) = pool_direct(&x[b * 70..][..70], (2, 5, 7, 2, 2), &dy[b * 12..][..12]);
        assert_eq!(y.column(b).as_slice(), &wy[..]);
        assert_eq!(dx.column(b).as_slice(), &wdx[..]);
    }
    // 3x3 windows, stride 2 (overlapping), the general loop.
    let pool = MaxPool2d::<98, 18>::new::<2, 7, 7, 3, 2>();
    let (x, dy) = (tied(98 * 2, 3), tied(18 * 2, 4));
    let xm = SMatrix::<f64, 98, 2>::from_column_slice(&x);
    let (y, pull) = pool.apply_vjp(xm);
    let dx = pull(SMatrix::<f64, 18, 2>::from_column_slice(&dy));
    for b in 0..2 {
        let (wy, wdx) = pool_direct(&x[b * 98..][..98], (2, 7, 7, 3, 2), &dy[b * 18..][..18]);
        assert_eq!(y.column(b).as_slice(), &wy[..]);
        assert_eq!(dx.column(b).as_slice(), &wdx[..]);
        assert_eq!(pool.apply(xm).column(b).as_slice(), &wy[..]);
    }
}

#[test]
fn convolution_size_checks_name_the_size_that_is_wrong() {
    use paralens::span::instances::conv2d_sizes_wrong;
    let geometry = [1, 8, 8, 4, 3, 1, 0];
    assert_eq!(conv2d_sizes_wrong([64, 144, 36], geometry), None);
    assert!(
        conv2d_sizes_wrong([63, 144, 36], geometry)
            .unwrap()
            .contains("input size I")
    );
    assert!(
        conv2d_sizes_wrong([64, 100, 36], geometry)
            .unwrap()
            .contains("output size O")
    );
    assert!(
        conv2d_sizes_wrong([64, 144, 35], geometry)
            .unwrap()
            .contains("parameter count P")
    );
    assert!(
        conv2d_sizes_wrong([64, 144, 36], [1, 8, 8, 4, 9, 1, 0])
            .unwrap()
            .contains("kernel must fit")
    );
}

#[test]
fn bias_and_the_convolution_para_match_finite_differences() {
    use paralens::span::{Bias, Conv2d};
    let bias = Bias::<4, f64>::new();
    let r = check_gradient(
        |(b, x): (SVector<f64, 4>, SVector<f64, 4>)| bias.forward(&b, x),
        |(b, x), d| bias.changes(&b, x, d),
        (
            SVector::from_vec(vals(4, 0.1)),
            SVector::from_vec(vals(4, 0.2)),
        ),
        1e-6,
    );
    assert!(r.passes(1e-7), "{r}");
    // 2 channels of 5x5 -> 2 channels of 3x3 with padding 0, stride 1.
    let conv = Conv2d::<f64, 50, 18, 36>::new::<2, 5, 5, 2, 3, 1, 0>();
    let r = check_gradient(
        |(w, x): (SVector<f64, 36>, SVector<f64, 50>)| conv.forward(&w, x),
        |(w, x), d| conv.changes(&w, x, d),
        (
            SVector::from_vec(vals(36, 0.4)),
            SVector::from_vec(vals(50, 0.5)),
        ),
        1e-6,
    );
    assert!(r.passes(1e-7), "{r}");
}

#[test]
fn flatten_is_a_column_major_reshape_whose_reverse_is_its_adjoint() {
    use nalgebra::SMatrix;
    use paralens::span::Flatten;
    use paralens::{Dense, Init, Lens, ParaExt};
    let flat = Flatten::<3, 4, 12>::new();
    let x = SMatrix::<f64, 3, 4>::from_fn(|i, j| (i * 4 + j) as f64 * 0.5 - 1.0);
    let (y, pull) = flat.apply_vjp(x);
    for j in 0..4 {
        for i in 0..3 {
            assert_eq!(y[j * 3 + i], x[(i, j)]);
        }
    }
    let d = SVector::<f64, 12>::from_fn(|k, _| (k as f64).cos());
    let dx = pull(d);
    assert!((y.dot(&d) - x.dot(&dx)).abs() < 1e-12, "adjoint identity");
    let r = check_gradient(|x| flat.apply(x), |x, d| flat.apply_vjp(x).1(d), x, 1e-6);
    assert!(r.passes(1e-9), "{r}");
    // It composes with the layers after it: 3x4 -> 12 -> dense -> 2.
    let model = Flatten::<3, 4, 12>::new().then(Dense::<12, 2, f64>::new());
    let p = model.init(0);
    assert_eq!(model.forward(&p, x).len(), 2);
}

// A slice shorter than the span reads is refused at the call, naming it (a short `x` was an
// index out of bounds inside the kernel; a short `y` was filled in part, silently).
#[test]
fn compiled_kernels_refuse_short_slices_by_name() {
    let span = instances::dense(3, 2);
    let c = CompiledSpan::<f64>::new(&span);
    let (x, w, dy) = (
        vals(span.inputs, 0.1),
        vals(span.params, 0.2),
        vals(span.outputs, 0.3),
    );
    let message = |f: &mut dyn FnMut()| {
        let e = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).unwrap_err();
        e.downcast_ref::<String>().cloned().unwrap_or_default()
    };
    let mut y = vec![0.0; span.outputs - 1];
    assert_eq!(
        message(&mut || c.forward(&x, &w, &mut y)),
        format!(
            "CompiledSpan::forward: `y` has {} entries, and the span reads {}",
            span.outputs - 1,
            span.outputs
        )
    );
    let mut y = vec![0.0; span.outputs];
    assert!(message(&mut || c.forward(&x[1..], &w, &mut y)).contains("`x` has 2 entries"));
    let mut dx = vec![0.0; span.inputs];
    assert!(
        message(&mut || c.reverse_input(&w, &dy[1..], &mut dx)).contains("reverse_input: `dy`")
    );
    let mut dw = vec![0.0; span.params - 1];
    assert!(message(&mut || c.reverse_param(&x, &dy, &mut dw)).contains("reverse_param: `dw`"));
}
