//! Every fast path against its span definition, each path forced explicitly: the dense layer
//! by its small-shape path (`span/small.rs` and nalgebra) and by `gemm` with each
//! micro-kernel, on static and on heap batches (`vjp_params` too, on static ones); the bias; the convolution by matrix products with each micro-kernel and by its
//! direct kernels. A path this CPU lacks is reported as skipped on standard output (this
//! binary has no harness, so the lines show under `cargo test`), and a run where a path
//! ran on nothing fails: no check passes without checking anything.

use nalgebra::{SMatrix, SVector};
use paralens::gemm::{Kernel, with_kernel};
use paralens::span::{Bias, ConvGeometry, Span, instances};
use paralens::{Dense, DenseParams, HeapMatrix, Init, Para, Real, Tangent};

/// Deterministic values in [-1, 1].
fn vals(n: usize, seed: f64) -> Vec<f64> {
    (0..n)
        .map(|i| ((i as f64 + 1.0) * 0.731 + seed).sin())
        .collect()
}

/// The span's definition on a batch laid image after image: outputs, input changes, and the
/// parameter change summed over the images.
fn by_definition(span: &Span, x: &[f64], w: &[f64], dy: &[f64]) -> (Vec<f64>, Vec<f64>, Vec<f64>) {
    let (mut y, mut dx, mut dw) = (vec![], vec![], vec![0.0; span.params]);
    for (xb, dyb) in x.chunks(span.inputs).zip(dy.chunks(span.outputs)) {
        let mut yb = vec![0.0; span.outputs];
        span.apply(xb, w, &mut yb);
        y.extend(yb);
        let (mut dxb, mut dwb) = (vec![0.0; span.inputs], vec![0.0; span.params]);
        span.apply_reverse(xb, w, dyb, &mut dxb, &mut dwb);
        dx.extend(dxb);
        for (a, b) in dw.iter_mut().zip(dwb) {
            *a += b;
        }
    }
    (y, dx, dw)
}

/// `got` equal to `want` to `tol` relative to each value's size.
fn assert_close<T: Real + Into<f64>>(what: &str, got: &[T], want: &[f64], tol: f64) {
    assert_eq!(got.len(), want.len(), "{what}: lengths");
    for (i, (a, b)) in got.iter().zip(want).enumerate() {
        let a: f64 = (*a).into();
        assert!(
            (a - b).abs() <= tol * (1.0 + b.abs()),
            "{what}, index {i}: {a} against the span's {b}"
        );
    }
}

/// What ran and what was skipped, printed as it happens.
#[derive(Default)]
struct Report {
    ran: usize,
    skipped: usize,
}

impl Report {
    /// Runs `check` under `kernel` if this CPU has it, else reports the skip.
    fn with_kernel(&mut self, path: &str, kernel: Kernel, check: impl FnOnce() -> usize) {
        match with_kernel(kernel, check) {
            Some(cases) => self.ran(&format!("{path}, {kernel:?} kernel"), cases),
            None => self.skip(&format!("{path}, {kernel:?} kernel"), "this CPU lacks it"),
        }
    }

    fn ran(&mut self, path: &str, cases: usize) {
        assert!(cases > 0, "{path}: no case ran");
        println!("ok       {path}: {cases} cases equal to the span definition");
        self.ran += 1;
    }

    fn skip(&mut self, path: &str, why: &str) {
        println!("SKIPPED  {path}: {why}");
        self.skipped += 1;
    }
}

