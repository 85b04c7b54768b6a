//! The linear layers as spans. Index conventions (row-major, channels first):
//! an image of `c` channels of `h x w` is `x[(ci * h + y) * w + x]`; a kernel of a
//! convolution from `c` to `co` channels is `w[((co * c + ci) * k + ky) * k + kx]`.

#[cfg(feature = "alloc")]
use super::{Cell, Span};
#[cfg(feature = "alloc")]
use alloc::{vec, vec::Vec};

/// The output length of a convolution: `(n + 2 pad - dilation (k - 1) - 1) / stride + 1`,
/// or `None` when the kernel does not fit or the stride is 0.
#[must_use]
pub const fn conv_out(
    n: usize,
    k: usize,
    stride: usize,
    pad: usize,
    dilation: usize,
) -> Option<usize> {
    let span = dilation * (k - 1) + 1;
    if stride == 0 || k == 0 || n + 2 * pad < span {
        None
    } else {
        Some((n + 2 * pad - span) / stride + 1)
    }
}

/// Why a layer type `[I, O, P]` does not fit the convolution `[C, H, W, CO, K, S, PAD]`
/// (dilation 1), or `None` if it does. A `const fn`, so that typed constructors check their
/// sizes at compile time with one message per mistake.
#[must_use]
pub const fn conv2d_sizes_wrong(
    [i, o, p]: [usize; 3],
    [c, h, w, co, k, s, pad]: [usize; 7],
) -> Option<&'static str> {
    if i != c * h * w {
        Some("conv2d: the input size I must be C * H * W")
    } else if s == 0 || k == 0 || h + 2 * pad < k || w + 2 * pad < k {
        Some("conv2d: the kernel must fit the padded input and the stride be positive")
    } else if o != co * ((h + 2 * pad - k) / s + 1) * ((w + 2 * pad - k) / s + 1) {
        Some("conv2d: the output size O must be CO * OH * OW with OH = (H + 2 PAD - K) / S + 1")
    } else if p != co * c * k * k {
        Some("conv2d: the parameter count P must be CO * C * K * K")
    } else {
        None
    }
}

/// Why a layer type `[I, O]` does not fit pooling `[C, H, W, K, S]` (windows `K x K`,
/// stride `S`), or `None` if it does; shared by the average and max pooling constructors.
#[must_use]
pub const fn pool2d_sizes_wrong(
    [i, o]: [usize; 2],
    [c, h, w, k, s]: [usize; 5],
) -> Option<&'static str> {
    if i != c * h * w {
        Some("pool2d: the input size I must be C * H * W")
    } else if s == 0 || k == 0 || h < k || w < k {
        Some("pool2d: the window must fit and the stride be positive")
    } else if o != c * ((h - k) / s + 1) * ((w - k) / s + 1) {
        Some("pool2d: the output size O must be C * OH * OW with OH = (H - K) / S + 1")
    } else {
        None
    }
}

#[cfg(feature = "alloc")]
fn cell(s: usize, p: usize, t: usize) -> Cell {
    Cell {
        s: Some(s as u32),
        p: Some(p as u32),
        t: t as u32,
        mu: 1.0,
    }
}

#[cfg(feature = "alloc")]
/// Dense `y[o] = sum_i w[o * inputs + i] x[i]` (weights output by input, row-major).
#[must_use]
pub fn dense(inputs: usize, outputs: usize) -> Span {
    let mut cells = Vec::with_capacity(inputs * outputs);
    for o in 0..outputs {
        for i in 0..inputs {
            cells.push(cell(i, o * inputs + i, o));
        }
    }
    Span {
        inputs,
        params: inputs * outputs,
        outputs,
        cells,
    }
}

#[cfg(feature = "alloc")]
/// Bias `y[j] = w[j]`: cells without an input. (Added to another layer's output by
/// composing with [`crate::Par`]; on its own it maps `()`-like zero inputs.)
#[must_use]
pub fn bias(n: usize) -> Span {
    Span {
        inputs: 0,
        params: n,
        outputs: n,
        cells: (0..n)
            .map(|j| Cell {
                s: None,
                p: Some(j as u32),
                t: j as u32,
                mu: 1.0,
            })
            .collect(),
    }
}

