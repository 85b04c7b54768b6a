//! A convolution's geometry and its three passes on slices: the direct kernels where they
//! apply, else one matrix product per pass.

use super::products::{Patches, Planes, PlanesRead, Scatter};
use crate::Real;
use crate::gemm::{View, ViewMut, gemm};
use crate::span::instances::conv_out;

/// The geometry of a 2-D convolution and its three passes on slices, for any [`Real`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ConvGeometry {
    pub(in crate::span) c: usize,
    pub(in crate::span) h: usize,
    pub(in crate::span) w: usize,
    pub(in crate::span) co: usize,
    pub(in crate::span) k: usize,
    pub(in crate::span) stride: usize,
    pub(in crate::span) pad: usize,
    pub(in crate::span) dil: usize,
    pub(in crate::span) oh: usize,
    pub(in crate::span) ow: usize,
    /// Whether the passes may take the direct kernels (`super::direct`).
    direct: bool,
}

impl ConvGeometry {
    /// `c` channels of `h x w` to `co` channels, kernel `k`, stride, zero padding and
    /// dilation; `None` if the kernel does not fit or the stride is 0.
    #[must_use]
    #[allow(clippy::too_many_arguments)] // the geometry of a convolution
    pub fn new(
        c: usize,
        h: usize,
        w: usize,
        co: usize,
        k: usize,
        stride: usize,
        pad: usize,
        dil: usize,
    ) -> Option<Self> {
        let oh = conv_out(h, k, stride, pad, dil)?;
        let ow = conv_out(w, k, stride, pad, dil)?;
        Some(Self {
            c,
            h,
            w,
            co,
            k,
            stride,
            pad,
            dil,
            oh,
            ow,
            direct: true,
        })
    }

    /// The same geometry computed with matrix products only, never the direct kernels
    /// (which are taken, where the CPU has AVX-512 and the shapes allow, by default); for
    /// tests and benchmarks that compare the two.
    ///
    /// ```
    /// use paralens::span::ConvGeometry;
    /// let g = ConvGeometry::new(1, 6, 6, 2, 3, 1, 0, 1).unwrap();
    /// let (x, w) = ([0.5f64; 36], [0.25f64; 18]);
    /// let (mut a, mut b) = ([0.0; 32], [0.0; 32]);
    /// g.forward(&x, &w, &mut a);
    /// g.products_only().forward(&x, &w, &mut b);
    /// assert!(a.iter().zip(&b).all(|(p, q)| (p - q).abs() < 1e-12));
    /// ```
    #[must_use]
    pub fn products_only(self) -> Self {
        Self {
            direct: false,
            ..self
        }
    }

    /// [`ConvGeometry::forward`] by the direct kernels alone: `false`, having written
    /// nothing, where they do not apply (a CPU without AVX-512, a stride or size they do
    /// not handle), which is where the passes take the matrix product. With
    /// [`ConvGeometry::products_only`] and [`crate::gemm::with_kernel`], this lets a test
    /// or benchmark run each path explicitly.
    ///
    /// ```
    /// use paralens::span::ConvGeometry;
    /// let g = ConvGeometry::new(1, 6, 6, 2, 3, 1, 0, 1).unwrap();
    /// let (x, w) = ([0.5f32; 36], [0.25f32; 18]);
    /// let (mut a, mut b) = ([0.0; 32], [0.0; 32]);
    /// g.products_only().forward(&x, &w, &mut a);
    /// if g.direct_forward(&x, &w, &mut b) {
    ///     assert!(a.iter().zip(&b).all(|(p, q)| (p - q).abs() < 1e-5));
    /// } else {
    ///     assert_eq!(b, [0.0; 32]); // not this CPU's path: nothing written
    /// }
    /// ```
    ///
    /// # Panics
    /// As [`ConvGeometry::forward`].
    pub fn direct_forward<T: Real>(&self, x: &[T], w: &[T], y: &mut [T]) -> bool {
        self.check_forward(x, w, y);
        super::direct::forward(self, x, w, y)
    }

    /// [`ConvGeometry::reverse_input`] by the direct kernels alone, as
    /// [`ConvGeometry::direct_forward`].
    ///
    /// # Panics
    /// As [`ConvGeometry::reverse_input`].
    pub fn direct_reverse_input<T: Real>(&self, w: &[T], dy: &[T], dx: &mut [T]) -> bool {
        self.check_reverse_input(w, dy, dx);
        super::direct::reverse_input(self, w, dy, dx)
    }

    /// [`ConvGeometry::reverse_param`] by the direct kernels alone, as
    /// [`ConvGeometry::direct_forward`].
    ///
    /// # Panics
    /// As [`ConvGeometry::reverse_param`].
    pub fn direct_reverse_param<T: Real>(&self, x: &[T], dy: &[T], dw: &mut [T]) -> bool {
        self.check_reverse_param(x, dy, dw);
        super::direct::reverse_param(self, x, dy, dw, false)
    }

    /// The number of taps feeding one output: `c k^2` (the fan-in, for initialisation).
    #[must_use]
    pub fn fan_in(&self) -> usize {
        self.c * self.k * self.k
    }

    /// (inputs, outputs, parameters).
    #[must_use]
    pub fn sizes(&self) -> (usize, usize, usize) {
        (
            self.c * self.h * self.w,
            self.co * self.oh * self.ow,
            self.co * self.c * self.k * self.k,
        )
    }
}

impl ConvGeometry {
    /// The number of images in `len` values of `per` each.
    ///
    /// # Panics
    /// If `len` is not a whole number of images.
    fn images(len: usize, per: usize, what: &str) -> usize {
        assert!(
            per > 0 && len.is_multiple_of(per),
            "{what}: {len} values are not a whole number of {per}-value images"
        );
        len / per
    }

