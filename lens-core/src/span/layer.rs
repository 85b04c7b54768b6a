//! A span as a parametric lens on static vectors.

use super::{CompiledSpan, Span};
use crate::Real;

/// The layer of a span, from `I` inputs to `O` outputs with `P` parameters, as a
/// [`Para`](crate::Para): forward and both reverse passes are gathers over the compiled span.
///
/// ```
/// use paralens::span::{SpanLayer, instances};
/// use paralens::Para;
/// use paralens::nalgebra::{SMatrix, SVector};
/// // A 1-D convolution: 5 inputs, kernel 3, stride 1, no padding -> 3 outputs.
/// let conv = SpanLayer::<f64, 5, 3, 3>::new(&instances::conv1d(1, 5, 1, 3, 1, 0, 1));
/// let w = SVector::<f64, 3>::new(1.0, 0.0, -1.0);
/// let y = conv.forward(&w, SVector::<f64, 5>::new(1.0, 2.0, 4.0, 8.0, 16.0));
/// assert_eq!(y, SVector::<f64, 3>::new(-3.0, -6.0, -12.0));
/// ```
#[derive(Clone, Debug)]
pub struct SpanLayer<T, const I: usize, const O: usize, const P: usize> {
    compiled: CompiledSpan<T>,
    /// The kernel's `[out, in, k, k]` when the layer is a 2-D convolution, for checkpoints.
    #[cfg_attr(not(feature = "std"), allow(dead_code))]
    kernel: Option<[usize; 4]>,
}

impl<T: Real, const I: usize, const O: usize, const P: usize> SpanLayer<T, I, O, P> {
    /// Compiles `span` into a layer of these sizes.
    ///
    /// # Panics
    /// If the span's sizes are not `(I, P, O)` or a cell is out of range; the message says
    /// which sizes the span has.
    #[must_use]
    pub fn new(span: &Span) -> Self {
        assert!(
            (span.inputs, span.params, span.outputs) == (I, P, O),
            "the span has {} inputs, {} parameters and {} outputs, the layer type says {I}, {P} and {O}",
            span.inputs,
            span.params,
            span.outputs
        );
        Self {
            compiled: CompiledSpan::new(span),
            kernel: None,
        }
    }

    /// A dense layer (weights only; add [`super::instances::bias`] beside it), its sizes
    /// checked at compile time: `P = I * O`.
    #[must_use]
    pub fn dense() -> Self {
        const { assert!(P == I * O, "dense span layer: P must be I * O") };
        Self::new(&super::instances::dense(I, O))
    }

    /// A 2-D convolution from `C` channels of `H x W` to `CO` channels, kernel `K`, stride
    /// `S`, zero padding `PAD`, with every size checked at compile time: a layer type whose
    /// `I`, `O` or `P` does not fit the geometry does not compile.
    ///
    /// ```
    /// use paralens::span::SpanLayer;
    /// // 1 channel of 8x8 -> 4 channels of 6x6 with 3x3 kernels.
    /// let conv = SpanLayer::<f32, 64, 144, 36>::conv2d::<1, 8, 8, 4, 3, 1, 0>();
    /// # let _ = conv;
    /// ```
    #[must_use]
    pub fn conv2d<
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
        Self {
            kernel: Some([CO, C, K, K]),
            ..Self::new(&super::instances::conv2d(C, H, W, CO, K, S, PAD, 1))
        }
    }

    /// Average pooling of `C` channels of `H x W` over `K x K` windows with stride `S`, sizes
    /// checked at compile time (`P` must be 0: pooling has no parameters).
    #[must_use]
    pub fn avg_pool2d<
        const C: usize,
        const H: usize,
        const W: usize,
        const K: usize,
        const S: usize,
    >() -> Self {
        const {
            if let Some(why) = super::instances::pool2d_sizes_wrong([I, O], [C, H, W, K, S]) {
                panic!("{}", why);
            }
            assert!(P == 0, "avg_pool2d: pooling has no parameters, P must be 0");
        };
        Self::new(&super::instances::avg_pool2d(C, H, W, K, S))
    }
}

super::linear::linear_layer!(SpanLayer, compiled);

#[cfg(feature = "std")] // read by checkpoints only
impl<T, const I: usize, const O: usize, const P: usize> super::linear::KernelShape
    for SpanLayer<T, I, O, P>
{
    fn kernel_shape(&self) -> Option<[usize; 4]> {
        self.kernel
    }
}
