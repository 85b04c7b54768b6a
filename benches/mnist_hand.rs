//! The MNIST MLP step (784-128-10, ReLU, mean softmax cross-entropy, Adam, batch 32) written
//! by hand the way an expert would: nalgebra static storage allocated once (boxed), every
//! product called directly on that storage (a transpose is swapped strides, no copies), no
//! input change for the first layer, in-place updates. The reference the library's step is
//! measured against, in the same run, with either matrix product: `matrixmultiply::sgemm`
//! or the project's own `paralens::gemm` (whichever is faster on the machine is the bar).

use nalgebra::{SMatrix, SVector};

const I: usize = 784;
const H: usize = 128;
const O: usize = 10;
/// Images per step.
pub const B: usize = 32;

/// A column-major matrix as `sgemm` sees it: values, row stride, column stride, rows, columns.
pub(crate) struct Mat<'a> {
    v: &'a [f32],
    rs: isize,
    cs: isize,
    rows: usize,
    cols: usize,
}

pub(crate) fn mat<const R: usize, const C: usize>(m: &SMatrix<f32, R, C>) -> Mat<'_> {
    Mat {
        v: m.as_slice(),
        rs: 1,
        cs: R as isize,
        rows: R,
        cols: C,
    }
}

pub(crate) fn tr<const R: usize, const C: usize>(m: &SMatrix<f32, R, C>) -> Mat<'_> {
    Mat {
        v: m.as_slice(),
        rs: R as isize,
        cs: 1,
        rows: C,
        cols: R,
    }
}

/// Which matrix product the hand-written step calls.
#[derive(Clone, Copy, Debug)]
pub enum Product {
    /// `matrixmultiply::sgemm`.
    MatrixMultiply,
    /// `paralens::gemm::gemm` (packed panels, a SIMD kernel chosen for the CPU).
    Paralens,
}

/// `c = a b` (`c` overwritten) by `how`.
fn gemm<const R: usize, const C: usize>(how: Product, a: Mat, b: Mat, c: &mut SMatrix<f32, R, C>) {
    if let Product::Paralens = how {
        use paralens::gemm::{View, ViewMut, gemm};
        assert!(a.rows == R && b.cols == C && a.cols == b.rows, "shapes");
        fn view<'a>(m: &Mat<'a>, t: bool) -> View<'a, f32> {
            let (rows, cols, rs, cs) = if t {
                (m.cols, m.rows, m.cs, m.rs)
            } else {
                (m.rows, m.cols, m.rs, m.cs)
            };
            View::strided(m.v, rows, cols, rs as usize, cs as usize)
        }
        c.fill(0.0);
        gemm(
            &view(&a, false),
            &view(&b, true),
            &mut ViewMut::col_major(c.as_mut_slice(), R, C),
        );
        return;
    }
    gemm_beta(a, b, c, 0.0);
}

/// `c = a b + beta c` by `matrixmultiply::sgemm`.
pub(crate) fn gemm_beta<const R: usize, const C: usize>(
    a: Mat,
    b: Mat,
    c: &mut SMatrix<f32, R, C>,
    beta: f32,
) {
    assert!(a.rows == R && b.cols == C && a.cols == b.rows, "shapes");
    let last = |m: &Mat| (m.rows - 1) as isize * m.rs + (m.cols - 1) as isize * m.cs;
    assert!(last(&a) < a.v.len() as isize && last(&b) < b.v.len() as isize);
    // SAFETY: `a` is `R x k`, `b` is `k x C` and `c` is `R x C`, checked above; every offset
    // `i * rs + j * cs` they are read or written at is at most the last one, which is inside
    // its slice (checked above for `a` and `b`; `c` is a whole `R x C` column-major matrix).
    // `c` is borrowed mutably, so it does not alias `a` or `b`.
    unsafe {
        matrixmultiply::sgemm(
            R,
            a.cols,
            C,
            1.0,
            a.v.as_ptr(),
            a.rs,
            a.cs,
            b.v.as_ptr(),
            b.rs,
            b.cs,
            beta,
            c.as_mut_ptr(),
            1,
            R as isize,
        );
    }
}

/// Adam's moments for one array.
pub(crate) struct Moments<const R: usize, const C: usize> {
    m: Box<SMatrix<f32, R, C>>,
    v: Box<SMatrix<f32, R, C>>,
}

impl<const R: usize, const C: usize> Moments<R, C> {
    pub(crate) fn new() -> Self {
        Self {
            m: Box::new(SMatrix::zeros()),
            v: Box::new(SMatrix::zeros()),
        }
    }