/// Dense layer `I -> O` on a batch of `B`, forward, input change and parameter change,
/// against the dense span and the bias span beside it; `T` is f32 or f64. Checks both the
/// static and the heap batch. Returns the cases checked.
fn dense_case<T: Real + Into<f64>, const I: usize, const O: usize, const B: usize>(
    gemm: bool,
    tol: f64,
) -> usize {
    assert_eq!(
        Dense::<I, O, T>::takes_gemm(B),
        gemm,
        "{I}->{O} on {B} columns does not take the path this case is for"
    );
    let layer = Dense::<I, O, T>::new();
    let p: DenseParams<T, I, O> = layer.init(7);
    let x = SMatrix::<T, I, B>::from_fn(|r, c| T::cst(((r * B + c) as f64 * 0.37).sin()));
    let dy = SMatrix::<T, O, B>::from_fn(|r, c| T::cst(((r * B + c) as f64 * 0.53).cos()));
    // The span's weights: w[o * I + i] = W[(o, i)]; inputs and changes column by column.
    let to64 = |v: &[T]| -> Vec<f64> { v.iter().map(|&a| a.into()).collect() };
    let w: Vec<f64> = (0..I * O).map(|k| p.w[(k / I, k % I)].into()).collect();
    let (want_y, want_dx, want_dw) = by_definition(
        &instances::dense(I, O),
        &to64(x.as_slice()),
        &w,
        &to64(dy.as_slice()),
    );
    let want_y: Vec<f64> = want_y
        .iter()
        .enumerate()
        .map(|(k, v)| v + Into::<f64>::into(p.b[k % O]))
        .collect();
    let want_db: Vec<f64> = (0..O)
        .map(|o| (0..B).map(|c| Into::<f64>::into(dy[(o, c)])).sum())
        .collect();
    let check = |what: &str, y: &[T], dx: &[T], dp: &DenseParams<T, I, O>| {
        assert_close(&format!("dense {what} forward"), y, &want_y, tol);
        assert_close(&format!("dense {what} input change"), dx, &want_dx, tol);
        let dw: Vec<T> = (0..I * O).map(|k| dp.w[(k / I, k % I)]).collect();
        assert_close(&format!("dense {what} weight change"), &dw, &want_dw, tol);
        assert_close(
            &format!("dense {what} bias change"),
            dp.b.as_slice(),
            &want_db,
            tol,
        );
    };
    let (y, back) = Para::<SMatrix<T, I, B>>::vjp(&layer, &p, x);
    let mut dp = <DenseParams<T, I, O> as Tangent>::zeros();
    let dx = back(dy, &mut dp);
    check("static", y.as_slice(), dx.as_slice(), &dp);
    // The parameter change alone (`vjp_params`, the learner's call), by its own code.
    let (y, back) = Para::<SMatrix<T, I, B>>::vjp_params(&layer, &p, x);
    let mut dp = <DenseParams<T, I, O> as Tangent>::zeros();
    back(dy, &mut dp);
    assert_close("dense vjp_params forward", y.as_slice(), &want_y, tol);
    let dw: Vec<T> = (0..I * O).map(|k| dp.w[(k / I, k % I)]).collect();
    assert_close("dense vjp_params weight change", &dw, &want_dw, tol);
    assert_close(
        "dense vjp_params bias change",
        dp.b.as_slice(),
        &want_db,
        tol,
    );
    let (y, back) = Para::<HeapMatrix<T, I, B>>::vjp(&layer, &p, HeapMatrix::from_matrix(&x));
    let mut dp = <DenseParams<T, I, O> as Tangent>::zeros();
    let dx = back(HeapMatrix::from_matrix(&dy), &mut dp);
    check("heap", y.as_slice(), dx.as_slice(), &dp);
    2
}

/// The bias on a batch of 3, static and heap, against the bias span.
fn bias_cases() -> usize {
    const N: usize = 6;
    let b = SVector::<f64, N>::from_vec(vals(N, 0.4));
    let x = SMatrix::<f64, N, 3>::from_vec(vals(N * 3, 0.1));
    let dy = SMatrix::<f64, N, 3>::from_vec(vals(N * 3, 0.8));
    // The bias span has no inputs (`y[j] = b[j]`); the layer adds it to each column, so the
    // input change is the output change.
    let span = instances::bias(N);
    let (mut want_y, mut want_db) = (vec![], vec![0.0; N]);
    for (xb, dyb) in x.as_slice().chunks(N).zip(dy.as_slice().chunks(N)) {
        let mut yb = vec![0.0; N];
        span.apply(&[], b.as_slice(), &mut yb);
        want_y.extend(yb.iter().zip(xb).map(|(a, b)| a + b));
        let mut dbb = vec![0.0; N];
        span.apply_reverse(&[], b.as_slice(), dyb, &mut [], &mut dbb);
        for (a, b) in want_db.iter_mut().zip(dbb) {
            *a += b;
        }
    }
    let want_dx = dy.as_slice().to_vec();
    let layer = Bias::<N, f64>::new();
    let (y, back) = Para::<SMatrix<f64, N, 3>>::vjp(&layer, &b, x);
    let mut db = SVector::zeros();
    let dx = back(dy, &mut db);
    assert_close("bias forward", y.as_slice(), &want_y, 1e-12);
    assert_close("bias input change", dx.as_slice(), &want_dx, 1e-12);
    assert_close("bias change", db.as_slice(), &want_db, 1e-12);
    let (y, back) = Para::<HeapMatrix<f64, N, 3>>::vjp(&layer, &b, HeapMatrix::from_matrix(&x));
    let mut db = SVector::zeros();
    let dx = back(HeapMatrix::from_matrix(&dy), &mut db);
    assert_close("bias heap forward", y.as_slice(), &want_y, 1e-12);
    assert_close("bias heap input change", dx.as_slice(), &want_dx, 1e-12);
    assert_close("bias heap change", db.as_slice(), &want_db, 1e-12);
    2
}

