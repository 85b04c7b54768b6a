//! Output rows against a deep index over wide positions, tile by tile: the forward pass
//! and the input change by tap rows.

use crate::Real;

/// Output rows against a deep index over the wide positions `p < pos` of one image's
/// operand buffer: `out[ooff(m) + p] = sum_k A(m, k) buf[xoff[k] + p]`, with `A` packed by
/// [`pack`].
pub(super) struct Shifted<'a> {
    pub(super) xoff: &'a [usize],
    pub(super) pos: usize,
}

/// Tiles: 8 output rows by 3 vectors of positions, 5 rows by 3 or 4 vectors (for row counts
/// that 5 divides and 8 does not: the 25 taps of a 5x5 kernel; 4 vectors where they waste
/// fewer positions), or 1 row by 8 vectors for the rows left.
pub(super) const TILES: [(usize, usize); 4] = [(8, 3), (5, 3), (5, 4), (1, 8)];

/// The rows per block for `rows` output rows (the rest go one by one).
pub(super) fn block_rows(rows: usize) -> usize {
    if rows.is_multiple_of(5) && !rows.is_multiple_of(8) {
        5
    } else {
        8
    }
}

/// The wide positions the tiles of every shape cover: `pos` rounded up to whole tiles. An
/// output row takes this much room, so that its last tile does not write over the next
/// row's first positions.
pub(super) fn covered<T: Real>(pos: usize) -> usize {
    TILES
        .map(|(_, nv)| pos.div_ceil(nv * T::VECTOR) * nv * T::VECTOR)
        .into_iter()
        .max()
        .unwrap_or(0)
}

/// `A(m, k)` for `m < rows`, `k < deep`, in blocks of [`block_rows`] rows (then single
/// rows), deep index by deep index, as the kernel reads them: consecutive values per step
/// instead of strided ones.
pub(super) fn pack<T: Real>(
    rows: usize,
    deep: usize,
    a: impl Fn(usize, usize) -> T,
    out: &mut [T],
) {
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
    pub(super) fn x_need<T: Real>(&self) -> usize {
        self.xoff.iter().max().copied().unwrap_or(0) + covered::<T>(self.pos)
    }

    /// All `rows` output rows (row `m` at `ooff(m)` of `out`), block by block.
    pub(super) fn rows<T: Real>(
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
            super::available()
                && self.x_need::<T>() <= buf.len()
                && o_need <= out.len()
                && packed.len() >= rows * deep,
            "direct convolution: no AVX-512, or buffers too small"
        );
        let mr = block_rows(rows);
        let full = rows / mr * mr;
        let round = |nv: usize| self.pos.div_ceil(nv * T::VECTOR) * nv;
        for m0 in (0..full).step_by(mr) {
            let a = &packed[m0 * deep..(m0 + mr) * deep];
            if mr == 5 && round(4) < round(3) {
                let offs: [usize; 5] = core::array::from_fn(|i| ooff(m0 + i));
                self.tiles::<T, 5, 4>(a, buf, &offs, out);
            } else if mr == 5 {
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

    /// One block of output rows, tile by tile along the wide positions (only from `rows`,
    /// which checks the CPU and the buffers).
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
            // SAFETY: `rows` asserted `available()` (AVX-512F on this CPU).
            // `p0 + width <= covered(pos)`, so `p0 + xoff[k] + width <= x_need <= buf.len()`
            // and `p0 + ooff[m] + width <= o_need <= out.len()` (asserted in `rows`).
            unsafe {
                T::shifted::<MR, NV>(a, &buf[p0..], self.xoff, &mut out[p0..], ooff);
            }
        }
    }
}
