//! The fast path of the 2-D convolution span, over a whole batch per pass: the direct
//! kernels (`super::direct`) where the CPU has AVX-512 and the shape suits them, otherwise
//! one matrix product per pass, with the patches packed straight from the images (implicit
//! im2col) and the input changes scattered straight back.
//! Same parameter layout and results as `instances::conv2d` (tested equal, both paths).

use super::instances::conv_out;
use crate::Real;
use crate::gemm::{Panels, Sink, View, ViewMut, copy_short, gemm};

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
    pub(super) c: usize,
    pub(super) h: usize,
    pub(super) w: usize,
    pub(super) co: usize,
    pub(super) k: usize,
    pub(super) stride: usize,
    pub(super) pad: usize,
    pub(super) dil: usize,
    pub(super) oh: usize,
    pub(super) ow: usize,
    /// Whether the passes may take the direct kernels (`super::direct`).
    direct: bool,
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
            direct: true,
        })
    }

    /// The same geometry computed with matrix products only, never the direct kernels
    /// (which are taken, where the CPU has AVX-512 and the shapes allow, by default); for
    /// tests and benchmarks that compare the two.
    ///
    /// ```
    /// use lens_core::span::ConvGeometry;
    /// let g = ConvGeometry::new(1, 6, 6, 2, 3, 1, 0, 1).unwrap();
    /// let (x, w) = ([0.5f64; 36], [0.25f64; 18]);
    /// let (mut a, mut b) = ([0.0; 32], [0.0; 32]);
    /// g.forward(&x, &w, &mut a);
    /// g.products_only().forward(&x, &w, &mut b);
    /// assert!(a.iter().zip(&b).all(|(p, q)| (p - q).abs() < 1e-12));
    /// ```
    #[must_use]
    pub fn products_only(self) -> Self {
        Self {
            direct: false,
            ..self
        }
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
    /// inputs, `y` `n` outputs): the direct kernels where they apply, else one matrix
    /// product, positions of all images against the output channels, with the patches
    /// packed straight from the images.
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
        if self.direct && super::direct::forward(self, x, w, y) {
            return;
        }
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

    /// `dx = R_x(dy)` (the transposed convolution) for a batch: the direct kernels where
    /// they apply, else the product of the output changes with the kernel, scattered back
    /// onto the images (no patch buffer).
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
        if self.direct && super::direct::reverse_input(self, w, dy, dx) {
            return;
        }
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

    /// `dw = R_w(dy)` for a batch: the parameter changes summed over the images (the direct
    /// kernels where they apply, else one matrix product).
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
        if self.direct && super::direct::reverse_param(self, x, dy, dw) {
            return;
        }
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

    /// Taps `q0, q0 + 1, ...` each as what it adds (the channel's offset and the
    /// kernel's row and column offsets), stepping instead of dividing.
    #[inline]
    fn taps_from(&self, q0: usize) -> impl Iterator<Item = (usize, isize, isize)> + '_ {
        let kk = self.k * self.k;
        let (mut ci, r) = (q0 / kk, q0 % kk);
        let (mut ky, mut kx) = (r / self.k, r % self.k);
        let plane = self.h * self.w;
        core::iter::from_fn(move || {
            let tap = (
                ci * plane,
                (ky * self.dil) as isize,
                (kx * self.dil) as isize,
            );
            kx += 1;
            if kx == self.k {
                kx = 0;
                ky += 1;
                if ky == self.k {
                    ky = 0;
                    ci += 1;
                }
            }
            Some(tap)
        })
    }

    /// Taps `q0 .. q0 + len` in groups along one kernel row (same channel and kernel row,
    /// consecutive columns), so the stride-1 loops find each run's input row once per group.
    #[inline]
    fn kernel_rows(&self, q0: usize, len: usize) -> impl Iterator<Item = KernelRow> + '_ {
        let kk = self.k * self.k;
        let (mut ci, r) = (q0 / kk, q0 % kk);
        let (mut ky, mut kx) = (r / self.k, r % self.k);
        let mut at = 0;
        core::iter::from_fn(move || {
            if at >= len {
                return None;
            }
            let row = KernelRow {
                at,
                len: (self.k - kx).min(len - at),
                ch: ci * self.h * self.w,
                dy: (ky * self.dil) as isize,
                dx: (kx * self.dil) as isize,
            };
            at += row.len;
            kx = 0;
            ky += 1;
            if ky == self.k {
                ky = 0;
                ci += 1;
            }
            Some(row)
        })
    }

    /// Where a kernel row meets a run of positions (stride 1).
    #[inline]
    fn meet(&self, kr: &KernelRow, r: &Run) -> Meet {
        let pad = self.pad as isize;
        let iy = r.oy as isize - pad + kr.dy;
        if iy < 0 || iy >= self.h as isize {
            return Meet::Padding;
        }
        let row = r.img * self.c * self.h * self.w + kr.ch + iy as usize * self.w;
        let first0 = r.ox0 as isize - pad + kr.dx;
        let last = first0 + ((kr.len - 1) * self.dil + r.run) as isize;
        if first0 >= 0 && last <= self.w as isize {
            Meet::Inside(row + first0 as usize)
        } else {
            Meet::Edge { row, first0 }
        }
    }

    /// For [`Meet::Edge`]: tap `u` of the kernel row covers the run's columns `lo..hi`
    /// (the others read padding), reading `x[first ..]` from column `lo` on; `(first, lo, hi)`.
    #[inline]
    fn edge_cols(&self, row: usize, first0: isize, u: usize, run: usize) -> (usize, usize, usize) {
        let ix0 = first0 + (u * self.dil) as isize;
        let lo = (-ix0).clamp(0, run as isize) as usize;
        let hi = (self.w as isize - ix0).clamp(lo as isize, run as isize) as usize;
        // With no column inside, `ix0 + lo` may be off the row: nothing is read then.
        let first = if hi > lo {
            row + (ix0 + lo as isize) as usize
        } else {
            0
        };
        (first, lo, hi)
    }

    /// Splits positions `p0 .. p0 + len` (over all images) into runs along one output row;
    /// divides once, then steps (clone the iterator to walk the runs again).
    #[inline]
    fn runs(&self, p0: usize, len: usize) -> Runs {
        let per = self.positions();
        let (img, r) = (p0 / per, p0 % per);
        Runs {
            next: Run {
                k: 0,
                run: 0,
                img,
                oy: r / self.ow,
                ox0: r % self.ow,
            },
            len,
            oh: self.oh,
            ow: self.ow,
        }
    }

    /// For tap `tap` and a run of positions: `None` if the tap's input row is in the
    /// padding, else the input index of the run's first column (possibly off the row) and
    /// the range `lo..hi` of the run whose columns are inside the image; column `j` of the
    /// run reads `start + j stride`.
    #[inline]
    fn tap_run(
        &self,
        (ch, dy, dx): (usize, isize, isize),
        r: &Run,
    ) -> Option<(isize, usize, usize)> {
        let (s, pad, w) = (self.stride as isize, self.pad as isize, self.w as isize);
        let iy = r.oy as isize * s - pad + dy;
        if iy < 0 || iy >= self.h as isize {
            return None;
        }
        let ix0 = r.ox0 as isize * s - pad + dx;
        // 0 <= ix0 + j s < w  <=>  lo <= j < hi.
        let lo = if ix0 >= 0 {
            0
        } else {
            ((-ix0 + s - 1) / s) as usize
        };
        let hi = if ix0 >= w {
            0
        } else {
            ((w - ix0 + s - 1) / s) as usize
        };
        let (lo, hi) = (lo.min(r.run), hi.min(r.run));
        let row = (r.img * self.c * self.h * self.w + ch) as isize + iy * w;
        Some((row + ix0, lo, hi.max(lo)))
    }

    /// Splits positions `p0 .. p0 + len` at image boundaries (an output channel's plane is
    /// contiguous across rows): `f(k, run, base)`, where the run's first output in channel
    /// `co` is at `base + co * positions`.
    #[inline]
    fn plane_runs(&self, p0: usize, len: usize, mut f: impl FnMut(usize, usize, usize)) {
        let per = self.positions();
        let (mut img, mut r0) = (p0 / per, p0 % per);
        let mut k = 0;
        while k < len {
            let run = (per - r0).min(len - k);
            let base = img * self.co * per + r0;
            f(k, run, base);
            k += run;
            r0 = 0;
            img += 1;
        }
    }
}