    /// `p -= step m / (sqrt v + eps_hat)` after the moving averages take in `g`. Values that
    /// would go subnormal are flushed to zero, as an expert does (and as the library does):
    /// on repeated data the averages decay into subnormals, whose arithmetic is many times
    /// slower.
    #[inline]
    pub(crate) fn update(
        &mut self,
        p: &mut SMatrix<f32, R, C>,
        g: &SMatrix<f32, R, C>,
        step: f32,
        eps: f32,
    ) {
        let tiny = (f32::MIN_POSITIVE / 0.001).sqrt();
        let tiny_square = tiny * tiny;
        let (m, v) = (self.m.as_mut_slice(), self.v.as_mut_slice());
        let (p, g) = (p.as_mut_slice(), g.as_slice());
        for (((x, &d), m), v) in p.iter_mut().zip(g).zip(m).zip(v) {
            let d = if d.abs() < tiny { 0.0 } else { d };
            let m1 = 0.9 * *m + 0.1 * d;
            let v1 = 0.999 * *v + 0.001 * d * d;
            *m = if m1.abs() < tiny { 0.0 } else { m1 };
            *v = if v1 < tiny_square { 0.0 } else { v1 };
            *x -= step * *m / (v.sqrt() + eps);
        }
    }
}

/// The whole state of the hand-written learner, allocated once.
pub struct Hand {
    pub w1: Box<SMatrix<f32, H, I>>,
    pub b1: SVector<f32, H>,
    pub w2: Box<SMatrix<f32, O, H>>,
    pub b2: SVector<f32, O>,
    g_w1: Box<SMatrix<f32, H, I>>,
    g_w2: Box<SMatrix<f32, O, H>>,
    h: Box<SMatrix<f32, H, B>>,
    z: Box<SMatrix<f32, O, B>>,
    dh: Box<SMatrix<f32, H, B>>,
    s_w1: Moments<H, I>,
    s_b1: Moments<H, 1>,
    s_w2: Moments<O, H>,
    s_b2: Moments<O, 1>,
    lr: f32,
    b1t: f32,
    b2t: f32,
    how: Product,
}

impl Hand {
    /// From the weights of the library's model, with Adam's step size `lr`.
    pub fn new(
        w1: &SMatrix<f32, H, I>,
        b1: SVector<f32, H>,
        w2: &SMatrix<f32, O, H>,
        b2: SVector<f32, O>,
        lr: f32,
        how: Product,
    ) -> Self {
        Self {
            w1: Box::new(*w1),
            b1,
            w2: Box::new(*w2),
            b2,
            g_w1: Box::new(SMatrix::zeros()),
            g_w2: Box::new(SMatrix::zeros()),
            h: Box::new(SMatrix::zeros()),
            z: Box::new(SMatrix::zeros()),
            dh: Box::new(SMatrix::zeros()),
            s_w1: Moments::new(),
            s_b1: Moments::new(),
            s_w2: Moments::new(),
            s_b2: Moments::new(),
            lr,
            b1t: 1.0,
            b2t: 1.0,
            how,
        }
    }

    /// One step on the batch `x` (columns are images); returns the mean loss before it.
    pub fn step(&mut self, x: &SMatrix<f32, I, B>, labels: &[usize; B]) -> f32 {
        // Forward: h = relu(W1 x + b1), z = W2 h + b2.
        gemm(self.how, mat(&self.w1), mat(x), &mut self.h);
        for mut col in self.h.column_iter_mut() {
            col += &self.b1;
            col.apply(|v| *v = v.max(0.0));
        }
        gemm(self.how, mat(&self.w2), mat(&self.h), &mut self.z);
        // Softmax cross-entropy per column; z becomes dL/dz (mean over the batch).
        let mut loss = 0.0;
        let inv_b = 1.0 / B as f32;
        for (mut col, &c) in self.z.column_iter_mut().zip(labels) {
            col += &self.b2;
            let max = col.max();
            let sum: f32 = col.iter().map(|v| (v - max).exp()).sum();
            let lse = max + sum.ln();
            loss += lse - col[c];
            col.apply(|v| *v = (*v - lse).exp() * inv_b);
            col[c] -= inv_b;
        }
        // Reverse: dW2 = dz h^T, db2 = dz 1, dh = W2^T dz masked by relu, dW1 = dh x^T.
        gemm(self.how, mat(&self.z), tr(&self.h), &mut self.g_w2);
        let g_b2 = SMatrix::<f32, O, 1>::from_fn(|i, _| self.z.row(i).sum());
        gemm(self.how, tr(&self.w2), mat(&self.z), &mut self.dh);
        for (d, &h) in self.dh.as_mut_slice().iter_mut().zip(self.h.as_slice()) {
            if h <= 0.0 {
                *d = 0.0;
            }
        }
        gemm(self.how, mat(&self.dh), tr(x), &mut self.g_w1);
        let g_b1 = SMatrix::<f32, H, 1>::from_fn(|i, _| self.dh.row(i).sum());
        // Adam with both bias corrections folded into the step and epsilon.
        self.b1t *= 0.9;
        self.b2t *= 0.999;
        let c2 = (1.0 - self.b2t).sqrt();
        let step = self.lr * c2 / (1.0 - self.b1t);
        let eps = 1e-8 * c2;
        self.s_w1.update(&mut self.w1, &self.g_w1, step, eps);
        self.s_w2.update(&mut self.w2, &self.g_w2, step, eps);
        self.s_b1.update(&mut self.b1, &g_b1, step, eps);
        self.s_b2.update(&mut self.b2, &g_b2, step, eps);
        loss * inv_b
    }
}