/// Convolution geometries: channels, strides, padding (wider than the kernel's reach too),
/// dilation, the shapes the direct kernels are written for (both MNIST convolutions, inputs
/// two vectors wide, 5x5 kernels by tap rows) and the images in a batch.
/// `[c, h, w, co, k, stride, pad, dilation, images]`.
const GEOMETRIES: [[usize; 9]; 16] = [
    [1, 8, 8, 4, 3, 1, 0, 1, 2],
    [2, 7, 6, 3, 3, 2, 1, 1, 1],
    [3, 8, 8, 2, 2, 1, 2, 2, 2],
    [2, 6, 9, 4, 3, 3, 1, 2, 1],
    [1, 3, 4, 2, 3, 1, 3, 1, 2],
    [2, 4, 4, 1, 2, 3, 3, 1, 1],
    [1, 28, 28, 16, 5, 1, 0, 1, 2],
    [16, 12, 12, 32, 5, 1, 0, 1, 2],
    [3, 9, 11, 10, 3, 1, 1, 1, 3],
    [2, 10, 7, 5, 3, 1, 2, 2, 2],
    [4, 8, 8, 20, 2, 1, 0, 1, 1],
    [2, 9, 9, 9, 3, 2, 1, 1, 3],
    [5, 7, 7, 17, 4, 1, 3, 1, 2],
    [1, 10, 12, 3, 5, 1, 0, 1, 2],
    [2, 16, 30, 6, 3, 1, 1, 1, 2],
    [1, 14, 30, 4, 5, 1, 2, 1, 2],
];

/// Which convolution path a check forces.
#[derive(Clone, Copy)]
enum ConvPath {
    Products,
    Direct,
}

/// Every geometry's three passes by `path` in f64 and f32 against the span definition;
/// returns the passes that ran (the direct kernels decline some shapes).
fn conv_cases(path: ConvPath) -> usize {
    let mut ran = 0;
    for &[c, h, w, co, k, s, p, d, images] in &GEOMETRIES {
        let span = instances::conv2d(c, h, w, co, k, s, p, d);
        let g = ConvGeometry::new(c, h, w, co, k, s, p, d).unwrap();
        assert_eq!(g.sizes(), (span.inputs, span.outputs, span.params));
        let (x, wt, dy) = (
            vals(span.inputs * images, 0.1),
            vals(span.params, 0.2),
            vals(span.outputs * images, 0.3),
        );
        let want = by_definition(&span, &x, &wt, &dy);
        let shape = format!("{:?}, {images} images", (c, h, w, co, k, s, p, d));
        ran += conv_precision::<f64>(path, &g, (&x, &wt, &dy), &want, 1e-12, &shape);
        ran += conv_precision::<f32>(path, &g, (&x, &wt, &dy), &want, 1e-4, &shape);
    }
    ran
}