/// Consecutive positions along one output row: `run` of them from `(img, oy, ox0)`, at
/// offset `k` of the range decomposed.
#[derive(Clone, Copy, Debug)]
struct Run {
    k: usize,
    run: usize,
    img: usize,
    oy: usize,
    ox0: usize,
}

/// The runs of a range of positions, in order.
#[derive(Clone, Copy, Debug)]
struct Runs {
    next: Run,
    len: usize,
    oh: usize,
    ow: usize,
}

impl Iterator for Runs {
    type Item = Run;

    #[inline]
    fn next(&mut self) -> Option<Run> {
        let n = &mut self.next;
        if n.k >= self.len {
            return None;
        }
        n.run = (self.ow - n.ox0).min(self.len - n.k);
        let out = *n;
        n.k += n.run;
        n.ox0 = 0;
        n.oy += 1;
        if n.oy == self.oh {
            n.oy = 0;
            n.img += 1;
        }
        Some(out)
    }
}

/// Taps `at .. at + len` of a range, along one kernel row: the channel's offset `ch` and the
/// row and column offsets `dy`, `dx` of the first.
#[derive(Clone, Copy, Debug)]
struct KernelRow {
    at: usize,
    len: usize,
    ch: usize,
    dy: isize,
    dx: isize,
}

