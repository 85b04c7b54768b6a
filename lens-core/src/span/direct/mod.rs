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
const X_MAX: usize = 16 * 1024;
/// Values of one image's output change, channels last.
const D_MAX: usize = 10 * 1024;
/// The parameter change's sums, taps by channels.
const G_MAX: usize = 13 * 1024;
/// Taps.
const K_MAX: usize = 1024;
/// The packed weights of a shifted pass, output rows by taps.
const A_MAX: usize = 13 * 1024;
/// One image's output planes of the forward pass, with the slack the last tile writes.
const O_MAX: usize = 12 * 1024;
/// The input change's rows of one input channel (one per tap, with zero margins).
const T_MAX: usize = 24 * 1024;
/// One plane of the padded input change.
const P_MAX: usize = 4 * 1024;
/// The parameter change's partial sums, lane by lane, when positions are in the lanes.
const S_MAX: usize = 8 * 1024;

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

    /// Copies the source (planes of `h x w`) into its place in `dst`. Only the source's
    /// values are written: the zeros around them are the buffer's, set once when it was
    /// made (every image of a batch has the same layout, so they stay zero).
    fn fill<T: Real>(&self, src: &[T], h: usize, w: usize, dst: &mut [T]) {
        let (cols, px) = (self.cols, self.px);
        for (s, d) in src
            .chunks_exact(h * w)
            .zip(dst.chunks_exact_mut(self.plane()))
            .take(self.planes)
        {
            for (sr, dr) in s
                .chunks_exact(w)
                .zip(d[self.py * cols..].chunks_exact_mut(cols))
            {
                crate::gemm::copy_short(&mut dr[px..px + w], sr);
            }
        }
    }
}

/// Output rows against a deep index over the wide positions `p < pos` of one image's
/// operand buffer: `out[ooff(m) + p] = sum_k A(m, k) buf[xoff[k] + p]`, with `A` packed by
/// [`pack`].
struct Shifted<'a> {
    xoff: &'a [usize],
    pos: usize,
}

/// Tiles: 8 output rows by 3 vectors of positions, 5 rows by 3 vectors (for row counts
/// that 5 divides and 8 does not: the 25 taps of a 5x5 kernel), or 1 row by 8 vectors for
/// the rows left.
const TILES: [(usize, usize); 3] = [(8, 3), (5, 3), (1, 8)];

/// The rows per block for `rows` output rows (the rest go one by one).
fn block_rows(rows: usize) -> usize {
    if rows.is_multiple_of(5) && !rows.is_multiple_of(8) {
        5
    } else {
        8
    }
}

/// The wide positions the tiles of every shape cover: `pos` rounded up to whole tiles. An
/// output row takes this much room, so that its last tile does not write over the next
/// row's first positions.
fn covered<T: Real>(pos: usize) -> usize {
    TILES
        .map(|(_, nv)| pos.div_ceil(nv * T::VECTOR) * nv * T::VECTOR)
        .into_iter()
        .max()
        .unwrap_or(0)
}

/// `A(m, k)` for `m < rows`, `k < deep`, in blocks of [`block_rows`] rows (then single
/// rows), deep index by deep index, as the kernel reads them: consecutive values per step
/// instead of strided ones.
fn pack<T: Real>(rows: usize, deep: usize, a: impl Fn(usize, usize) -> T, out: &mut [T]) {
    let mr = block_rows(rows);
    let full = rows / mr * mr;
    for row in 0..rows {
        let (mr, block) = if row < full {
            (mr, row / mr * mr)
        } else {
            (1, row)
        };
        for k in 0..deep {
            out[block * deep + k * mr + (row - block)] = a(row, k);
        }
    }
}