fn conv_precision<T: Real + Into<f64>>(
    path: ConvPath,
    g: &ConvGeometry,
    (x, wt, dy): (&[f64], &[f64], &[f64]),
    (want_y, want_dx, want_dw): &(Vec<f64>, Vec<f64>, Vec<f64>),
    tol: f64,
    shape: &str,
) -> usize {
    let cast = |v: &[f64]| -> Vec<T> { v.iter().map(|&a| T::cst(a)).collect() };
    let (x, wt, dy) = (cast(x), cast(wt), cast(dy));
    // NaN where a pass must write: a value it skipped fails the comparison.
    let (mut y, mut dx, mut dw) = (
        vec![T::cst(f64::NAN); want_y.len()],
        vec![T::cst(f64::NAN); want_dx.len()],
        vec![T::cst(f64::NAN); want_dw.len()],
    );
    let ran = match path {
        ConvPath::Products => {
            let g = g.products_only();
            g.forward(&x, &wt, &mut y);
            g.reverse_input(&wt, &dy, &mut dx);
            g.reverse_param(&x, &dy, &mut dw);
            [true; 3]
        }
        ConvPath::Direct => [
            g.direct_forward(&x, &wt, &mut y),
            g.direct_reverse_input(&wt, &dy, &mut dx),
            g.direct_reverse_param(&x, &dy, &mut dw),
        ],
    };
    let passes = [
        ("forward", &y, want_y),
        ("input change", &dx, want_dx),
        ("parameter change", &dw, want_dw),
    ];
    // The layer adds the parameter change into the learner's buffer: the same path (taken
    // here exactly where the setting pass ran) must add to what is there.
    if ran[2] {
        let g = match path {
            ConvPath::Products => g.products_only(),
            ConvPath::Direct => *g,
        };
        let before: Vec<f64> = (0..want_dw.len())
            .map(|i| 0.25 - 0.125 * (i % 5) as f64)
            .collect();
        let mut added = cast(&before);
        g.add_reverse_param(&x, &dy, &mut added);
        let want: Vec<f64> = before.iter().zip(want_dw).map(|(b, w)| b + w).collect();
        assert_close(
            &format!("conv parameter change added, {shape}"),
            &added,
            &want,
            tol,
        );
    }
    let mut count = 0;
    for ((pass, got, want), ran) in passes.into_iter().zip(ran) {
        if ran {
            assert_close(&format!("conv {pass} of {shape}"), got, want, tol);
            count += 1;
        } else {
            // A declined pass writes nothing.
            assert!(
                got.iter().all(|v| Into::<f64>::into(*v).is_nan()),
                "{pass} of {shape}"
            );
        }
    }
    count
}

fn main() {
    let mut report = Report::default();
    println!(
        "fast paths against their span definitions (best gemm kernel here: {:?})",
        Kernel::best()
    );

    report.ran("dense by the small-shape path", {
        dense_case::<f64, 5, 3, 1>(false, 1e-12)
            + dense_case::<f64, 4, 16, 4>(false, 1e-12)
            + dense_case::<f32, 5, 3, 2>(false, 1e-5)
    });
    for kernel in Kernel::ALL {
        report.with_kernel("dense by gemm", kernel, || {
            dense_case::<f64, 20, 17, 9>(true, 1e-12)
                + dense_case::<f32, 33, 16, 8>(true, 1e-4)
                + dense_case::<f32, 64, 40, 32>(true, 1e-4)
        });
    }
    report.ran("bias", bias_cases());
    for kernel in Kernel::ALL {
        report.with_kernel("convolution by matrix products", kernel, || {
            conv_cases(ConvPath::Products)
        });
    }
    // A caller forcing a narrower kernel turns the direct kernels (AVX-512) off.
    for kernel in [Kernel::Avx2Fma, Kernel::Portable] {
        let declined = with_kernel(kernel, || {
            let g = ConvGeometry::new(1, 8, 8, 4, 3, 1, 0, 1).unwrap();
            let mut y = [f32::NAN; 144];
            !g.direct_forward(&[0.5f32; 64], &[0.25; 36], &mut y) && y.iter().all(|v| v.is_nan())
        });
        assert_ne!(declined, Some(false), "direct kernels ran under {kernel:?}");
    }
    let direct = conv_cases(ConvPath::Direct);
    if direct > 0 {
        report.ran("convolution by direct kernels", direct);
    } else if Kernel::best() == Kernel::Avx512 {
        panic!("the direct convolution kernels declined every shape on a CPU with AVX-512");
    } else {
        report.skip(
            "convolution by direct kernels",
            "this CPU lacks AVX-512F, which they need",
        );
    }
    println!(
        "fast paths: {} checked, {} skipped for this CPU",
        report.ran, report.skipped
    );
}
