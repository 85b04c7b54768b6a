//! Direct convolution kernels, which pack nothing: the convolution's fast path on CPUs with
//! AVX-512, where the matrix product spent most of its time packing patches (measured:
//! 45-79% of the first MNIST convolution's passes).
//!
//! - **Forward and input change (stride 1): positions in the lanes.** An image is copied
//!   once into a zero-padded buffer of `Hp x Wp` planes. Reading output position `(oy, ox)`
//!   as the *wide* position `p = oy Wp + ox`, tap `(ci, ky, kx)` reads
//!   `x[ci Hp Wp + ky dil Wp + kx dil + p]`: one offset per tap, contiguous in `p`. So a
//!   tile of `MR` output channels by `NV` vectors of consecutive wide positions is a sum over
//!   taps of a broadcast weight times an unaligned vector load, straight from the padded
//!   image. The `Wp - ow` wide positions at the end of each row are computed and dropped.
//!   The input change is the same kernel: a forward convolution of the output change,
//!   padded by `(k - 1) dil`, with the kernel flipped and its channels swapped.
//! - **Parameter change (any stride): channels in the lanes.** The output change of an image
//!   is transposed to `positions x channels`; the change of tap `q` for a vector of output
//!   channels is the sum over positions of that position's channel vector times one
//!   broadcast input value. `KR` taps' sums stay in registers across all positions.

mod simd;

#[doc(hidden)]
pub use simd::DirectScalar;

use super::conv::ConvGeometry;
use crate::Real;

/// Values of one padded image (or padded output change), with the slack the last tile reads.
const X_MAX: usize = 20 * 1024;
/// Values of one image's output change, channels last.
const D_MAX: usize = 10 * 1024;
/// The parameter change's sums, taps by channels.
const G_MAX: usize = 13 * 1024;
/// Taps.
const K_MAX: usize = 1024;
/// The packed weights of a shifted pass, output rows by taps.
const A_MAX: usize = 13 * 1024;

/// Whether this CPU runs the direct kernels.
pub(super) fn available() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx512f")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// A padded buffer layout: `planes` planes of `rows x cols`, the source's `h x w` planes
/// placed at `(py, px)`.
#[derive(Clone, Copy, Debug)]
struct Padded {
    planes: usize,
    rows: usize,
    cols: usize,
    py: usize,
    px: usize,
}

impl Padded {
    fn plane(&self) -> usize {
        self.rows * self.cols
    }

    /// Writes every value of `dst[..planes * rows * cols]`: the source (planes of `h x w`)
    /// inside, zeros around it.
    fn fill<T: Real>(&self, src: &[T], h: usize, w: usize, dst: &mut [T]) {
        let (cols, px) = (self.cols, self.px);
        for (s, d) in src
            .chunks_exact(h * w)
            .zip(dst.chunks_exact_mut(self.plane()))
            .take(self.planes)
        {
            d[..self.py * cols].fill(T::zero());
            for (sr, dr) in s
                .chunks_exact(w)
                .zip(d[self.py * cols..].chunks_exact_mut(cols))
            {
                dr[..px].fill(T::zero());
                crate::gemm::copy_short(&mut dr[px..px + w], sr);
                dr[px + w..].fill(T::zero());
            }
            d[(self.py + h) * cols..].fill(T::zero());
        }
    }
}

/// One pass of the shifted kernel over every image: the operand layout, the taps, and where
/// the kept wide positions go.
struct Shifted<'a> {
    pad: Padded,
    /// Per tap: the weight of output row 0 (`w[aoff]`) and the operand's offset.
    aoff: &'a [usize],
    xoff: &'a [usize],
    /// Weight stride between output rows.
    sm: usize,
    /// Output rows (channels).
    m: usize,
    /// Kept wide positions: rows `r0 .. r0 + rows`, columns `c0 .. c0 + cols` of the padded
    /// layout, written as planes of `rows x cols`.
    r0: usize,
    rows: usize,
    c0: usize,
    cols: usize,
}

