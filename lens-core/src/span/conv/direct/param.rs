//! The parameter change: positions in the lanes where the partial sums fit, else output
//! channels in the lanes.

use super::layout::{Padded, input_layout};
use super::{D_MAX, G_MAX, K_MAX, S_MAX, X_MAX, available};
use crate::Real;
use crate::span::ConvGeometry;

/// `dw = sum over images of R_w(x, dy)`, or `dw +=` that sum if `add` (the layer's reverse
/// adds into the learner's change, with no temporary); `false` (nothing written) if the
/// buffers would be too large: positions in the lanes where the partial sums of all output
/// channels and taps fit (stride 1), else channels in the lanes.
pub(in crate::span) fn reverse_param<T: Real>(
    g: &ConvGeometry,
    x: &[T],
    dy: &[T],
    dw: &mut [T],
    add: bool,
) -> bool {
    correlate(g, x, dy, dw, add) || channels_last(g, x, dy, dw, add)
}

/// `*v = s`, or `*v += s` if `add`.
#[inline(always)]
fn put<T: Real>(v: &mut T, s: T, add: bool) {
    *v = if add { *v + s } else { s };
}

/// Output channels in blocks of 4 against taps in blocks of 5 or 6, each pair's products summed
/// over the wide positions of the output change (zero past `ow`) and the padded image, lane
/// by lane; the lanes are summed once, after the last image.
fn correlate<T: Real>(g: &ConvGeometry, x: &[T], dy: &[T], dw: &mut [T], add: bool) -> bool {
    // Blocks of 5 taps where they pad fewer taps than blocks of 6 (25 taps: none, not 5).
    if g.fan_in().div_ceil(5) * 5 < g.fan_in().div_ceil(6) * 6 {
        correlate_by::<T, 5>(g, x, dy, dw, add)
    } else {
        correlate_by::<T, 6>(g, x, dy, dw, add)
    }
}

/// [`correlate`] with blocks of `NR` taps.
fn correlate_by<T: Real, const NR: usize>(
    g: &ConvGeometry,
    x: &[T],
    dy: &[T],
    dw: &mut [T],
    add: bool,
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
            let s = sums[at..at + T::VECTOR]
                .iter()
                .fold(T::zero(), |acc, &s| acc + s);
            put(v, s, add);
        }
    }
    true
}

/// The output change transposed to channels last, vectors of output channels against
/// blocks of taps, summed over the positions (any stride).
fn channels_last<T: Real>(g: &ConvGeometry, x: &[T], dy: &[T], dw: &mut [T], add: bool) -> bool {
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
            put(v, sums[(cb * taps_pad + q) * width + c], add);
        }
    }
    true
}

/// The block shapes of the channels-in-lanes kernel, `(mv, kr)`: `mv` vectors of channels
/// by `kr` taps, every sum in a register (at most 25), larger blocks first; and one call of
/// the kernel with a shape chosen by [`tap_block`] (a test runs every one).
macro_rules! blocks {
    ($(($mv:literal, $kr:literal)),*) => {
        const BLOCKS: &[(usize, usize)] = &[$(($mv, $kr)),*];

        fn lanes_block<T: Real>(
            shape: (usize, usize),
            d: &[T],
            ds: usize,
            x: &[T],
            xoff: &[usize],
            sums: (usize, usize, usize, usize),
            g: &mut [T],
        ) {
            match shape {
                $(
                    #[cfg(target_arch = "x86_64")]
                    // SAFETY: `channels_last`, its only caller, checked `available()`
                    // (AVX-512F) before it called this.
                    ($mv, $kr) => unsafe { T::lanes::<$mv, $kr>(d, ds, x, xoff, sums, g) },
                )*
                _ => unreachable!("tap_block chooses among BLOCKS"),
            }
        }
    };
}

blocks!(
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

/// Taps per block for `mv` vectors of channels: the fewest padded taps among [`BLOCKS`],
/// larger blocks on ties.
fn tap_block(mv: usize, taps: usize) -> usize {
    let padded = |kr: usize| taps.div_ceil(kr) * kr;
    let mut best = None;
    for &(_, kr) in BLOCKS.iter().filter(|&&(m, _)| m == mv) {
        if best.is_none_or(|b| padded(kr) < padded(b)) {
            best = Some(kr);
        }
    }
    best.expect("BLOCKS has shapes for one and two vectors")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every block shape the channels-in-lanes kernel can take, each on a geometry that
    /// [`tap_block`] sends to it, against the matrix-product path (f32: 16 channels fill one
    /// vector, 32 two).
    #[test]
    fn every_channels_last_block_equals_the_product() {
        let geometries = [
            (1, 5),
            (5, 2),
            (4, 2),
            (3, 2),
            (1, 3),
            (3, 2),
            (5, 2),
            (2, 2),
            (2, 3),
        ];
        assert_eq!(BLOCKS.len(), geometries.len(), "a geometry for every block");
        for (&(mv, kr), (c, k)) in BLOCKS.iter().zip(geometries) {
            assert_eq!(
                tap_block(mv, c * k * k),
                kr,
                "the geometry for {:?}",
                (mv, kr)
            );
            let g = ConvGeometry::new(c, 6, 7, 16 * mv, k, 1, 0, 1).expect("fits");
            let (ni, no, np) = g.sizes();
            let x: Vec<f32> = (0..2 * ni)
                .map(|i| ((i * 7) % 11) as f32 * 0.1 - 0.5)
                .collect();
            let dy: Vec<f32> = (0..2 * no)
                .map(|i| ((i * 5) % 13) as f32 * 0.1 - 0.6)
                .collect();
            let (mut got, mut want) = (vec![f32::NAN; np], vec![f32::NAN; np]);
            if !channels_last(&g, &x, &dy, &mut got, false) {
                return; // no AVX-512 on this CPU
            }
            g.products_only().reverse_param(&x, &dy, &mut want);
            for (i, (a, b)) in got.iter().zip(&want).enumerate() {
                assert!(
                    (a - b).abs() <= 1e-4 * (1.0 + b.abs()),
                    "block {:?}, entry {i}: {a} vs {b}",
                    (mv, kr)
                );
            }
        }
    }
}
