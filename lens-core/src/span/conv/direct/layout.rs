//! The buffers the direct kernels read and write: zero-padded planes, and the window of
//! an output buffer that is kept.

use super::K_MAX;
use crate::Real;
use crate::span::ConvGeometry;

/// A padded buffer layout: `planes` planes of rows of `cols` values, `stride` values apart
/// (rows of zeros below the source and up to the next plane), the source's `h x w` planes
/// placed at `(py, px)`.
#[derive(Clone, Copy, Debug)]
pub(super) struct Padded {
    pub(super) planes: usize,
    pub(super) cols: usize,
    pub(super) py: usize,
    pub(super) px: usize,
    pub(super) stride: usize,
}

impl Padded {
    pub(super) fn plane(&self) -> usize {
        self.stride
    }

    /// Copies the source (planes of `h x w`) into its place in `dst`. Only the source's
    /// values are written: the zeros around them are the buffer's, set once when it was
    /// made (every image of a batch has the same layout, so they stay zero).
    pub(super) fn fill<T: Real>(&self, src: &[T], h: usize, w: usize, dst: &mut [T]) {
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

/// What one image's output planes become: their kept window.
#[derive(Clone, Copy, Debug)]
pub(super) struct Crop {
    /// Planes, their stride in the buffer, and the buffer's row length.
    pub(super) planes: usize,
    pub(super) plane: usize,
    pub(super) cols: usize,
    /// The window: from `(r0, c0)`, `rows x width`.
    pub(super) r0: usize,
    pub(super) c0: usize,
    pub(super) rows: usize,
    pub(super) width: usize,
}

impl Crop {
    pub(super) fn take<T: Real>(&self, buf: &[T], dst: &mut [T]) {
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
pub(super) fn input_layout(g: &ConvGeometry, xoff: &mut [usize; K_MAX]) -> Option<Padded> {
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