impl Shifted<'_> {
    /// The buffer the kernel reads for one image: the padded planes, then zeros up to the
    /// end of the last tile at the farthest offset.
    fn need<T: Real>(&self) -> usize {
        let span = self.rows * self.pad.cols;
        // Tiles of both kernel shapes: 3 and 8 vectors of positions.
        let tiles = [3, 8].map(|nv| span.div_ceil(nv * T::VECTOR) * nv * T::VECTOR);
        let end = self.r0 * self.pad.cols + tiles[0].max(tiles[1]);
        let far = self.xoff.iter().max().copied().unwrap_or(0);
        (far + end).max(self.pad.planes * self.pad.plane())
    }

    fn fits<T: Real>(&self) -> bool {
        self.xoff.len() <= K_MAX && self.need::<T>() <= X_MAX && self.m * self.xoff.len() <= A_MAX
    }

    /// The weights in blocks of 8 output rows (then single rows), tap by tap, as the kernel
    /// reads them: 8 consecutive values per tap instead of 8 strided ones.
    fn pack<T: Real>(&self, wt: &[T], out: &mut [T]) {
        let taps = self.xoff.len();
        let full = self.m / 8 * 8;
        for m0 in 0..self.m {
            let mr = if m0 < full { 8 } else { 1 };
            let block = if m0 < full { m0 / 8 * 8 } else { m0 };
            for (q, &ao) in self.aoff.iter().enumerate() {
                out[block * taps + q * mr + (m0 - block)] = wt[ao + m0 * self.sm];
            }
        }
    }

    /// `out` (images of `m` planes of `rows x cols`) from `src` (images of `planes` planes of
    /// `h x w`) and the weights `w`.
    fn run<T: Real>(&self, src: &[T], (h, w): (usize, usize), wt: &[T], out: &mut [T]) {
        let mut buf = [T::zero(); X_MAX];
        let mut packed = [T::zero(); A_MAX];
        self.pack(wt, &mut packed);
        let taps = self.xoff.len();
        let per_in = self.pad.planes * h * w;
        let per_out = self.m * self.rows * self.cols;
        for (s, o) in src.chunks_exact(per_in).zip(out.chunks_exact_mut(per_out)) {
            self.pad.fill(s, h, w, &mut buf);
            let full = self.m / 8 * 8;
            for m0 in (0..full).step_by(8) {
                self.tiles::<T, 8, 3>(&buf, &packed[m0 * taps..(m0 + 8) * taps], m0, o);
            }
            for m0 in full..self.m {
                self.tiles::<T, 1, 8>(&buf, &packed[m0 * taps..(m0 + 1) * taps], m0, o);
            }
        }
    }

    /// Rows `m0 .. m0 + MR` of one image, tile by tile.
    fn tiles<T: Real, const MR: usize, const NV: usize>(
        &self,
        buf: &[T],
        a: &[T],
        m0: usize,
        out: &mut [T],
    ) {
        let width = NV * T::VECTOR;
        let mut tile = [T::zero(); 8 * 3 * 16];
        let tile = &mut tile[..MR * width];
        let (first, end) = (
            self.r0 * self.pad.cols,
            (self.r0 + self.rows) * self.pad.cols,
        );
        let plane = self.rows * self.cols;
        for p0 in (first..end).step_by(width) {
            #[cfg(target_arch = "x86_64")]
            // SAFETY: every pass checks `available()` (AVX-512F on this CPU) before it runs.
            unsafe {
                T::shifted::<MR, NV>(a, &buf[p0..], self.xoff, tile);
            }
            // Keep the tile's positions inside the window, row segment by row segment.
            let mut p = p0;
            let stop = (p0 + width).min(end);
            while p < stop {
                let (row, col) = (p / self.pad.cols, p % self.pad.cols);
                let seg = ((row + 1) * self.pad.cols).min(stop);
                let lo = col.max(self.c0);
                let hi = (seg - row * self.pad.cols).min(self.c0 + self.cols);
                if lo < hi {
                    let from = row * self.pad.cols + lo - p0;
                    let to = (row - self.r0) * self.cols + lo - self.c0;
                    for mm in 0..MR {
                        crate::gemm::copy_short(
                            &mut out[(m0 + mm) * plane + to..][..hi - lo],
                            &tile[mm * width + from..][..hi - lo],
                        );
                    }
                }
                p = seg;
            }
        }
    }
}