#[cfg(feature = "alloc")]
/// 1-D convolution (cross-correlation) from `c` channels of length `n` to `co` channels,
/// kernel `k`, with stride, zero padding and dilation.
///
/// # Panics
/// If the kernel does not fit (see [`conv_out`]).
#[must_use]
pub fn conv1d(
    c: usize,
    n: usize,
    co: usize,
    k: usize,
    stride: usize,
    pad: usize,
    dilation: usize,
) -> Span {
    let on = conv_out(n, k, stride, pad, dilation).expect("the kernel does not fit the input");
    let mut cells = Vec::new();
    for o in 0..co {
        for t in 0..on {
            for i in 0..c {
                for kk in 0..k {
                    let pos = (t * stride + kk * dilation) as isize - pad as isize;
                    if (0..n as isize).contains(&pos) {
                        cells.push(cell(i * n + pos as usize, (o * c + i) * k + kk, o * on + t));
                    }
                }
            }
        }
    }
    Span {
        inputs: c * n,
        params: co * c * k,
        outputs: co * on,
        cells,
    }
}

#[cfg(feature = "alloc")]
/// 2-D convolution from `c` channels of `h x w` to `co` channels, square kernel `k`, with
/// stride, zero padding and dilation (the same in both directions).
///
/// # Panics
/// If the kernel does not fit (see [`conv_out`]).
#[must_use]
#[allow(clippy::too_many_arguments)] // the geometry of a convolution
pub fn conv2d(
    c: usize,
    h: usize,
    w: usize,
    co: usize,
    k: usize,
    stride: usize,
    pad: usize,
    dilation: usize,
) -> Span {
    conv2d_groups(c, h, w, co, k, stride, pad, dilation, false)
}

#[cfg(feature = "alloc")]
/// Depthwise 2-D convolution: each of the `c` channels with its own `k x k` kernel
/// (`w[(ci * k + ky) * k + kx]`).
///
/// # Panics
/// If the kernel does not fit (see [`conv_out`]).
#[must_use]
pub fn depthwise2d(
    c: usize,
    h: usize,
    w: usize,
    k: usize,
    stride: usize,
    pad: usize,
    dilation: usize,
) -> Span {
    conv2d_groups(c, h, w, c, k, stride, pad, dilation, true)
}

#[cfg(feature = "alloc")]
#[allow(clippy::too_many_arguments)]
fn conv2d_groups(
    c: usize,
    h: usize,
    w: usize,
    co: usize,
    k: usize,
    stride: usize,
    pad: usize,
    dilation: usize,
    depthwise: bool,
) -> Span {
    let oh = conv_out(h, k, stride, pad, dilation).expect("the kernel does not fit the height");
    let ow = conv_out(w, k, stride, pad, dilation).expect("the kernel does not fit the width");
    let mut cells = Vec::new();
    for o in 0..co {
        for oy in 0..oh {
            for ox in 0..ow {
                let t = (o * oh + oy) * ow + ox;
                let channels = if depthwise { o..o + 1 } else { 0..c };
                for i in channels {
                    for ky in 0..k {
                        let iy = (oy * stride + ky * dilation) as isize - pad as isize;
                        if !(0..h as isize).contains(&iy) {
                            continue;
                        }
                        for kx in 0..k {
                            let ix = (ox * stride + kx * dilation) as isize - pad as isize;
                            if !(0..w as isize).contains(&ix) {
                                continue;
                            }
                            let s = (i * h + iy as usize) * w + ix as usize;
                            let p = if depthwise {
                                (o * k + ky) * k + kx
                            } else {
                                ((o * c + i) * k + ky) * k + kx
                            };
                            cells.push(cell(s, p, t));
                        }
                    }
                }
            }
        }
    }
    Span {
        inputs: c * h * w,
        params: if depthwise { c * k * k } else { co * c * k * k },
        outputs: co * oh * ow,
        cells,
    }
}

