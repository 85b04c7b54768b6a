//! Max pooling: a lens beside the spans (not linear, so not a span).

use crate::{Lens, Real};
use nalgebra::SMatrix;

/// Max pooling of `c` channels of `h x w` over `k x k` windows with stride `s`, from `I`
/// inputs to `O` outputs (channels first, row-major). The reverse routes each output's
/// change to the input that won its window (the first one on ties).
///
/// ```
/// use lens_core::Lens;
/// use lens_core::span::MaxPool2d;
/// use nalgebra::SVector;
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

    /// For each output of one example, the input index that wins its window.
    fn winners<T: Real>(&self, x: &[T]) -> [u32; O] {
        let (oh, ow) = (
            (self.h - self.k) / self.s + 1,
            (self.w - self.k) / self.s + 1,
        );
        core::array::from_fn(|t| {
            let (ch, rest) = (t / (oh * ow), t % (oh * ow));
            let (oy, ox) = (rest / ow, rest % ow);
            let mut best = (ch * self.h + oy * self.s) * self.w + ox * self.s;
            for ky in 0..self.k {
                for kx in 0..self.k {
                    let i = (ch * self.h + oy * self.s + ky) * self.w + ox * self.s + kx;
                    if x[i] > x[best] {
                        best = i;
                    }
                }
            }
            // `new` checked I against the geometry, and the caller's I fits u32 (below).
            best as u32
        })
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

crate::lens::lens_is_para!([const I: usize, const O: usize] MaxPool2d<I, O>);
