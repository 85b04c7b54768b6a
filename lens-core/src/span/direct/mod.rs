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
/// One image's output buffer of a shifted pass, with the slack the last tile writes.
const O_MAX: usize = 12 * 1024;

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

/// A padded buffer layout: `planes` planes of rows of `cols` values, `stride` values apart
/// (rows of zeros below the source and up to the next plane), the source's `h x w` planes
/// placed at `(py, px)`.
#[derive(Clone, Copy, Debug)]
struct Padded {
    planes: usize,
    cols: usize,
    py: usize,
    px: usize,
    stride: usize,
}

impl Padded {
    fn plane(&self) -> usize {
        self.stride
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
            d[(self.py + h) * cols..].fill(T::zero()); // and the gap to the next plane
        }
    }
}

/// One pass of the shifted kernel over every image: `out(m, p) (+)= sum_k A(m, k)
/// src(xoff[k] + p)` for the wide positions `p < pos` of each image, with
/// `A(m, k) = w[m sm + k sk]`, and `out(m, p)` at `ooff[m] + p` of an output buffer.
struct Shifted<'a> {
    /// How one image of the operand is laid out (source planes of `hw.0 x hw.1`).
    src: Padded,
    hw: (usize, usize),
    /// Per deep index: the operand's offset, and the weights' stride.
    xoff: &'a [usize],
    sk: usize,
    /// Per output row: its offset in the output buffer, and the weights' stride.
    ooff: &'a [usize],
    sm: usize,
    /// Wide positions per image.
    pos: usize,
    /// Whether the rows of one image overlap in the output buffer (added, on a zeroed
    /// buffer) or not (stored).
    add: bool,
}

/// What one image's output buffer becomes: its kept window of planes.
#[derive(Clone, Copy, Debug)]
struct Crop {
    /// Planes, their stride in the buffer, and the buffer's row length.
    planes: usize,
    plane: usize,
    cols: usize,
    /// The window: from `(r0, c0)`, `rows x width`.
    r0: usize,
    c0: usize,
    rows: usize,
    width: usize,
}

impl Crop {
    fn take<T: Real>(&self, buf: &[T], dst: &mut [T]) {
        let size = self.rows * self.width;
        for (ch, d) in dst.chunks_exact_mut(size).take(self.planes).enumerate() {
            let top = ch * self.plane + self.r0 * self.cols + self.c0;
            for (r, row) in d.chunks_exact_mut(self.width).enumerate() {
                let at = top + r * self.cols;
                crate::gemm::copy_short(row, &buf[at..at + self.width]);
            }
        }
    }
}

/// Tiles: 8 output rows by 3 vectors of positions, or 1 row by 8 vectors for the rows left.
const TILES: [(usize, usize); 2] = [(8, 3), (1, 8)];

/// The wide positions the tiles of either shape cover: `pos` rounded up to whole tiles. An
/// output plane takes this much room, so that a row's last tile does not write over the
/// next row's first positions.
fn covered<T: Real>(pos: usize) -> usize {
    TILES
        .map(|(_, nv)| pos.div_ceil(nv * T::VECTOR) * nv * T::VECTOR)
        .into_iter()
        .max()
        .unwrap_or(0)
}

impl Shifted<'_> {
    /// Values of the operand and output buffers the tiles touch, with both tile shapes.
    fn needs<T: Real>(&self) -> (usize, usize) {
        let end = covered::<T>(self.pos);
        let far = |o: &[usize]| o.iter().max().copied().unwrap_or(0) + end;
        (
            far(self.xoff).max(self.src.planes * self.src.plane()),
            far(self.ooff),
        )
    }

    fn fits<T: Real>(&self) -> bool {
        let (x, o) = self.needs::<T>();
        self.xoff.len() <= K_MAX
            && x <= X_MAX
            && o <= O_MAX
            && self.ooff.len() * self.xoff.len() <= A_MAX
    }

    /// The weights in blocks of 8 output rows (then single rows), tap by tap, as the kernel
    /// reads them: 8 consecutive values per deep step instead of 8 strided ones.
    fn pack<T: Real>(&self, wt: &[T], out: &mut [T]) {
        let (m, deep) = (self.ooff.len(), self.xoff.len());
        let full = m / 8 * 8;
        for row in 0..m {
            let (mr, block) = if row < full {
                (8, row / 8 * 8)
            } else {
                (1, row)
            };
            for k in 0..deep {
                out[block * deep + k * mr + (row - block)] = wt[row * self.sm + k * self.sk];
            }
        }
    }

    /// Runs the pass on every image of `src`, each output buffer cropped into `dst`.
    fn run<T: Real>(&self, src: &[T], wt: &[T], crop: &Crop, dst: &mut [T]) {
        debug_assert!(self.fits::<T>());
        let mut buf = [T::zero(); X_MAX];
        let mut out = [T::zero(); O_MAX];
        let mut packed = [T::zero(); A_MAX];
        self.pack(wt, &mut packed);
        let (m, deep) = (self.ooff.len(), self.xoff.len());
        let full = m / 8 * 8;
        let per_in = self.src.planes * self.hw.0 * self.hw.1;
        let per_out = crop.planes * crop.rows * crop.width;
        for (s, d) in src.chunks_exact(per_in).zip(dst.chunks_exact_mut(per_out)) {
            self.src.fill(s, self.hw.0, self.hw.1, &mut buf);
            if self.add {
                out[..self.needs::<T>().1].fill(T::zero());
            }
            for m0 in (0..full).step_by(8) {
                let a = &packed[m0 * deep..(m0 + 8) * deep];
                let rows: &[usize; 8] = self.ooff[m0..m0 + 8].try_into().expect("8 rows");
                self.tiles::<T, 8, 3>(&buf, a, rows, &mut out);
            }
            for m0 in full..m {
                let a = &packed[m0 * deep..(m0 + 1) * deep];
                self.tiles::<T, 1, 8>(&buf, a, &[self.ooff[m0]], &mut out);
            }
            crop.take(&out, d);
        }
    }

    /// One block of output rows of one image, tile by tile along the wide positions.
    fn tiles<T: Real, const MR: usize, const NV: usize>(
        &self,
        buf: &[T],
        a: &[T],
        ooff: &[usize; MR],
        out: &mut [T],
    ) {
        let width = NV * T::VECTOR;
        let (x_need, o_need) = self.needs::<T>();
        assert!(
            x_need <= buf.len() && o_need <= out.len(),
            "direct convolution buffers"
        );
        for p0 in (0..self.pos).step_by(width) {
            #[cfg(target_arch = "x86_64")]
            // SAFETY: every pass checks `available()` (AVX-512F on this CPU) before it runs.
            // `p0 + width` is at most `pos` rounded up to this tile width, so
            // `p0 + xoff[k] + width <= x_need <= buf.len()` and
            // `p0 + ooff[m] + width <= o_need <= out.len()` (`needs`, asserted above).
            unsafe {
                if self.add {
                    T::shifted::<MR, NV, true>(a, &buf[p0..], self.xoff, &mut out[p0..], ooff);
                } else {
                    T::shifted::<MR, NV, false>(a, &buf[p0..], self.xoff, &mut out[p0..], ooff);
                }
            }
        }
    }
}