/// Where a kernel row meets a run of positions, for stride 1.
#[derive(Clone, Copy, Debug)]
enum Meet {
    /// The input row is in the padding: every value is zero.
    Padding,
    /// Every tap reads inside the image: tap `u` at the run's position `j` reads
    /// `x[start + u dil + j]`.
    Inside(usize),
    /// Some columns are in the padding: see [`ConvGeometry::edge_cols`].
    Edge { row: usize, first0: isize },
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

/// Writes one tap's values along a run of positions to `out[at(j)]`, `j < run`.
#[inline(always)]
fn gather_run<T: Real>(
    x: &[T],
    stride: usize,
    run: usize,
    src: Option<(isize, usize, usize)>,
    mut put: impl FnMut(usize, T),
) {
    match src {
        None => (0..run).for_each(|j| put(j, T::zero())),
        Some((start, lo, hi)) => {
            (0..lo).for_each(|j| put(j, T::zero()));
            (hi..run).for_each(|j| put(j, T::zero()));
            if hi == lo {
                // The whole run is in the padding (and `start` may point off the image).
                return;
            }
            // `lo..hi` are the columns inside the image, so these indices are in range.
            let first = (start + (lo * stride) as isize) as usize;
            if stride == 1 {
                for (j, &v) in (lo..hi).zip(&x[first..first + (hi - lo)]) {
                    put(j, v);
                }
            } else {
                for j in lo..hi {
                    put(j, x[first + (j - lo) * stride]);
                }
            }
        }
    }
}

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
        let (g, s) = (self.g, self.g.stride);
        if self.taps_wide && s == 1 {
            // Each tap's values along the deep positions (contiguous reads, strided writes).
            let runs = g.runs(k0, kc);
            for kr in g.kernel_rows(w0, n) {
                for r in runs {
                    match g.meet(&kr, &r) {
                        Meet::Inside(base) => {
                            // For each position the group's taps are a window of the row,
                            // written side by side.
                            let rows = out[r.k * width..].chunks_exact_mut(width).take(r.run);
                            for (j, o) in rows.enumerate() {
                                for (u, v) in o[kr.at..kr.at + kr.len].iter_mut().enumerate() {
                                    *v = self.x[base + j + u * g.dil];
                                }
                            }
                        }
                        Meet::Padding => {
                            for o in out[r.k * width..].chunks_exact_mut(width).take(r.run) {
                                o[kr.at..kr.at + kr.len].fill(T::zero());
                            }
                        }
                        Meet::Edge { row, first0 } => {
                            for u in 0..kr.len {
                                let col = kr.at + u;
                                let (first, lo, hi) = g.edge_cols(row, first0, u, r.run);
                                for j in (0..lo).chain(hi..r.run) {
                                    out[(r.k + j) * width + col] = T::zero();
                                }
                                let src = &self.x[first..first + (hi - lo)];
                                for (j, &v) in src.iter().enumerate() {
                                    out[(r.k + lo + j) * width + col] = v;
                                }
                            }
                        }
                    }
                }
            }
            for t in n..width {
                (0..kc).for_each(|d| out[d * width + t] = T::zero());
            }
        } else if self.taps_wide {
            // Each tap's values along the deep positions: contiguous reads, strided writes.
            let runs = g.runs(k0, kc);
            for (t, tap) in g.taps_from(w0).take(n).enumerate() {
                for r in runs {
                    gather_run(self.x, s, r.run, g.tap_run(tap, &r), |j, v| {
                        out[(r.k + j) * width + t] = v;
                    });
                }
            }
            for t in n..width {
                (0..kc).for_each(|d| out[d * width + t] = T::zero());
            }
        } else if s == 1 {
            // Each deep tap along the panel's positions, contiguous on both sides: slice
            // copies, the zero padding around them filled.
            let runs = g.runs(w0, n);
            for kr in g.kernel_rows(k0, kc) {
                for r in runs {
                    let meet = g.meet(&kr, &r);
                    for u in 0..kr.len {
                        let dst = &mut out[(kr.at + u) * width + r.k..][..r.run];
                        match meet {
                            Meet::Padding => dst.fill(T::zero()),
                            Meet::Inside(base) => {
                                let first = base + u * g.dil;
                                copy_short(dst, &self.x[first..first + r.run]);
                            }
                            Meet::Edge { row, first0 } => {
                                let (first, lo, hi) = g.edge_cols(row, first0, u, r.run);
                                dst[..lo].fill(T::zero());
                                dst[hi..].fill(T::zero());
                                copy_short(&mut dst[lo..hi], &self.x[first..first + (hi - lo)]);
                            }
                        }
                    }
                }
            }
            for o in out.chunks_exact_mut(width).take(kc) {
                o[n..].fill(T::zero());
            }
        } else {
            let runs = g.runs(w0, n);
            for (o, tap) in out.chunks_exact_mut(width).take(kc).zip(g.taps_from(k0)) {
                for r in runs {
                    let o = &mut o[r.k..r.k + r.run];
                    gather_run(self.x, s, r.run, g.tap_run(tap, &r), |j, v| o[j] = v);
                }
                o[n..].fill(T::zero());
            }
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
        let (g, per) = (self.g, self.g.positions());
        if self.co_wide {
            g.plane_runs(k0, kc, |k, run, base| {
                for t in 0..n {
                    let at = base + (w0 + t) * per;
                    for (j, &v) in self.y[at..at + run].iter().enumerate() {
                        out[(k + j) * width + t] = v;
                    }
                }
            });
            for t in n..width {
                (0..kc).for_each(|d| out[d * width + t] = T::zero());
            }
        } else {
            g.plane_runs(w0, n, |k, run, base| {
                for (d, o) in out.chunks_exact_mut(width).enumerate().take(kc) {
                    let at = base + (k0 + d) * per;
                    copy_short(&mut o[k..k + run], &self.y[at..at + run]);
                }
            });
            for o in out.chunks_exact_mut(width).take(kc) {
                o[n..].fill(T::zero());
            }
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
        let (g, per) = (self.g, self.g.positions());
        let y = &mut *self.y;
        g.plane_runs(i0, m, |k, run, base| {
            for j in 0..n {
                let at = base + (j0 + j) * per;
                let col = &tile[j * ld + k..j * ld + k + run];
                for (a, &b) in y[at..at + run].iter_mut().zip(col) {
                    *a += b;
                }
            }
        });
    }

    #[inline]
    fn add_tile_t(&mut self, i0: usize, j0: usize, m: usize, n: usize, tile: &[T], ld: usize) {
        let (g, per) = (self.g, self.g.positions());
        let y = &mut *self.y;
        g.plane_runs(i0, m, |k, run, base| {
            for j in 0..n {
                let at = base + (j0 + j) * per;
                for (jj, a) in y[at..at + run].iter_mut().enumerate() {
                    *a += tile[(k + jj) * ld + j];
                }
            }
        });
    }
}

/// Adds a (position, tap) product of patch changes back onto a batch of input changes.
struct Scatter<'a, T> {
    g: &'a ConvGeometry,
    dx: &'a mut [T],
    images: usize,
}

