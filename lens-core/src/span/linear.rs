//! The `Para` of a linear layer given its three passes on slices ([`BatchPasses`]): one
//! macro for every layer whose passes are a span's (the compiled span, the convolution).

#[cfg(feature = "alloc")]
use super::CompiledSpan;
use super::ConvGeometry;

/// `Para` and `Init` for a linear layer `Type<T, I, O, P>` whose field `field` runs the three
/// passes on slices ([`BatchPasses`]) and knows its fan-in. The layer takes any static
/// matrix `SMatrix<T, I, B>` whose columns are examples (a vector is a batch of one); the
/// parameter change is summed over the columns. Weights start He-uniform in
/// `±sqrt(6 / fan_in)`.
macro_rules! linear_layer {
    ($ty:ident, $field:ident) => {
        $crate::span::linear::linear_layer!(@on $ty, $field, nalgebra::SMatrix<T, I, B>, nalgebra::SMatrix<T, O, B>);
        // On a batch kept on the heap: output and input change in pooled blocks.
        #[cfg(feature = "alloc")]
        $crate::span::linear::linear_layer!(@on $ty, $field, $crate::HeapMatrix<T, I, B>, $crate::HeapMatrix<T, O, B>);

        impl<T: $crate::Real, const I: usize, const O: usize, const P: usize> $crate::Init
            for $ty<T, I, O, P>
        {
            type Param = nalgebra::SVector<T, P>;
            fn init_with<R: rand::Rng + ?Sized>(&self, rng: &mut R) -> Self::Param {
                let limit = nalgebra::ComplexField::sqrt(6.0 / self.$field.fan_in().max(1) as f64);
                nalgebra::SVector::from_fn(|_, _| T::cst(rng.random_range(-limit..limit)))
            }
            #[cfg(feature = "std")]
            fn layout(&self, path: &str, layout: &mut $crate::checkpoint::Layout) {
                if let Some(shape) = $crate::span::linear::KernelShape::kernel_shape(self) {
                    let name = $crate::checkpoint::join(path, "kernel");
                    layout.store_as(path, name, shape.to_vec());
                }
            }
        }
    };
    // `y = f(x, w)` into a fresh output.
    (@forward $self:ident, $field:ident, $w:ident, $x:ident) => {{
        let mut y = Self::Out::zeros();
        $crate::span::linear::BatchPasses::forward_batch(
            &$self.$field,
            $x.as_slice(),
            $w.as_slice(),
            y.as_mut_slice(),
        );
        y
    }};
    // The kernel's change, added into the caller's buffer.
    // Added straight into the caller's change: no temporary of the kernel's size.
    (@param $self:ident, $field:ident, $x:ident, $dy:ident, $dp:ident) => {{
        $crate::span::linear::BatchPasses::add_reverse_param_batch(
            &$self.$field,
            $x.as_slice(),
            $dy.as_slice(),
            $dp.as_mut_slice(),
        );
    }};
    // `Para` on batches of type `$x` (static matrices or `HeapMatrix`), output `$out`.
    (@on $ty:ident, $field:ident, $x:ty, $out:ty) => {
        impl<T: $crate::Real, const I: usize, const O: usize, const P: usize, const B: usize>
            $crate::Para<$x> for $ty<T, I, O, P>
        {
            type Param = nalgebra::SVector<T, P>;
            type Out = $out;

            #[inline]
            fn forward(&self, w: &Self::Param, x: $x) -> Self::Out {
                $crate::span::linear::linear_layer!(@forward self, $field, w, x)
            }

            #[inline]
            fn vjp(
                &self,
                w: &Self::Param,
                x: $x,
            ) -> (Self::Out, impl FnOnce(Self::Out, &mut Self::Param) -> $x) {
                (
                    $crate::span::linear::linear_layer!(@forward self, $field, w, x),
                    #[inline(always)]
                    move |dy: Self::Out, dp: &mut Self::Param| {
                        let mut dx = <$x>::zeros();
                        $crate::span::linear::BatchPasses::reverse_input_batch(
                            &self.$field,
                            w.as_slice(),
                            dy.as_slice(),
                            dx.as_mut_slice(),
                        );
                        $crate::span::linear::linear_layer!(@param self, $field, x, dy, dp);
                        dx
                    },
                )
            }

            #[inline]
            fn vjp_params(
                &self,
                w: &Self::Param,
                x: $x,
            ) -> (Self::Out, impl FnOnce(Self::Out, &mut Self::Param)) {
                (
                    $crate::span::linear::linear_layer!(@forward self, $field, w, x),
                    // The kernel's change only: the input change (the transposed
                    // convolution) is not computed.
                    #[inline(always)]
                    move |dy: Self::Out, dp: &mut Self::Param| {
                        $crate::span::linear::linear_layer!(@param self, $field, x, dy, dp);
                    },
                )
            }
        }
    };
}
pub(crate) use linear_layer;

/// The three passes of a linear layer over a batch of examples laid one after the other
/// (a column-major matrix whose columns are the examples); the parameter change is summed
/// over the batch.
#[doc(hidden)]
pub trait BatchPasses<T> {
    /// `y = f(x, w)` for every example.
    fn forward_batch(&self, x: &[T], w: &[T], y: &mut [T]);
    /// `dx = R_x(dy)` for every example.
    fn reverse_input_batch(&self, w: &[T], dy: &[T], dx: &mut [T]);
    /// `dw += sum over examples of R_w(x, dy)`.
    fn add_reverse_param_batch(&self, x: &[T], dy: &[T], dw: &mut [T]);
}

/// The shape a layer's weights have beyond their flat order (a convolution's
/// `[out, in, k, k]`, row-major over the span's weight index), which a checkpoint stores them
/// with; `None` if they have none.
#[cfg(feature = "std")] // read by checkpoints only
pub(crate) trait KernelShape {
    /// The kernel's shape, if the weights are one.
    fn kernel_shape(&self) -> Option<[usize; 4]>;
}

#[cfg(feature = "alloc")]
impl<T: crate::Real> BatchPasses<T> for CompiledSpan<T> {
    fn forward_batch(&self, x: &[T], w: &[T], y: &mut [T]) {
        let (i, _, o) = self.sizes();
        for (xb, yb) in x.chunks_exact(i).zip(y.chunks_exact_mut(o)) {
            self.forward(xb, w, yb);
        }
    }

    fn reverse_input_batch(&self, w: &[T], dy: &[T], dx: &mut [T]) {
        let (i, _, o) = self.sizes();
        for (dyb, dxb) in dy.chunks_exact(o).zip(dx.chunks_exact_mut(i)) {
            self.reverse_input(w, dyb, dxb);
        }
    }

    fn add_reverse_param_batch(&self, x: &[T], dy: &[T], dw: &mut [T]) {
        let (i, _, o) = self.sizes();
        for (xb, dyb) in x.chunks_exact(i).zip(dy.chunks_exact(o)) {
            self.add_reverse_param(xb, dyb, dw);
        }
    }
}

impl<T: crate::Real> BatchPasses<T> for ConvGeometry {
    fn forward_batch(&self, x: &[T], w: &[T], y: &mut [T]) {
        self.forward(x, w, y);
    }

    fn reverse_input_batch(&self, w: &[T], dy: &[T], dx: &mut [T]) {
        self.reverse_input(w, dy, dx);
    }

    fn add_reverse_param_batch(&self, x: &[T], dy: &[T], dw: &mut [T]) {
        self.add_reverse_param(x, dy, dw);
    }
}