impl Shifted<'_> {
    /// The operand buffer length the tiles read.
    fn x_need<T: Real>(&self) -> usize {
        self.xoff.iter().max().copied().unwrap_or(0) + covered::<T>(self.pos)
    }

    /// All `rows` output rows (row `m` at `ooff(m)` of `out`), block by block.
    fn rows<T: Real>(
        &self,
        packed: &[T],
        rows: usize,
        buf: &[T],
        ooff: impl Fn(usize) -> usize,
        out: &mut [T],
    ) {
        let deep = self.xoff.len();
        let o_need = (0..rows).map(&ooff).max().unwrap_or(0) + covered::<T>(self.pos);
        assert!(
            self.x_need::<T>() <= buf.len() && o_need <= out.len() && packed.len() >= rows * deep,
            "direct convolution buffers"
        );
        let mr = block_rows(rows);
        let full = rows / mr * mr;
        for m0 in (0..full).step_by(mr) {
            let a = &packed[m0 * deep..(m0 + mr) * deep];
            if mr == 5 {
                let offs: [usize; 5] = core::array::from_fn(|i| ooff(m0 + i));
                self.tiles::<T, 5, 3>(a, buf, &offs, out);
            } else {
                let offs: [usize; 8] = core::array::from_fn(|i| ooff(m0 + i));
                self.tiles::<T, 8, 3>(a, buf, &offs, out);
            }
        }
        for m0 in full..rows {
            let a = &packed[m0 * deep..(m0 + 1) * deep];
            self.tiles::<T, 1, 8>(a, buf, &[ooff(m0)], out);
        }
    }

    /// One block of output rows, tile by tile along the wide positions.
    fn tiles<T: Real, const MR: usize, const NV: usize>(
        &self,
        a: &[T],
        buf: &[T],
        ooff: &[usize; MR],
        out: &mut [T],
    ) {
        let width = NV * T::VECTOR;
        for p0 in (0..self.pos).step_by(width) {
            #[cfg(target_arch = "x86_64")]
            // SAFETY: every pass checks `available()` (AVX-512F on this CPU) before it runs.
            // `p0 + width <= covered(pos)`, so `p0 + xoff[k] + width <= x_need <= buf.len()`
            // and `p0 + ooff[m] + width <= o_need <= out.len()` (asserted in `rows`).
            unsafe {
                T::shifted::<MR, NV>(a, &buf[p0..], self.xoff, &mut out[p0..], ooff);
            }
        }
    }
}

/// What one image's output planes become: their kept window.
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
    let taps = g.fan_in();
    let pass = Shifted {
        xoff: &xoff[..taps],
        pos: g.oh * pad.cols,
    };
    let plane = covered::<T>(pass.pos);
    if g.stride != 1
        || !available()
        || pass.x_need::<T>().max(g.c * pad.plane()) > X_MAX
        || g.co * plane > O_MAX
        || g.co * taps > A_MAX
    {
        return false;
    }
    let (mut buf, mut out, mut packed) =
        ([T::zero(); X_MAX], [T::zero(); O_MAX], [T::zero(); A_MAX]);
    pack(g.co, taps, |o, q| w[o * taps + q], &mut packed);
    let crop = Crop {
        planes: g.co,
        plane,
        cols: pad.cols,
        r0: 0,
        c0: 0,
        rows: g.oh,
        width: g.ow,
    };
    let (per_in, per_out) = (g.c * g.h * g.w, g.co * g.oh * g.ow);
    for (xi, yi) in x.chunks_exact(per_in).zip(y.chunks_exact_mut(per_out)) {
        pad.fill(xi, g.h, g.w, &mut buf);
        pass.rows(&packed, g.co, &buf, |o| o * plane, &mut out);
        crop.take(&out, yi);
    }
    true
}

/// `dx = R_x(dy)` for a batch of images, or `false` (nothing written). For each input
/// channel: its taps against the output channels over the wide positions of the output
/// change (zero in the columns past `ow`), one row per tap; the tap's row lands on the padded
/// input shifted by the tap's offset, so the input plane is the sum of the rows read back
/// shifted (a gather: adding each row into the plane in place would store and reload
/// overlapping vectors, which stalls on store forwarding); then the padding is cropped.
pub(super) fn reverse_input<T: Real>(g: &ConvGeometry, w: &[T], dy: &[T], dx: &mut [T]) -> bool {
    by_rows(g, w, dy, dx) || by_tap_rows(g, w, dy, dx)
}

