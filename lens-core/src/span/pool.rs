//! Max pooling: a lens beside the spans (not linear, so not a span).

#[cfg(feature = "alloc")]
use crate::HeapMatrix;
use crate::{Lens, Real};
use nalgebra::SMatrix;

/// Max pooling of `c` channels of `h x w` over `k x k` windows with stride `s`, from `I`
/// inputs to `O` outputs (channels first, row-major). The reverse routes each output's
/// change to the input that won its window (the first one on ties).
///
/// ```
/// use paralens::Lens;
/// use paralens::span::MaxPool2d;
/// use paralens::nalgebra::SVector;
/// let pool = MaxPool2d::<16, 4>::new::<1, 4, 4, 2, 2>();
/// let x = SVector::<f64, 16>::from_fn(|i, _| i as f64);
/// assert_eq!(pool.apply(x), SVector::<f64, 4>::new(5.0, 7.0, 13.0, 15.0));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MaxPool2d<const I: usize, const O: usize> {
    h: usize,
    w: usize,
    k: usize,
    s: usize,
}

impl<const I: usize, const O: usize> MaxPool2d<I, O> {
    /// The pooling of `C` channels of `H x W` over `K x K` windows with stride `S`, sizes
    /// checked at compile time.
    #[must_use]
    pub const fn new<
        const C: usize,
        const H: usize,
        const W: usize,
        const K: usize,
        const S: usize,
    >() -> Self {
        const {
            if let Some(why) = super::instances::pool2d_sizes_wrong([I, O], [C, H, W, K, S]) {
                panic!("{}", why);
            }
        };
        Self {
            h: H,
            w: W,
            k: K,
            s: S,
        }
    }

    /// For each output of one example, the input index that wins its window (the first
    /// largest value). Nested loops over channels, rows and columns, one window row as a
    /// slice: indexing each output by division and each value through a bounds check took
    /// a third of the MNIST CNN's training step.
    fn winners<T: Real>(&self, x: &[T]) -> [u32; O] {
        let (oh, ow) = (
            (self.h - self.k) / self.s + 1,
            (self.w - self.k) / self.s + 1,
        );
        let mut out = [0u32; O];
        let mut outs = out.iter_mut();
        let size = self.h * self.w;
        if self.k == 2 && self.s == 2 {
            // The common 2x2 pooling: two input rows at a time, two columns per window.
            for (ch, plane) in x.chunks_exact(size).take(O / (oh * ow)).enumerate() {
                for oy in 0..oh {
                    let top = 2 * oy * self.w;
                    let (r0, r1) = (
                        &plane[top..top + 2 * ow],
                        &plane[top + self.w..top + self.w + 2 * ow],
                    );
                    for (ox, (p, q)) in r0.chunks_exact(2).zip(r1.chunks_exact(2)).enumerate() {
                        let mut best = (0, p[0]);
                        for (at, v) in [(1, p[1]), (self.w, q[0]), (self.w + 1, q[1])] {
                            if v > best.1 {
                                best = (at, v);
                            }
                        }
                        if let Some(o) = outs.next() {
                            *o = (ch * size + top + 2 * ox + best.0) as u32;
                        }
                    }
                }
            }
            return out;
        }
        for (ch, plane) in x.chunks_exact(size).take(O / (oh * ow)).enumerate() {
            for oy in 0..oh {
                for ox in 0..ow {
                    let first = oy * self.s * self.w + ox * self.s;
                    let mut best = (first, plane[first]);
                    for ky in 0..self.k {
                        let start = first + ky * self.w;
                        for (kx, &v) in plane[start..start + self.k].iter().enumerate() {
                            if v > best.1 {
                                best = (start + kx, v);
                            }
                        }
                    }
                    // `new` checked I against the geometry, and the caller's I fits u32.
                    if let Some(o) = outs.next() {
                        *o = (ch * size + best.0) as u32;
                    }
                }
            }
        }
        out
    }
}