#[cfg(feature = "alloc")]
/// Transposed 2-D convolution from `c` channels of `h x w` to `co` channels: the transpose
/// of the convolution from `co` channels of the larger size `(h - 1) stride - 2 pad +
/// dilation (k - 1) + 1` back to `c` channels of `h x w`.
///
/// # Panics
/// If the sizes do not fit.
#[must_use]
#[allow(clippy::too_many_arguments)]
pub fn conv_transpose2d(
    c: usize,
    h: usize,
    w: usize,
    co: usize,
    k: usize,
    stride: usize,
    pad: usize,
    dilation: usize,
) -> Span {
    let big = |n: usize| {
        ((n - 1) * stride + dilation * (k - 1) + 1)
            .checked_sub(2 * pad)
            .expect("padding larger than the output")
    };
    conv2d(co, big(h), big(w), c, k, stride, pad, dilation).transpose()
}

#[cfg(feature = "alloc")]
/// Average pooling of `c` channels of `h x w` over `k x k` windows with the given stride
/// (no parameters: `mu = 1 / k^2`).
///
/// # Panics
/// If the window does not fit.
#[must_use]
pub fn avg_pool2d(c: usize, h: usize, w: usize, k: usize, stride: usize) -> Span {
    let oh = conv_out(h, k, stride, 0, 1).expect("the window does not fit");
    let ow = conv_out(w, k, stride, 0, 1).expect("the window does not fit");
    let mu = 1.0 / (k * k) as f64;
    let mut cells = Vec::new();
    for i in 0..c {
        for oy in 0..oh {
            for ox in 0..ow {
                for ky in 0..k {
                    for kx in 0..k {
                        let s = (i * h + oy * stride + ky) * w + ox * stride + kx;
                        cells.push(Cell {
                            s: Some(s as u32),
                            p: None,
                            t: ((i * oh + oy) * ow + ox) as u32,
                            mu,
                        });
                    }
                }
            }
        }
    }
    Span {
        inputs: c * h * w,
        params: 0,
        outputs: c * oh * ow,
        cells,
    }
}

#[cfg(feature = "alloc")]
/// Graph convolution (Kipf and Welling) on `nodes` nodes with `fi` input and `fo` output
/// features per node: `Y = A' X W` with `A' = D^-1/2 (A + I) D^-1/2`, the normalised
/// adjacency (self-loops added) as the measure. `X` is `x[j * fi + f]`, `W` is
/// `w[f * fo + g]`, `Y` is `y[i * fo + g]`. `edges` are undirected pairs.
///
/// # Panics
/// If an edge names a node out of range.
#[must_use]
pub fn graph_conv(nodes: usize, edges: &[(usize, usize)], fi: usize, fo: usize) -> Span {
    let mut adj = vec![vec![false; nodes]; nodes];
    for &(a, b) in edges {
        assert!(
            a < nodes && b < nodes,
            "edge ({a}, {b}) names a node out of 0..{nodes}"
        );
        adj[a][b] = true;
        adj[b][a] = true;
    }
    for (i, row) in adj.iter_mut().enumerate() {
        row[i] = true;
    }
    let deg: Vec<f64> = adj
        .iter()
        .map(|r| r.iter().filter(|&&e| e).count() as f64)
        .collect();
    let mut cells = Vec::new();
    for i in 0..nodes {
        for j in 0..nodes {
            if !adj[i][j] {
                continue;
            }
            let mu = 1.0 / nalgebra::ComplexField::sqrt(deg[i] * deg[j]);
            for f in 0..fi {
                for g in 0..fo {
                    cells.push(Cell {
                        s: Some((j * fi + f) as u32),
                        p: Some((f * fo + g) as u32),
                        t: (i * fo + g) as u32,
                        mu,
                    });
                }
            }
        }
    }
    Span {
        inputs: nodes * fi,
        params: fi * fo,
        outputs: nodes * fo,
        cells,
    }
}