/// The input change row by row, for 3x3 and 5x5 kernels (stride and dilation 1) on inputs at
/// most three vectors wide: `R` rows of one input channel's change at a time, each row of the
/// output change loaded once per output channel and kernel column (masked at the edges,
/// straight from the output change: nothing is copied) and used by the `K` input rows it
/// reaches.
fn by_rows<T: Real>(g: &ConvGeometry, w: &[T], dy: &[T], dx: &mut [T]) -> bool {
    if g.stride != 1 || g.dil != 1 || !available() || g.c * g.co * g.k * g.k > A_MAX {
        return false;
    }
    // Only the shapes whose kernel LLVM unrolls completely (every sum in a register, checked
    // in the disassembly: `R K NVR` multiply-adds in the loop); others spilled and ran at a
    // quarter of the speed.
    let (r, nvr) = match (g.k, g.w.div_ceil(T::VECTOR)) {
        (5, 2) => (7, 2),
        (3, 2) => (8, 2),
        _ => return false,
    };
    // This computes every input position from every tap, the padding's zeros included; the
    // tap rows compute only the output change's positions but copy it and gather back,
    // measured at about a quarter more per multiply-add. Take the cheaper.
    let rows_work = g.h.div_ceil(r) * r * nvr * T::VECTOR;
    let taps_work = covered::<T>(g.oh * (g.w + 2 * g.pad));
    if 4 * rows_work > 5 * taps_work {
        return false;
    }
    match g.k {
        5 => by_rows_with::<T, 5, 7, 2>(g, w, dy, dx),
        _ => by_rows_with::<T, 3, 8, 2>(g, w, dy, dx),
    }
    true
}

/// [`by_rows`] with the kernel size `K`, `R` rows per tile and rows `NVR` vectors wide.
fn by_rows_with<T: Real, const K: usize, const R: usize, const NVR: usize>(
    g: &ConvGeometry,
    w: &[T],
    dy: &[T],
    dx: &mut [T],
) {
    let kk = K * K;
    let mut packed = [T::zero(); A_MAX];
    // Per input channel, per output channel and kernel column `b`, the `K` weights the rows
    // use: `w[o][ci][K - 1 - a][K - 1 - b]` for the row `a` below.
    for (ci, p) in packed.chunks_exact_mut(g.co * kk).take(g.c).enumerate() {
        for (q, v) in p.iter_mut().enumerate() {
            let (o, b, a) = (q / kk, q % kk / K, q % K);
            *v = w[((o * g.c + ci) * K + (K - 1 - a)) * K + (K - 1 - b)];
        }
    }
    let mut tile = [T::zero(); 288];
    let width = NVR * T::VECTOR;
    let tile = &mut tile[..R * width];
    let (per_in, per_out, plane) = (g.c * g.h * g.w, g.co * g.oh * g.ow, g.h * g.w);
    let x_off = g.pad as isize - (K as isize - 1);
    for (di, xi) in dy.chunks_exact(per_out).zip(dx.chunks_exact_mut(per_in)) {
        for (wp, xc) in packed
            .chunks_exact(g.co * kk)
            .zip(xi.chunks_exact_mut(plane))
            .take(g.c)
        {
            for y0 in (0..g.h).step_by(R) {
                let y_off = (y0 + g.pad) as isize - (K as isize - 1);
                #[cfg(target_arch = "x86_64")]
                // SAFETY: `by_rows` checked `available()` (AVX-512F on this CPU).
                unsafe {
                    T::rows::<K, R, NVR>(di, (g.co, g.oh, g.ow), (y_off, x_off), wp, tile);
                }
                for (i, row) in xc[y0 * g.w..].chunks_exact_mut(g.w).take(R).enumerate() {
                    crate::gemm::copy_short(row, &tile[i * width..i * width + g.w]);
                }
            }
        }
    }
}