/// On a batch (columns are examples) each column is pooled on its own.
impl<T: Real, const I: usize, const O: usize, const B: usize> Lens<SMatrix<T, I, B>>
    for MaxPool2d<I, O>
{
    type Out = SMatrix<T, O, B>;

    fn apply(&self, x: SMatrix<T, I, B>) -> SMatrix<T, O, B> {
        let mut y = SMatrix::<T, O, B>::zeros();
        for (xc, mut yc) in x.column_iter().zip(y.column_iter_mut()) {
            let xs = xc.as_slice();
            for (v, &i) in yc.iter_mut().zip(&self.winners(xs)) {
                *v = xs[i as usize];
            }
        }
        y
    }

    fn apply_vjp(
        &self,
        x: SMatrix<T, I, B>,
    ) -> (
        SMatrix<T, O, B>,
        impl FnOnce(SMatrix<T, O, B>) -> SMatrix<T, I, B>,
    ) {
        const {
            assert!(
                I <= u32::MAX as usize,
                "max pooling indexes inputs with u32"
            )
        };
        let mut y = SMatrix::<T, O, B>::zeros();
        let win: [[u32; O]; B] = core::array::from_fn(|b| {
            let xs = x.column(b);
            let w = self.winners(xs.as_slice());
            for (t, &i) in w.iter().enumerate() {
                y[(t, b)] = xs[i as usize];
            }
            w
        });
        (
            y,
            #[inline(always)]
            move |d: SMatrix<T, O, B>| {
                let mut dx = SMatrix::<T, I, B>::zeros();
                for (b, w) in win.iter().enumerate() {
                    for (t, &i) in w.iter().enumerate() {
                        dx[(i as usize, b)] += d[(t, b)];
                    }
                }
                dx
            },
        )
    }
}

/// On a batch kept on the heap: the same pooling, the output and the winners' positions in
/// pooled blocks (positions are stored as scalars, exact below 2^24 inputs), so nothing of
/// the size of an activation is copied or kept on the stack.
#[cfg(feature = "alloc")]
impl<T: Real, const I: usize, const O: usize, const B: usize> Lens<HeapMatrix<T, I, B>>
    for MaxPool2d<I, O>
{
    type Out = HeapMatrix<T, O, B>;

    fn apply(&self, x: HeapMatrix<T, I, B>) -> HeapMatrix<T, O, B> {
        let mut y = HeapMatrix::<T, O, B>::zeros();
        for (xc, mut yc) in x.column_iter().zip(y.column_iter_mut()) {
            let xs = xc.as_slice();
            for (v, &i) in yc.iter_mut().zip(&self.winners(xs)) {
                *v = xs[i as usize];
            }
        }
        y
    }

    fn apply_vjp(
        &self,
        x: HeapMatrix<T, I, B>,
    ) -> (
        HeapMatrix<T, O, B>,
        impl FnOnce(HeapMatrix<T, O, B>) -> HeapMatrix<T, I, B>,
    ) {
        const {
            assert!(
                I < 1 << 24,
                "max pooling stores input positions as scalars, exact below 2^24"
            )
        };
        let mut y = HeapMatrix::<T, O, B>::zeros();
        let mut win = HeapMatrix::<T, O, B>::zeros();
        for b in 0..B {
            let xs = x.column(b);
            for (t, &i) in self.winners(xs.as_slice()).iter().enumerate() {
                y[(t, b)] = xs[i as usize];
                win[(t, b)] = T::cst(f64::from(i));
            }
        }
        (
            y,
            #[inline(always)]
            move |d: HeapMatrix<T, O, B>| {
                let mut dx = HeapMatrix::<T, I, B>::zeros();
                for b in 0..B {
                    for t in 0..O {
                        let i = win[(t, b)].to_f64() as usize;
                        dx[(i, b)] += d[(t, b)];
                    }
                }
                dx
            },
        )
    }
}

crate::lens::lens_is_para!([const I: usize, const O: usize] MaxPool2d<I, O>);
