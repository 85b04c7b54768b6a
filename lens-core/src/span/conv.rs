//! The fast path of the 2-D convolution span: direct loops whose innermost loop runs along
//! an output row, contiguous in memory when the stride is 1, so the compiler vectorises it.
//! Same parameter layout and results as `instances::conv2d` (tested equal).

use super::instances::conv_out;
use crate::Real;

/// A 2-D convolution from `c` channels of `h x w` to `co` channels, square kernel `k`,
/// stride, zero padding and dilation, as a [`crate::Para`] from `I` to `O` values with `P`
/// parameters (`w[((o * c + i) * k + ky) * k + kx]`, like the span).
///
/// ```
/// use lens_core::span::{Conv2d, SpanLayer};
/// use lens_core::{Init, Para};
/// use nalgebra::SVector;
/// let fast = Conv2d::<f64, 64, 144, 36>::new::<1, 8, 8, 4, 3, 1, 0>();
/// let span = SpanLayer::<f64, 64, 144, 36>::conv2d::<1, 8, 8, 4, 3, 1, 0>();
/// let (w, x) = (fast.init(1), SVector::<f64, 64>::from_fn(|i, _| (i as f64).sin()));
/// assert!((fast.forward(&w, x) - span.forward(&w, x)).norm() < 1e-12);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Conv2d<T, const I: usize, const O: usize, const P: usize> {
    g: ConvGeometry,
    _t: core::marker::PhantomData<fn() -> T>,
}

/// The geometry of a 2-D convolution and its three passes on slices, for any [`Real`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ConvGeometry {
    c: usize,
    h: usize,
    w: usize,
    co: usize,
    k: usize,
    stride: usize,
    pad: usize,
    dil: usize,
    oh: usize,
    ow: usize,
}

impl ConvGeometry {
    /// `c` channels of `h x w` to `co` channels, kernel `k`, stride, zero padding and
    /// dilation; `None` if the kernel does not fit or the stride is 0.
    #[must_use]
    #[allow(clippy::too_many_arguments)] // the geometry of a convolution
    pub fn new(
        c: usize,
        h: usize,
        w: usize,
        co: usize,
        k: usize,
        stride: usize,
        pad: usize,
        dil: usize,
    ) -> Option<Self> {
        let oh = conv_out(h, k, stride, pad, dil)?;
        let ow = conv_out(w, k, stride, pad, dil)?;
        Some(Self {
            c,
            h,
            w,
            co,
            k,
            stride,
            pad,
            dil,
            oh,
            ow,
        })
    }

    /// The number of taps feeding one output: `c k^2` (the fan-in, for initialisation).
    #[must_use]
    pub fn fan_in(&self) -> usize {
        self.c * self.k * self.k
    }

    /// (inputs, outputs, parameters).
    #[must_use]
    pub fn sizes(&self) -> (usize, usize, usize) {
        (
            self.c * self.h * self.w,
            self.co * self.oh * self.ow,
            self.co * self.c * self.k * self.k,
        )
    }
}

impl<T: Real, const I: usize, const O: usize, const P: usize> Conv2d<T, I, O, P> {
    /// The geometry.
    #[must_use]
    pub fn geometry(&self) -> &ConvGeometry {
        &self.g
    }

    /// The convolution of `C` channels of `H x W` to `CO` channels, kernel `K`, stride `S`,
    /// zero padding `PAD` (dilation 1), sizes checked at compile time.
    #[must_use]
    pub fn new<
        const C: usize,
        const H: usize,
        const W: usize,
        const CO: usize,
        const K: usize,
        const S: usize,
        const PAD: usize,
    >() -> Self {
        const {
            if let Some(why) =
                super::instances::conv2d_sizes_wrong([I, O, P], [C, H, W, CO, K, S, PAD])
            {
                panic!("{}", why);
            }
        };
        Self::with_dilation(C, H, W, CO, K, S, PAD, 1)
    }

    /// Any geometry, dilation included, checked at run time.
    ///
    /// # Panics
    /// If the sizes do not match `I`, `O`, `P` or the kernel does not fit.
    #[must_use]
    #[allow(clippy::too_many_arguments)] // the geometry of a convolution
    pub fn with_dilation(
        c: usize,
        h: usize,
        w: usize,
        co: usize,
        k: usize,
        stride: usize,
        pad: usize,
        dil: usize,
    ) -> Self {
        let g = ConvGeometry::new(c, h, w, co, k, stride, pad, dil)
            .expect("the kernel does not fit the padded input, or the stride is 0");
        let (i, o, p) = g.sizes();
        assert!(
            (i, o, p) == (I, O, P),
            "this convolution has {i} inputs, {o} outputs and {p} parameters; the type says {I}, {O}, {P}"
        );
        Self {
            g,
            _t: core::marker::PhantomData,
        }
    }
}