/// The padded input layout of a geometry, and its taps' offsets in it.
fn input_layout(g: &ConvGeometry, xoff: &mut [usize; K_MAX]) -> Option<Padded> {
    let pad = Padded {
        planes: g.c,
        rows: g.h + 2 * g.pad,
        cols: g.w + 2 * g.pad,
        py: g.pad,
        px: g.pad,
    };
    let kk = g.k * g.k;
    if g.c * kk > K_MAX {
        return None;
    }
    for (q, o) in xoff.iter_mut().enumerate().take(g.c * kk) {
        let (ci, ky, kx) = (q / kk, q % kk / g.k, q % g.k);
        *o = ci * pad.plane() + ky * g.dil * pad.cols + kx * g.dil;
    }
    Some(pad)
}

/// `y = conv(x, w)` for a batch of images, or `false` (nothing written) if the geometry does not
/// suit the direct kernels (a stride above 1, buffers too large, or no AVX-512).
pub(super) fn forward<T: Real>(g: &ConvGeometry, x: &[T], w: &[T], y: &mut [T]) -> bool {
    let mut xoff = [0; K_MAX];
    let mut aoff = [0; K_MAX];
    let Some(pad) = input_layout(g, &mut xoff) else {
        return false;
    };
    if g.stride != 1 || !available() {
        return false;
    }
    let taps = g.fan_in();
    for (q, a) in aoff.iter_mut().enumerate().take(taps) {
        *a = q;
    }
    let pass = Shifted {
        pad,
        aoff: &aoff[..taps],
        xoff: &xoff[..taps],
        sm: taps,
        m: g.co,
        r0: 0,
        rows: g.oh,
        c0: 0,
        cols: g.ow,
    };
    if !pass.fits::<T>() {
        return false;
    }
    pass.run(x, (g.h, g.w), w, y);
    true
}

/// `dx = R_x(dy)` for a batch of images, or `false` (nothing written): a forward convolution of the
/// output change padded by `e = (k - 1) dil`, with the kernel flipped and its input and
/// output channels swapped, kept on the rows and columns of the input.
pub(super) fn reverse_input<T: Real>(g: &ConvGeometry, w: &[T], dy: &[T], dx: &mut [T]) -> bool {
    let kk = g.k * g.k;
    let taps = g.co * kk;
    if g.stride != 1 || taps > K_MAX || !available() {
        return false;
    }
    let e = (g.k - 1) * g.dil;
    let pad = Padded {
        planes: g.co,
        rows: g.oh + 2 * e,
        cols: g.ow + 2 * e,
        py: e,
        px: e,
    };
    let (mut xoff, mut aoff) = ([0; K_MAX], [0; K_MAX]);
    for (q, (xo, ao)) in xoff.iter_mut().zip(&mut aoff).enumerate().take(taps) {
        let (o, ky, kx) = (q / kk, q % kk / g.k, q % g.k);
        *xo = o * pad.plane() + ky * g.dil * pad.cols + kx * g.dil;
        *ao = o * g.c * kk + (g.k - 1 - ky) * g.k + (g.k - 1 - kx);
    }
    let pass = Shifted {
        pad,
        aoff: &aoff[..taps],
        xoff: &xoff[..taps],
        sm: kk,
        m: g.c,
        r0: g.pad,
        rows: g.h,
        c0: g.pad,
        cols: g.w,
    };
    if !pass.fits::<T>() {
        return false;
    }
    pass.run(dy, (g.oh, g.ow), w, dx);
    true
}