/// The input change by tap rows and a gather, for any kernel (stride 1).
fn by_tap_rows<T: Real>(g: &ConvGeometry, w: &[T], dy: &[T], dx: &mut [T]) -> bool {
    let mut toff = [0; K_MAX];
    let Some(pad) = input_layout(g, &mut toff) else {
        return false;
    };
    let (kk, taps) = (g.k * g.k, g.fan_in());
    let pos = g.oh * pad.cols;
    // Zeros between the planes: a tile's positions past `pos` must read zeros, or they
    // would land on the input rows below.
    let src = Padded {
        planes: g.co,
        cols: pad.cols,
        py: 0,
        px: 0,
        stride: covered::<T>(pos),
    };
    let mut xoff = [0; K_MAX];
    for (o, v) in xoff.iter_mut().enumerate().take(g.co.min(K_MAX)) {
        *v = o * src.plane();
    }
    let pass = Shifted {
        xoff: &xoff[..g.co.min(K_MAX)],
        pos,
    };
    // Rows of `lead` zeros, the tap's values, and zeros to the end of the plane read back.
    let lead = toff[kk - 1];
    let plane = pad.plane().div_ceil(T::VECTOR) * T::VECTOR;
    let row = lead + covered::<T>(pos).max(plane) + T::VECTOR;
    if g.stride != 1
        || g.co > K_MAX
        || !available()
        || pass.x_need::<T>().max(g.co * src.plane()) > X_MAX
        || kk * row > T_MAX
        || plane > P_MAX
        || taps * g.co > A_MAX
    {
        return false;
    }
    let (mut buf, mut rows, mut out) = ([T::zero(); X_MAX], [T::zero(); T_MAX], [T::zero(); P_MAX]);
    let mut packed = [T::zero(); A_MAX];
    for (ci, p) in packed.chunks_exact_mut(kk * g.co).take(g.c).enumerate() {
        pack(kk, g.co, |t, o| w[(o * g.c + ci) * kk + t], p);
    }
    let crop = Crop {
        planes: 1,
        plane,
        cols: pad.cols,
        r0: g.pad,
        c0: g.pad,
        rows: g.h,
        width: g.w,
    };
    let (per_in, per_out) = (g.c * g.h * g.w, g.co * g.oh * g.ow);
    for (di, xi) in dy.chunks_exact(per_out).zip(dx.chunks_exact_mut(per_in)) {
        src.fill(di, g.oh, g.ow, &mut buf);
        for (ci, dxc) in xi.chunks_exact_mut(g.h * g.w).enumerate() {
            let p = &packed[ci * kk * g.co..(ci + 1) * kk * g.co];
            pass.rows(p, kk, &buf, |t| t * row + lead, &mut rows);
            #[cfg(target_arch = "x86_64")]
            // SAFETY: `available()` found AVX-512F above. Every tap's offset is at most the
            // last tap's (`lead`), and `(kk - 1) row + lead + plane < kk row <= T_MAX`.
            unsafe {
                T::gather(&rows, row, lead, &toff[..kk], &mut out[..plane]);
            }
            crop.take(&out, dxc);
        }
    }
    true
}

/// `dw = sum over images of R_w(x, dy)`, or `false` (nothing written) if the buffers would
/// be too large: positions in the lanes where the partial sums of all output channels and
/// taps fit (stride 1), else channels in the lanes.
pub(super) fn reverse_param<T: Real>(g: &ConvGeometry, x: &[T], dy: &[T], dw: &mut [T]) -> bool {
    correlate(g, x, dy, dw) || channels_last(g, x, dy, dw)
}

