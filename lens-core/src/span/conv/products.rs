//! The operands and results of a convolution's matrix products, read and written straight
//! on the images: the patch matrix packed from the input (implicit im2col), the output
//! planes, and the input change scattered back through the kernel.

use super::ConvGeometry;
use crate::Real;
use crate::gemm::{Panels, Sink, copy_short};

impl ConvGeometry {
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
pub(super) struct Patches<'a, T> {
    pub(super) g: &'a ConvGeometry,
    pub(super) x: &'a [T],
    pub(super) images: usize,
    pub(super) taps_wide: bool,
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
pub(super) struct PlanesRead<'a, T> {
    pub(super) g: &'a ConvGeometry,
    pub(super) y: &'a [T],
    pub(super) images: usize,
    pub(super) co_wide: bool,
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
pub(super) struct Planes<'a, T> {
    pub(super) g: &'a ConvGeometry,
    pub(super) y: &'a mut [T],
    pub(super) images: usize,
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
pub(super) struct Scatter<'a, T> {
    pub(super) g: &'a ConvGeometry,
    pub(super) dx: &'a mut [T],
    pub(super) images: usize,
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
