//! The input change: row by row for small kernels on narrow inputs, else by tap rows and a
//! gather.

use super::layout::Padded;
use super::shifted::{Shifted, covered, pack};
use super::{A_MAX, K_MAX, T_MAX, X_MAX, available};
use crate::Real;
use crate::span::ConvGeometry;

/// `dx = R_x(dy)` for a batch of images, or `false` (nothing written). For each input
/// channel: its taps against the output channels over the wide positions of the output
/// change (zero in the columns past `ow`), one row per tap; the tap's row lands on the padded
/// input shifted by the tap's offset, so the input plane is the sum of the rows read back
/// shifted (a gather: adding each row into the plane in place would store and reload
/// overlapping vectors, which stalls on store forwarding); then the padding is cropped.
pub(in crate::span) fn reverse_input<T: Real>(
    g: &ConvGeometry,
    w: &[T],
    dy: &[T],
    dx: &mut [T],
) -> bool {
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
    // tap rows compute only the output change's positions, but then copy and gather back,
    // and their depth is the output channels (16 on the first MNIST convolution): measured
    // there, they cost twice as much per position computed (140 against 97 us for 640
    // against 896 positions per input channel and tap). Take rows up to half as much work
    // again as the tap rows.
    let rows_work = g.h.div_ceil(r) * r * nvr * T::VECTOR;
    let taps_work = covered::<T>(g.oh * g.ow);
    if 2 * rows_work > 3 * taps_work {
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

/// The input change by tap rows and a gather, for any kernel (stride 1). For each input
/// channel: its taps against the output channels over the output change's positions, one
/// row per tap (`T[tap][oy ow + ox]`, the change that tap sends to input `(oy + ky dil,
/// ox + kx dil)`); then each input row sums, over the taps, the row segments that land on
/// it (a gather: adding each tap row into the plane in place would store and reload
/// overlapping vectors, which stalls on store forwarding).
fn by_tap_rows<T: Real>(g: &ConvGeometry, w: &[T], dy: &[T], dx: &mut [T]) -> bool {
    let (kk, taps) = (g.k * g.k, g.fan_in());
    if g.stride != 1 || g.co > K_MAX || kk > K_MAX || !available() {
        return false;
    }
    let pos = g.oh * g.ow;
    // The output change's planes, each followed by zeros up to the next: a tile's positions
    // past `pos` read zeros.
    let src = Padded {
        planes: g.co,
        cols: g.ow,
        py: 0,
        px: 0,
        stride: covered::<T>(pos),
    };
    let mut xoff = [0; K_MAX];
    for (o, v) in xoff.iter_mut().enumerate().take(g.co) {
        *v = o * src.plane();
    }
    let pass = Shifted {
        xoff: &xoff[..g.co],
        pos,
    };
    let row = covered::<T>(pos);
    if pass.x_need::<T>().max(g.co * src.plane()) > X_MAX || kk * row > T_MAX || taps * g.co > A_MAX
    {
        return false;
    }
    let mut tap_shift = [(0, 0); K_MAX];
    for (q, v) in tap_shift.iter_mut().enumerate().take(kk) {
        *v = (q / g.k * g.dil, q % g.k * g.dil);
    }
    let (mut buf, mut rows) = ([T::zero(); X_MAX], [T::zero(); T_MAX]);
    let mut packed = [T::zero(); A_MAX];
    for (ci, p) in packed.chunks_exact_mut(kk * g.co).take(g.c).enumerate() {
        pack(kk, g.co, |t, o| w[(o * g.c + ci) * kk + t], p);
    }
    let (per_in, per_out) = (g.c * g.h * g.w, g.co * g.oh * g.ow);
    for (di, xi) in dy.chunks_exact(per_out).zip(dx.chunks_exact_mut(per_in)) {
        src.fill(di, g.oh, g.ow, &mut buf);
        for (ci, dxc) in xi.chunks_exact_mut(g.h * g.w).enumerate() {
            let p = &packed[ci * kk * g.co..(ci + 1) * kk * g.co];
            pass.rows(p, kk, &buf, |t| t * row, &mut rows);
            for y0 in (0..g.h).step_by(4) {
                let n = (g.h - y0).min(4);
                #[cfg(target_arch = "x86_64")]
                // SAFETY: `available()` found AVX-512F above.
                unsafe {
                    T::gather(
                        &rows[..kk * row],
                        row,
                        &tap_shift[..kk],
                        (g.oh, g.ow, g.pad, g.w),
                        (y0, n),
                        &mut dxc[y0 * g.w..],
                    );
                }
            }
        }
    }
    true
}