/// Output channels in blocks of 4 against taps in blocks of 5 or 6, each pair's products summed
/// over the wide positions of the output change (zero past `ow`) and the padded image, lane
/// by lane; the lanes are summed once, after the last image.
fn correlate<T: Real>(g: &ConvGeometry, x: &[T], dy: &[T], dw: &mut [T]) -> bool {
    // Blocks of 5 taps where they pad fewer taps than blocks of 6 (25 taps: none, not 5).
    if g.fan_in().div_ceil(5) * 5 < g.fan_in().div_ceil(6) * 6 {
        correlate_by::<T, 5>(g, x, dy, dw)
    } else {
        correlate_by::<T, 6>(g, x, dy, dw)
    }
}

/// [`correlate`] with blocks of `NR` taps.
fn correlate_by<T: Real, const NR: usize>(
    g: &ConvGeometry,
    x: &[T],
    dy: &[T],
    dw: &mut [T],
) -> bool {
    const MR: usize = 4;
    let mut xoff = [0; K_MAX];
    let Some(pad) = input_layout(g, &mut xoff) else {
        return false;
    };
    let taps = g.fan_in();
    let (co_pad, taps_pad) = (g.co.div_ceil(MR) * MR, taps.div_ceil(NR) * NR);
    let pos = g.oh * pad.cols;
    let n = pos.div_ceil(T::VECTOR) * T::VECTOR;
    let src = Padded {
        planes: g.co,
        cols: pad.cols,
        py: 0,
        px: 0,
        stride: n,
    };
    let x_need = xoff[..taps].iter().max().copied().unwrap_or(0) + n;
    let tile = MR * NR * T::VECTOR;
    if g.stride != 1
        || !available()
        || taps_pad > K_MAX
        || x_need.max(g.c * pad.plane()) > X_MAX
        || co_pad * n > X_MAX
        || co_pad * taps_pad * T::VECTOR > S_MAX
    {
        return false;
    }
    // The padding taps read tap 0's values; their sums are dropped.
    let first = xoff[0];
    xoff[taps..taps_pad].fill(first);
    let (mut buf, mut d, mut sums) = ([T::zero(); X_MAX], [T::zero(); X_MAX], [T::zero(); S_MAX]);
    let (per_in, per_out) = (g.c * g.h * g.w, g.co * g.oh * g.ow);
    let blocks = taps_pad / NR;
    for (xi, di) in x.chunks_exact(per_in).zip(dy.chunks_exact(per_out)) {
        pad.fill(xi, g.h, g.w, &mut buf);
        src.fill(di, g.oh, g.ow, &mut d);
        for ob in 0..co_pad / MR {
            for tb in 0..blocks {
                let offs: &[usize; NR] = xoff[tb * NR..(tb + 1) * NR].try_into().expect("NR taps");
                let at = (ob * blocks + tb) * tile;
                #[cfg(target_arch = "x86_64")]
                // SAFETY: `available()` found AVX-512F. The channels past `co` read zeros of
                // `d` (`co_pad n <= X_MAX`), so `(MR - 1) n + n <= d.len()` from `ob MR n`;
                // every offset plus `n` is at most `x_need <= X_MAX`.
                unsafe {
                    T::correlate::<MR, NR>(
                        &d[ob * MR * n..],
                        n,
                        &buf,
                        offs,
                        n,
                        &mut sums[at..at + tile],
                    );
                }
            }
        }
    }
    for (o, row) in dw.chunks_exact_mut(taps).enumerate().take(g.co) {
        let (ob, m) = (o / MR, o % MR);
        for (q, v) in row.iter_mut().enumerate() {
            let (tb, t) = (q / NR, q % NR);
            let at = (ob * blocks + tb) * tile + (m * NR + t) * T::VECTOR;
            *v = sums[at..at + T::VECTOR]
                .iter()
                .fold(T::zero(), |acc, &s| acc + s);
        }
    }
    true
}

/// The output change transposed to channels last, vectors of output channels against
/// blocks of taps, summed over the positions (any stride).
fn channels_last<T: Real>(g: &ConvGeometry, x: &[T], dy: &[T], dw: &mut [T]) -> bool {
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
