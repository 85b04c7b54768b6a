//! The forward pass: output channels against taps over the wide positions of the padded
//! image.

use super::layout::{Crop, input_layout};
use super::shifted::{Shifted, covered, pack};
use super::{A_MAX, K_MAX, O_MAX, X_MAX, available};
use crate::Real;
use crate::span::ConvGeometry;

/// `y = conv(x, w)` for a batch of images, or `false` (nothing written) if the geometry does
/// not suit the direct kernels (a stride above 1, buffers too large, or no AVX-512): output
/// channels against taps, over the wide positions of the padded image.
pub(in crate::span) fn forward<T: Real>(g: &ConvGeometry, x: &[T], w: &[T], y: &mut [T]) -> bool {
    if g.stride != 1 || !available() {
        return false;
    }
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
    if pass.x_need::<T>().max(g.c * pad.plane()) > X_MAX
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