    /// `y = conv(x, w)` for a batch of images laid one after the other (`x` holds `n`
    /// inputs, `y` `n` outputs): the direct kernels where they apply, else one matrix
    /// product, positions of all images against the output channels, with the patches
    /// packed straight from the images.
    ///
    /// # Panics
    /// If the slices do not hold the same number of whole images, or `w` is not `P` values.
    pub fn forward<T: Real>(&self, x: &[T], w: &[T], y: &mut [T]) {
        let n = self.check_forward(x, w, y);
        if self.direct && super::direct::forward(self, x, w, y) {
            return;
        }
        y.fill(T::zero());
        // Y^T (positions x co) += patches^T (positions x taps) W^T.
        gemm(
            &Patches {
                g: self,
                x,
                images: n,
                taps_wide: false,
            },
            &View::strided(w, self.co, self.fan_in(), self.fan_in(), 1),
            &mut Planes {
                g: self,
                y,
                images: n,
            },
        );
    }

    /// `dx = R_x(dy)` (the transposed convolution) for a batch: the direct kernels where
    /// they apply, else the product of the output changes with the kernel, scattered back
    /// onto the images (no patch buffer).
    ///
    /// # Panics
    /// As [`ConvGeometry::forward`].
    pub fn reverse_input<T: Real>(&self, w: &[T], dy: &[T], dx: &mut [T]) {
        let n = self.check_reverse_input(w, dy, dx);
        if self.direct && super::direct::reverse_input(self, w, dy, dx) {
            return;
        }
        dx.fill(T::zero());
        // dpatches^T (positions x taps) = dY^T (positions x co) W (co x taps), scattered.
        gemm(
            &PlanesRead {
                g: self,
                y: dy,
                images: n,
                co_wide: false,
            },
            &View::col_major(w, self.fan_in(), self.co),
            &mut Scatter {
                g: self,
                dx,
                images: n,
            },
        );
    }

    /// `dw = R_w(dy)` for a batch: the parameter changes summed over the images (the direct
    /// kernels where they apply, else one matrix product).
    ///
    /// # Panics
    /// As [`ConvGeometry::forward`].
    pub fn reverse_param<T: Real>(&self, x: &[T], dy: &[T], dw: &mut [T]) {
        let n = self.check_reverse_param(x, dy, dw);
        if self.direct && super::direct::reverse_param(self, x, dy, dw, false) {
            return;
        }
        dw.fill(T::zero());
        self.add_products(n, x, dy, dw);
    }

    /// `dw += R_w(dy)` for a batch: [`ConvGeometry::reverse_param`] added into `dw`, which a
    /// layer's reverse uses to add straight into the learner's change (no temporary of the
    /// kernel's size on the stack).
    ///
    /// ```
    /// use paralens::span::ConvGeometry;
    ///
    /// let g = ConvGeometry::new(1, 4, 4, 2, 3, 1, 1, 1).unwrap();
    /// let (x, dy) = ([0.5f32; 16], [1.0f32; 32]);
    /// let (mut set, mut added) = ([0.0; 18], [1.0; 18]);
    /// g.reverse_param(&x, &dy, &mut set);
    /// g.add_reverse_param(&x, &dy, &mut added);
    /// assert!(set.iter().zip(&added).all(|(s, a)| (s + 1.0 - a).abs() < 1e-5));
    /// ```
    ///
    /// # Panics
    /// As [`ConvGeometry::forward`].
    pub fn add_reverse_param<T: Real>(&self, x: &[T], dy: &[T], dw: &mut [T]) {
        let n = self.check_reverse_param(x, dy, dw);
        if self.direct && super::direct::reverse_param(self, x, dy, dw, true) {
            return;
        }
        self.add_products(n, x, dy, dw);
    }

    /// `dw +=` the parameter change of `n` images by one matrix product, sizes checked:
    /// dW^T (taps x co) += patches (taps x positions) dY^T (positions x co).
    fn add_products<T: Real>(&self, n: usize, x: &[T], dy: &[T], dw: &mut [T]) {
        let taps = self.fan_in();
        gemm(
            &Patches {
                g: self,
                x,
                images: n,
                taps_wide: true,
            },
            &PlanesRead {
                g: self,
                y: dy,
                images: n,
                co_wide: true,
            },
            &mut ViewMut::col_major(dw, taps, self.co),
        );
    }

    /// The number of images of a forward pass, its sizes checked.
    fn check_forward<T>(&self, x: &[T], w: &[T], y: &[T]) -> usize {
        let (ni, no, np) = self.sizes();
        let n = Self::images(x.len(), ni, "conv2d input");
        assert!(
            y.len() == n * no && w.len() == np,
            "conv2d forward: output or kernel of the wrong size"
        );
        n
    }

    /// The number of images of an input change, its sizes checked.
    fn check_reverse_input<T>(&self, w: &[T], dy: &[T], dx: &[T]) -> usize {
        let (ni, no, np) = self.sizes();
        let n = Self::images(dy.len(), no, "conv2d output change");
        assert!(
            dx.len() == n * ni && w.len() == np,
            "conv2d reverse: input change or kernel of the wrong size"
        );
        n
    }

    /// The number of images of a parameter change, its sizes checked.
    fn check_reverse_param<T>(&self, x: &[T], dy: &[T], dw: &[T]) -> usize {
        let (ni, no, np) = self.sizes();
        let n = Self::images(x.len(), ni, "conv2d input");
        assert!(
            dy.len() == n * no && dw.len() == np,
            "conv2d reverse: output change or kernel change of the wrong size"
        );
        n
    }
}
