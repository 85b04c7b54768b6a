//! The fast path of the 2-D convolution span: one matrix product per pass over a whole
//! batch, with the patches packed straight from the images (implicit im2col) and the input
//! changes scattered straight back.
//! Same parameter layout and results as `instances::conv2d` (tested equal).

use super::instances::conv_out;
use crate::Real;
use crate::gemm::{Panels, Sink, View, ViewMut, gemm};

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
    /// The number of images in `len` values of `per` each.
    ///
    /// # Panics
    /// If `len` is not a whole number of images.
    fn images(len: usize, per: usize, what: &str) -> usize {
        assert!(
            per > 0 && len.is_multiple_of(per),
            "{what}: {len} values are not a whole number of {per}-value images"
        );
        len / per
    }

    /// `y = conv(x, w)` for a batch of images laid one after the other (`x` holds `n`
    /// inputs, `y` `n` outputs): one matrix product, positions of all images against the
    /// output channels, with the patches packed straight from the images.
    ///
    /// # Panics
    /// If the slices do not hold the same number of whole images, or `w` is not `P` values.
    pub fn forward<T: Real>(&self, x: &[T], w: &[T], y: &mut [T]) {
        let (ni, no, np) = self.sizes();
        let n = Self::images(x.len(), ni, "conv2d input");
        assert!(
            y.len() == n * no && w.len() == np,
            "conv2d forward: output or kernel of the wrong size"
        );
        y.fill(T::zero());
        // Y^T (positions x co) += patches^T (positions x taps) W^T.
        gemm(
            &Patches {
                g: self,
                x,
                images: n,
                taps_wide: false,
            },
            &View::strided(w, self.co, self.fan_in(), self.fan_in(), 1),
            &mut Planes {
                g: self,
                y,
                images: n,
            },
        );
    }

    /// `dx = R_x(dy)` (the transposed convolution) for a batch: the product of the output
    /// changes with the kernel, scattered back onto the images (no patch buffer).
    ///
    /// # Panics
    /// As [`ConvGeometry::forward`].
    pub fn reverse_input<T: Real>(&self, w: &[T], dy: &[T], dx: &mut [T]) {
        let (ni, no, np) = self.sizes();
        let n = Self::images(dy.len(), no, "conv2d output change");
        assert!(
            dx.len() == n * ni && w.len() == np,
            "conv2d reverse: input change or kernel of the wrong size"
        );
        dx.fill(T::zero());
        // dpatches^T (positions x taps) = dY^T (positions x co) W (co x taps), scattered.
        gemm(
            &PlanesRead {
                g: self,
                y: dy,
                images: n,
                co_wide: false,
            },
            &View::col_major(w, self.fan_in(), self.co),
            &mut Scatter {
                g: self,
                dx,
                images: n,
            },
        );
    }

    /// `dw = R_w(dy)` for a batch: the parameter changes summed over the images.
    ///
    /// # Panics
    /// As [`ConvGeometry::forward`].
    pub fn reverse_param<T: Real>(&self, x: &[T], dy: &[T], dw: &mut [T]) {
        let (ni, no, np) = self.sizes();
        let n = Self::images(x.len(), ni, "conv2d input");
        assert!(
            dy.len() == n * no && dw.len() == np,
            "conv2d reverse: output change or kernel change of the wrong size"
        );
        dw.fill(T::zero());
        // dW^T (taps x co) = patches (taps x positions) dY^T (positions x co).
        let taps = self.fan_in();
        gemm(
            &Patches {
                g: self,
                x,
                images: n,
                taps_wide: true,
            },
            &PlanesRead {
                g: self,
                y: dy,
                images: n,
                co_wide: true,
            },
            &mut ViewMut::col_major(dw, taps, self.co),
        );
    }

    /// Output positions per image.
    fn positions(&self) -> usize {
        self.oh * self.ow
    }

    /// Where position `p` (over all images) reads: the image's first value and the input
    /// row and column of the kernel's corner (negative inside the padding).
    #[inline]
    fn position(&self, p: usize) -> (usize, isize, isize) {
        let per = self.positions();
        let (img, r) = (p / per, p % per);
        let (oy, ox) = (r / self.ow, r % self.ow);
        (
            img * self.c * self.h * self.w,
            (oy * self.stride) as isize - self.pad as isize,
            (ox * self.stride) as isize - self.pad as isize,
        )
    }

    /// What tap `q` adds: the channel's offset and the kernel's row and column offsets.
    #[inline]
    fn tap(&self, q: usize) -> (usize, isize, isize) {
        let kk = self.k * self.k;
        let (ci, r) = (q / kk, q % kk);
        (
            ci * self.h * self.w,
            ((r / self.k) * self.dil) as isize,
            ((r % self.k) * self.dil) as isize,
        )
    }

    /// The input index a (position, tap) pair reads, or `None` in the padding.
    #[inline]
    fn at(
        &self,
        (img, y0, x0): (usize, isize, isize),
        (ch, dy, dx): (usize, isize, isize),
    ) -> Option<usize> {
        let (iy, ix) = (y0 + dy, x0 + dx);
        (iy >= 0 && ix >= 0 && (iy as usize) < self.h && (ix as usize) < self.w)
            .then(|| img + ch + iy as usize * self.w + ix as usize)
    }
}

/// The patch matrix of a batch, read straight from the images: entry (tap, position) is the
/// input value that tap sees at that position (0 in the padding). `taps_wide` reads it as
/// (tap, position) panels, otherwise as (position, tap).
struct Patches<'a, T> {
    g: &'a ConvGeometry,
    x: &'a [T],
    images: usize,
    taps_wide: bool,
}