impl ConvGeometry {
    /// The output columns `ox` whose input column `ox * stride + off - pad` is inside the
    /// image, as a range.
    #[inline]
    fn cols(&self, off: usize) -> core::ops::Range<usize> {
        let (s, pad, w) = (self.stride, self.pad, self.w);
        // ix = ox s + off - pad >= 0  <=>  ox >= ceil((pad - off) / s)
        let lo = if pad > off {
            (pad - off).div_ceil(s)
        } else {
            0
        };
        // ix < w  <=>  ox s < w + pad - off
        let hi = if w + pad > off {
            (w + pad - off).div_ceil(s)
        } else {
            0
        };
        lo.min(self.ow)..hi.min(self.ow)
    }

    /// Visits every (kernel tap, output row) pair with its input row: the loop nest shared
    /// by the three passes. `f(o, i, tap, oy, iy, kx_off)`.
    #[inline]
    fn taps(&self, mut f: impl FnMut(usize, usize, usize, usize, usize, usize)) {
        for o in 0..self.co {
            for i in 0..self.c {
                for ky in 0..self.k {
                    for kx in 0..self.k {
                        let tap = ((o * self.c + i) * self.k + ky) * self.k + kx;
                        for oy in 0..self.oh {
                            let iy =
                                (oy * self.stride + ky * self.dil) as isize - self.pad as isize;
                            if iy < 0 || iy as usize >= self.h {
                                continue;
                            }
                            f(o, i, tap, oy, iy as usize, kx * self.dil);
                        }
                    }
                }
            }
        }
    }

    /// `y = conv(x, w)`.
    pub fn forward<T: Real>(&self, x: &[T], w: &[T], y: &mut [T]) {
        y.fill(T::zero());
        let (s, pad) = (self.stride, self.pad);
        self.taps(|o, i, tap, oy, iy, off| {
            let wt = w[tap];
            let yrow = &mut y[(o * self.oh + oy) * self.ow..][..self.ow];
            let xrow = &x[(i * self.h + iy) * self.w..][..self.w];
            let cols = self.cols(off);
            if s == 1 {
                // Contiguous on both sides: a vectorisable axpy.
                let xs = &xrow[cols.start + off - pad..cols.end + off - pad];
                for (a, &b) in yrow[cols].iter_mut().zip(xs) {
                    *a += wt * b;
                }
            } else {
                for ox in cols {
                    yrow[ox] += wt * xrow[ox * s + off - pad];
                }
            }
        });
    }

    /// `dx = R_x(dy)` (the transposed convolution).
    pub fn reverse_input<T: Real>(&self, w: &[T], dy: &[T], dx: &mut [T]) {
        dx.fill(T::zero());
        let (s, pad) = (self.stride, self.pad);
        self.taps(|o, i, tap, oy, iy, off| {
            let wt = w[tap];
            let dyrow = &dy[(o * self.oh + oy) * self.ow..][..self.ow];
            let dxrow = &mut dx[(i * self.h + iy) * self.w..][..self.w];
            let cols = self.cols(off);
            if s == 1 {
                let dxs = &mut dxrow[cols.start + off - pad..cols.end + off - pad];
                for (a, &b) in dxs.iter_mut().zip(&dyrow[cols]) {
                    *a += wt * b;
                }
            } else {
                for ox in cols {
                    dxrow[ox * s + off - pad] += wt * dyrow[ox];
                }
            }
        });
    }

    /// `dw = R_w(dy)`.
    pub fn reverse_param<T: Real>(&self, x: &[T], dy: &[T], dw: &mut [T]) {
        dw.fill(T::zero());
        let (s, pad) = (self.stride, self.pad);
        self.taps(|o, i, tap, oy, iy, off| {
            let dyrow = &dy[(o * self.oh + oy) * self.ow..][..self.ow];
            let xrow = &x[(i * self.h + iy) * self.w..][..self.w];
            let cols = self.cols(off);
            let acc = if s == 1 {
                let xs = &xrow[cols.start + off - pad..cols.end + off - pad];
                // Several partial sums so the reduction can vectorise.
                let mut part = [T::zero(); 8];
                let (xc, dc) = (xs.chunks_exact(8), dyrow[cols.clone()].chunks_exact(8));
                let (xr, dr) = (xc.remainder(), dc.remainder());
                for (a, b) in xc.zip(dc) {
                    for j in 0..8 {
                        part[j] += a[j] * b[j];
                    }
                }
                let tail = xr.iter().zip(dr).fold(T::zero(), |t, (a, b)| t + *a * *b);
                part.iter().fold(tail, |t, p| t + *p)
            } else {
                cols.fold(T::zero(), |t, ox| t + xrow[ox * s + off - pad] * dyrow[ox])
            };
            dw[tap] += acc;
        });
    }
}

super::linear_layer!(Conv2d, g);
