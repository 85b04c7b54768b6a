//! The 2-D convolution's fast path, over a whole batch per pass: its geometry and passes
//! ([`geometry`]), the adapters that feed the matrix product straight from the images
//! (`products`: implicit im2col, and the input change scattered straight back) and the
//! direct kernels (`direct`), taken where the CPU has AVX-512 and the shape suits them.
//! Same parameter layout and results as `instances::conv2d` (tested equal, both paths).

mod direct;
mod geometry;
mod products;

#[doc(hidden)]
pub use direct::DirectScalar;
pub use geometry::ConvGeometry;

use crate::Real;

/// A 2-D convolution from `c` channels of `h x w` to `co` channels, square kernel `k`,
/// stride, zero padding and dilation, as a [`crate::Para`] from `I` to `O` values with `P`
/// parameters (`w[((o * c + i) * k + ky) * k + kx]`, like the span).
///
/// ```
/// use paralens::span::{Conv2d, SpanLayer};
/// use paralens::{Init, Para};
/// use paralens::nalgebra::SVector;
/// let fast = Conv2d::<f64, 64, 144, 36>::new::<1, 8, 8, 4, 3, 1, 0>();
/// let span = SpanLayer::<f64, 64, 144, 36>::conv2d::<1, 8, 8, 4, 3, 1, 0>();
/// let (w, x) = (fast.init(1), SVector::<f64, 64>::from_fn(|i, _| (i as f64).sin()));
/// assert!((fast.forward(&w, x) - span.forward(&w, x)).norm() < 1e-12);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Conv2d<T, const I: usize, const O: usize, const P: usize> {
    g: ConvGeometry,
    _t: core::marker::PhantomData<fn() -> T>,
}

impl<T: Real, const I: usize, const O: usize, const P: usize> Conv2d<T, I, O, P> {
    /// The geometry.
    #[must_use]
    pub fn geometry(&self) -> &ConvGeometry {
        &self.g
    }

    /// The convolution of `C` channels of `H x W` to `CO` channels, kernel `K`, stride `S`,
    /// zero padding `PAD` (dilation 1), sizes checked at compile time.
    #[must_use]
    pub fn new<
        const C: usize,
        const H: usize,
        const W: usize,
        const CO: usize,
        const K: usize,
        const S: usize,
        const PAD: usize,
    >() -> Self {
        const {
            if let Some(why) =
                super::instances::conv2d_sizes_wrong([I, O, P], [C, H, W, CO, K, S, PAD])
            {
                panic!("{}", why);
            }
        };
        Self::with_dilation(C, H, W, CO, K, S, PAD, 1)
    }

    /// Any geometry, dilation included, checked at run time.
    ///
    /// # Panics
    /// If the sizes do not match `I`, `O`, `P` or the kernel does not fit.
    #[must_use]
    #[allow(clippy::too_many_arguments)] // the geometry of a convolution
    pub fn with_dilation(
        c: usize,
        h: usize,
        w: usize,
        co: usize,
        k: usize,
        stride: usize,
        pad: usize,
        dil: usize,
    ) -> Self {
        let g = ConvGeometry::new(c, h, w, co, k, stride, pad, dil)
            .expect("the kernel does not fit the padded input, or the stride is 0");
        let (i, o, p) = g.sizes();
        assert!(
            (i, o, p) == (I, O, P),
            "this convolution has {i} inputs, {o} outputs and {p} parameters; the type says {I}, {O}, {P}"
        );
        Self {
            g,
            _t: core::marker::PhantomData,
        }
    }
}

crate::span::linear::linear_layer!(Conv2d, g);

#[cfg(feature = "std")] // read by checkpoints only
impl<T, const I: usize, const O: usize, const P: usize> crate::span::linear::KernelShape
    for Conv2d<T, I, O, P>
{
    fn kernel_shape(&self) -> Option<[usize; 4]> {
        // The span's weight index is `((o * c + i) * k + ky) * k + kx`: row-major in this shape.
        let g = &self.g;
        Some([g.co, g.c, g.k, g.k])
    }
}