/// The widest panel a kernel packs.
const WIDE_MAX: usize = 32;

impl<T: Real> Panels<T> for Patches<'_, T> {
    fn wide(&self) -> usize {
        if self.taps_wide {
            self.g.fan_in()
        } else {
            self.images * self.g.positions()
        }
    }

    fn deep(&self) -> usize {
        if self.taps_wide {
            self.images * self.g.positions()
        } else {
            self.g.fan_in()
        }
    }

    #[inline]
    fn pack(&self, w0: usize, n: usize, width: usize, k0: usize, kc: usize, out: &mut [T]) {
        let g = self.g;
        // Decompose the (at most 32) wide indices once; the deep one once per step.
        let mut wide = [(0usize, 0isize, 0isize); WIDE_MAX];
        for (t, v) in wide[..n].iter_mut().enumerate() {
            *v = if self.taps_wide {
                g.tap(w0 + t)
            } else {
                g.position(w0 + t)
            };
        }
        for (d, o) in out.chunks_exact_mut(width).enumerate().take(kc) {
            let deep = if self.taps_wide {
                g.position(k0 + d)
            } else {
                g.tap(k0 + d)
            };
            for (v, &wv) in o[..n].iter_mut().zip(&wide[..n]) {
                let (pos, tap) = if self.taps_wide {
                    (deep, wv)
                } else {
                    (wv, deep)
                };
                *v = g.at(pos, tap).map_or(T::zero(), |i| self.x[i]);
            }
            o[n..].fill(T::zero());
        }
    }
}

/// A batch of outputs (channel planes, image after image) read as a matrix: entry
/// (position, channel). `co_wide` reads (channel, position) panels.
struct PlanesRead<'a, T> {
    g: &'a ConvGeometry,
    y: &'a [T],
    images: usize,
    co_wide: bool,
}

impl ConvGeometry {
    /// The index of (position over all images, output channel) in a batch of outputs.
    #[inline]
    fn out_index(&self, p: usize, co: usize) -> usize {
        let per = self.positions();
        (p / per) * self.co * per + co * per + p % per
    }
}

impl<T: Real> Panels<T> for PlanesRead<'_, T> {
    fn wide(&self) -> usize {
        if self.co_wide {
            self.g.co
        } else {
            self.images * self.g.positions()
        }
    }

    fn deep(&self) -> usize {
        if self.co_wide {
            self.images * self.g.positions()
        } else {
            self.g.co
        }
    }

    #[inline]
    fn pack(&self, w0: usize, n: usize, width: usize, k0: usize, kc: usize, out: &mut [T]) {
        let g = self.g;
        for (d, o) in out.chunks_exact_mut(width).enumerate().take(kc) {
            if self.co_wide {
                let p = k0 + d;
                for (t, v) in o[..n].iter_mut().enumerate() {
                    *v = self.y[g.out_index(p, w0 + t)];
                }
            } else {
                let co = k0 + d;
                for (t, v) in o[..n].iter_mut().enumerate() {
                    *v = self.y[g.out_index(w0 + t, co)];
                }
            }
            o[n..].fill(T::zero());
        }
    }
}

/// Adds a (position, channel) product into a batch of outputs.
struct Planes<'a, T> {
    g: &'a ConvGeometry,
    y: &'a mut [T],
    images: usize,
}

impl<T: Real> Sink<T> for Planes<'_, T> {
    fn rows(&self) -> usize {
        self.images * self.g.positions()
    }

    fn cols(&self) -> usize {
        self.g.co
    }

    #[inline]
    fn add_tile(&mut self, i0: usize, j0: usize, m: usize, n: usize, tile: &[T], ld: usize) {
        let per = self.g.positions();
        for j in 0..n {
            let col = &tile[j * ld..j * ld + m];
            // Positions run contiguously within an image's channel plane.
            let mut i = 0;
            while i < m {
                let p = i0 + i;
                let run = (per - p % per).min(m - i);
                let start = self.g.out_index(p, j0 + j);
                for (a, &b) in self.y[start..start + run].iter_mut().zip(&col[i..i + run]) {
                    *a += b;
                }
                i += run;
            }
        }
    }
}

/// Adds a (position, tap) product of patch changes back onto a batch of input changes.
struct Scatter<'a, T> {
    g: &'a ConvGeometry,
    dx: &'a mut [T],
    images: usize,
}

impl<T: Real> Sink<T> for Scatter<'_, T> {
    fn rows(&self) -> usize {
        self.images * self.g.positions()
    }

    fn cols(&self) -> usize {
        self.g.fan_in()
    }

    #[inline]
    fn add_tile(&mut self, i0: usize, j0: usize, m: usize, n: usize, tile: &[T], ld: usize) {
        let g = self.g;
        let mut pos = [(0usize, 0isize, 0isize); WIDE_MAX];
        for (i, v) in pos[..m].iter_mut().enumerate() {
            *v = g.position(i0 + i);
        }
        for j in 0..n {
            let tap = g.tap(j0 + j);
            for (i, &p) in pos[..m].iter().enumerate() {
                if let Some(at) = g.at(p, tap) {
                    self.dx[at] += tile[j * ld + i];
                }
            }
        }
    }

    #[inline]
    fn add_tile_t(&mut self, i0: usize, j0: usize, m: usize, n: usize, tile: &[T], ld: usize) {
        let g = self.g;
        for i in 0..m {
            let p = g.position(i0 + i);
            for j in 0..n {
                if let Some(at) = g.at(p, g.tap(j0 + j)) {
                    self.dx[at] += tile[i * ld + j];
                }
            }
        }
    }
}

super::linear_layer!(Conv2d, g);