/// `dw = sum over images of R_w(x, dy)`, or `false` (nothing written) if the buffers would
/// be too large.
pub(super) fn reverse_param<T: Real>(g: &ConvGeometry, x: &[T], dy: &[T], dw: &mut [T]) -> bool {
    let mut xoff = [0; K_MAX];
    let Some(pad) = input_layout(g, &mut xoff) else {
        return false;
    };
    let taps = g.fan_in();
    let lanes = T::VECTOR;
    let co_pad = g.co.div_ceil(lanes) * lanes;
    let mv = if co_pad.is_multiple_of(2 * lanes) {
        2
    } else {
        1
    };
    let kr = tap_block(mv, taps);
    let taps_pad = taps.div_ceil(kr) * kr;
    let positions = g.oh * g.ow;
    if !available()
        || taps_pad > K_MAX
        || positions * co_pad > D_MAX
        || taps_pad * co_pad > G_MAX
        || pad.planes * pad.plane() > X_MAX
    {
        return false;
    }
    // The padding taps read tap 0's values; their sums are dropped.
    let first = xoff[0];
    xoff[taps..taps_pad].fill(first);
    let mut buf = [T::zero(); X_MAX];
    let mut d = [T::zero(); D_MAX];
    let mut sums = [T::zero(); G_MAX];
    let width = mv * lanes;
    let (per_in, per_out) = (g.c * g.h * g.w, g.co * positions);
    for (xi, di) in x.chunks_exact(per_in).zip(dy.chunks_exact(per_out)) {
        pad.fill(xi, g.h, g.w, &mut buf);
        // The output change, channels last (channels past `co` stay zero).
        for (o, plane) in di.chunks_exact(positions).enumerate() {
            for (j, &v) in plane.iter().enumerate() {
                d[j * co_pad + o] = v;
            }
        }
        for cb in 0..co_pad / width {
            for kb in 0..taps_pad / kr {
                let at = (cb * taps_pad + kb * kr) * width;
                lanes_block::<T>(
                    (mv, kr),
                    &d[cb * width..positions * co_pad],
                    co_pad,
                    &buf[..pad.planes * pad.plane()],
                    &xoff[kb * kr..(kb + 1) * kr],
                    (g.oh, g.ow, g.stride * pad.cols, g.stride),
                    &mut sums[at..at + kr * width],
                );
            }
        }
    }
    for (o, row) in dw.chunks_exact_mut(taps).enumerate().take(g.co) {
        let (cb, c) = (o / width, o % width);
        for (q, v) in row.iter_mut().enumerate() {
            *v = sums[(cb * taps_pad + q) * width + c];
        }
    }
    true
}

/// Taps per block of the channels-in-lanes kernel: the fewest padded taps among the shapes
/// that keep every sum in a register (`mv` vectors of channels times `KR` taps, at most 25
/// sums), larger blocks on ties.
fn tap_block(mv: usize, taps: usize) -> usize {
    let choices: &[usize] = if mv == 2 {
        &[12, 10, 8, 6]
    } else {
        &[25, 20, 16, 12, 9]
    };
    let padded = |kr: usize| taps.div_ceil(kr) * kr;
    let mut best = choices[0];
    for &kr in choices {
        if padded(kr) < padded(best) {
            best = kr;
        }
    }
    best
}

/// One call of the channels-in-lanes kernel with the block shape `(mv, kr)` chosen by
/// [`tap_block`].
fn lanes_block<T: Real>(
    shape: (usize, usize),
    d: &[T],
    ds: usize,
    x: &[T],
    xoff: &[usize],
    sums: (usize, usize, usize, usize),
    g: &mut [T],
) {
    macro_rules! shapes {
        ($(($mv:literal, $kr:literal)),*) => {
            match shape {
                $(
                    #[cfg(target_arch = "x86_64")]
                    // SAFETY: `reverse_param` checked `available()` (AVX-512F) before it
                    // called this.
                    ($mv, $kr) => unsafe { T::lanes::<$mv, $kr>(d, ds, x, xoff, sums, g) },
                )*
                _ => unreachable!("tap_block chooses among the shapes listed here"),
            }
        };
    }
    shapes!(
        (1, 25),
        (1, 20),
        (1, 16),
        (1, 12),
        (1, 9),
        (2, 12),
        (2, 10),
        (2, 8),
        (2, 6)
    );
}