impl<T: Real> Scatter<'_, T> {
    /// `dx[input of (position i0 + i, tap j0 + j)] += tile[i * di + j * dj]`.
    #[allow(clippy::too_many_arguments)] // a tile, its strides and where it goes
    #[inline]
    fn add(&mut self, i0: usize, j0: usize, m: usize, n: usize, tile: &[T], di: usize, dj: usize) {
        let (g, s) = (self.g, self.g.stride);
        let runs = g.runs(i0, m);
        if s == 1 && di == 1 {
            self.add_rows(runs, j0, n, tile, dj);
            return;
        }
        for (j, tap) in g.taps_from(j0).take(n).enumerate() {
            for r in runs {
                if let Some((start, lo, hi)) = g.tap_run(tap, &r) {
                    let first = (start + (lo * s) as isize) as usize;
                    if hi == lo {
                        continue;
                    }
                    for (c, jj) in (lo..hi).enumerate() {
                        self.dx[first + c * s] += tile[(r.k + jj) * di + j * dj];
                    }
                }
            }
        }
    }

    /// [`Scatter::add`] for stride 1 and a column-major tile: runs of positions add
    /// contiguously, and taps come in groups of one kernel row (same channel and input
    /// row), so each run's row is found once per group.
    #[inline]
    fn add_rows(&mut self, runs: Runs, j0: usize, n: usize, tile: &[T], ld: usize) {
        let g = self.g;
        for kr in g.kernel_rows(j0, n) {
            for r in runs {
                let meet = g.meet(&kr, &r);
                for u in 0..kr.len {
                    let at = (kr.at + u) * ld + r.k;
                    let (first, lo, hi) = match meet {
                        Meet::Padding => continue,
                        Meet::Inside(base) => (base + u * g.dil, 0, r.run),
                        Meet::Edge { row, first0 } => g.edge_cols(row, first0, u, r.run),
                    };
                    let src = &tile[at + lo..at + hi];
                    for (d, &v) in self.dx[first..first + (hi - lo)].iter_mut().zip(src) {
                        *d += v;
                    }
                }
            }
        }
    }
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
        self.add(i0, j0, m, n, tile, 1, ld);
    }

    #[inline]
    fn add_tile_t(&mut self, i0: usize, j0: usize, m: usize, n: usize, tile: &[T], ld: usize) {
        self.add(i0, j0, m, n, tile, ld, 1);
    }
}

super::linear_layer!(Conv2d, g);