/// The padded input layout of a geometry, and its taps' offsets in it.
fn input_layout(g: &ConvGeometry, xoff: &mut [usize; K_MAX]) -> Option<Padded> {
    let (rows, cols) = (g.h + 2 * g.pad, g.w + 2 * g.pad);
    let pad = Padded {
        planes: g.c,
        cols,
        py: g.pad,
        px: g.pad,
        stride: rows * cols,
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

/// `y = conv(x, w)` for a batch of images, or `false` (nothing written) if the geometry does
/// not suit the direct kernels (a stride above 1, buffers too large, or no AVX-512): output
/// channels against taps, over the wide positions of the padded image.
pub(super) fn forward<T: Real>(g: &ConvGeometry, x: &[T], w: &[T], y: &mut [T]) -> bool {
    let mut xoff = [0; K_MAX];
    let Some(pad) = input_layout(g, &mut xoff) else {
        return false;
    };
    if g.stride != 1 || g.co > K_MAX || !available() {
        return false;
    }
    let taps = g.fan_in();
    let pos = g.oh * pad.cols;
    let plane = covered::<T>(pos);
    let mut ooff = [0; K_MAX];
    for (o, v) in ooff.iter_mut().enumerate().take(g.co) {
        *v = o * plane;
    }
    let pass = Shifted {
        src: pad,
        hw: (g.h, g.w),
        xoff: &xoff[..taps],
        sk: 1,
        ooff: &ooff[..g.co],
        sm: taps,
        pos,
        add: false,
    };
    if !pass.fits::<T>() {
        return false;
    }
    let crop = Crop {
        planes: g.co,
        plane,
        cols: pad.cols,
        r0: 0,
        c0: 0,
        rows: g.oh,
        width: g.ow,
    };
    pass.run(x, w, &crop, y);
    true
}

/// `dx = R_x(dy)` for a batch of images, or `false` (nothing written): the kernel's taps
/// (input channel, row, column) against the output channels, over the wide positions of
/// the output change (zero in the columns past `ow`), each tap's row added onto the padded
/// input at the tap's offset; then the padding is cropped.
pub(super) fn reverse_input<T: Real>(g: &ConvGeometry, w: &[T], dy: &[T], dx: &mut [T]) -> bool {
    let mut ooff = [0; K_MAX];
    let Some(pad) = input_layout(g, &mut ooff) else {
        return false;
    };
    if g.stride != 1 || g.co > K_MAX || !available() {
        return false;
    }
    let taps = g.fan_in();
    let pos = g.oh * pad.cols;
    // Zeros between the planes: a tile's positions past `pos` must read zeros, or they
    // would add into the input rows below.
    let src = Padded {
        planes: g.co,
        cols: pad.cols,
        py: 0,
        px: 0,
        stride: covered::<T>(pos),
    };
    let mut xoff = [0; K_MAX];
    for (o, v) in xoff.iter_mut().enumerate().take(g.co) {
        *v = o * src.plane();
    }
    let pass = Shifted {
        src,
        hw: (g.oh, g.ow),
        xoff: &xoff[..g.co],
        sk: taps,
        ooff: &ooff[..taps],
        sm: 1,
        pos,
        add: true,
    };
    if !pass.fits::<T>() {
        return false;
    }
    let crop = Crop {
        planes: g.c,
        plane: pad.plane(),
        cols: pad.cols,
        r0: g.pad,
        c0: g.pad,
        rows: g.h,
        width: g.w,
    };
    pass.run(dy, w, &crop, dx);
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
