//! Linear layers as parametric spans.
//!
//! A span is a finite set of cells `e`, each with an input index `s(e)`, a parameter index
//! `p(e)`, an output index `t(e)` and a weight `mu(e)`. Its layer is
//! `y[t e] += mu(e) x[s e] w[p e]`, and its reverse derivative is two layers of the same kind:
//! `dx[s e] += mu(e) dy[t e] w[p e]` (the span with `s` and `t` swapped) and
//! `dw[p e] += mu(e) x[s e] dy[t e]` (`p` and `t` swapped). Dense layers, convolutions,
//! pooling, bias and graph convolutions are all spans ([`instances`]).
//!
//! A cell may have no input (`s = None`: the factor is 1, as in a bias) or no parameter
//! (`p = None`: the factor is 1, as in pooling).

/// `Para` and `Init` for a linear layer `Type<T, I, O, P>` whose field `field` runs the three
/// passes on slices ([`BatchPasses`]) and knows its fan-in. The layer takes any static
/// matrix `SMatrix<T, I, B>` whose columns are examples (a vector is a batch of one); the
/// parameter change is summed over the columns. Weights start He-uniform in
/// `±sqrt(6 / fan_in)`.
macro_rules! linear_layer {
    ($ty:ident, $field:ident) => {
        $crate::span::linear_layer!(@on $ty, $field, nalgebra::SMatrix<T, I, B>, nalgebra::SMatrix<T, O, B>);
        // On a batch kept on the heap: output and input change in pooled blocks.
        $crate::span::linear_layer!(@on $ty, $field, $crate::HeapMatrix<T, I, B>, $crate::HeapMatrix<T, O, B>);

        impl<T: $crate::Real, const I: usize, const O: usize, const P: usize> $crate::Init
            for $ty<T, I, O, P>
        {
            type Param = nalgebra::SVector<T, P>;
            fn init_with<R: rand::Rng + ?Sized>(&self, rng: &mut R) -> Self::Param {
                let limit = (6.0 / self.$field.fan_in().max(1) as f64).sqrt();
                nalgebra::SVector::from_fn(|_, _| T::cst(rng.random_range(-limit..limit)))
            }
        }
    };
    // `y = f(x, w)` into a fresh output.
    (@forward $self:ident, $field:ident, $w:ident, $x:ident) => {{
        let mut y = Self::Out::zeros();
        $crate::span::BatchPasses::forward_batch(
            &$self.$field,
            $x.as_slice(),
            $w.as_slice(),
            y.as_mut_slice(),
        );
        y
    }};
    // The kernel's change, added into the caller's buffer.
    (@param $self:ident, $field:ident, $x:ident, $dy:ident, $dp:ident) => {{
        let mut dw = Self::Param::zeros();
        $crate::span::BatchPasses::reverse_param_batch(
            &$self.$field,
            $x.as_slice(),
            $dy.as_slice(),
            dw.as_mut_slice(),
        );
        *$dp += dw;
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
                $crate::span::linear_layer!(@forward self, $field, w, x)
            }

            #[inline]
            fn vjp(
                &self,
                w: &Self::Param,
                x: $x,
            ) -> (Self::Out, impl FnOnce(Self::Out, &mut Self::Param) -> $x) {
                (
                    $crate::span::linear_layer!(@forward self, $field, w, x),
                    #[inline(always)]
                    move |dy: Self::Out, dp: &mut Self::Param| {
                        let mut dx = <$x>::zeros();
                        $crate::span::BatchPasses::reverse_input_batch(
                            &self.$field,
                            w.as_slice(),
                            dy.as_slice(),
                            dx.as_mut_slice(),
                        );
                        $crate::span::linear_layer!(@param self, $field, x, dy, dp);
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
                    $crate::span::linear_layer!(@forward self, $field, w, x),
                    // The kernel's change only: the input change (the transposed
                    // convolution) is not computed.
                    #[inline(always)]
                    move |dy: Self::Out, dp: &mut Self::Param| {
                        $crate::span::linear_layer!(@param self, $field, x, dy, dp);
                    },
                )
            }
        }
    };
}
pub(crate) use linear_layer;

mod compiled;
mod conv;
mod direct;
mod flatten;
pub mod instances;
mod layer;
mod pool;

pub use compiled::CompiledSpan;
pub use conv::{Conv2d, ConvGeometry};
#[doc(hidden)]
pub use direct::DirectScalar;
pub use flatten::Flatten;
pub use layer::{Bias, SpanLayer};
pub use pool::MaxPool2d;

/// The three passes of a linear layer over a batch of examples laid one after the other
/// (a column-major matrix whose columns are the examples); the parameter change is summed
/// over the batch.
#[doc(hidden)]
pub trait BatchPasses<T> {
    /// `y = f(x, w)` for every example.
    fn forward_batch(&self, x: &[T], w: &[T], y: &mut [T]);
    /// `dx = R_x(dy)` for every example.
    fn reverse_input_batch(&self, w: &[T], dy: &[T], dx: &mut [T]);
    /// `dw = sum over examples of R_w(x, dy)`.
    fn reverse_param_batch(&self, x: &[T], dy: &[T], dw: &mut [T]);
}

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

    fn reverse_param_batch(&self, x: &[T], dy: &[T], dw: &mut [T]) {
        let (i, _, o) = self.sizes();
        dw.fill(T::zero());
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

    fn reverse_param_batch(&self, x: &[T], dy: &[T], dw: &mut [T]) {
        self.reverse_param(x, dy, dw);
    }
}

/// One cell of a span: `y[t] += mu * x[s] * w[p]`, where a missing `s` or `p` stands for 1.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Cell {
    /// Input index, or `None` for the constant 1.
    pub s: Option<u32>,
    /// Parameter index, or `None` for the constant 1.
    pub p: Option<u32>,
    /// Output index.
    pub t: u32,
    /// Weight.
    pub mu: f64,
}

/// A span: sizes of its three index sets and its cells.
#[derive(Clone, Debug, PartialEq)]
pub struct Span {
    /// Number of inputs.
    pub inputs: usize,
    /// Number of parameters.
    pub params: usize,
    /// Number of outputs.
    pub outputs: usize,
    /// The cells.
    pub cells: Vec<Cell>,
}

impl Span {
    /// The span with inputs and outputs swapped (`s` and `t` exchanged): the layer of the
    /// input change, and the transposed layer. Cells without an input have no image and are
    /// dropped.
    #[must_use]
    pub fn transpose(&self) -> Span {
        Span {
            inputs: self.outputs,
            params: self.params,
            outputs: self.inputs,
            cells: self
                .cells
                .iter()
                .filter_map(|c| {
                    c.s.map(|s| Cell {
                        s: Some(c.t),
                        p: c.p,
                        t: s,
                        mu: c.mu,
                    })
                })
                .collect(),
        }
    }

    /// `y = layer(x, w)` by the definition, cell by cell (the reference the fast forms are
    /// tested against).
    ///
    /// # Panics
    /// If a slice's length differs from the span's sizes.
    pub fn apply(&self, x: &[f64], w: &[f64], y: &mut [f64]) {
        assert_eq!(
            (x.len(), w.len(), y.len()),
            (self.inputs, self.params, self.outputs)
        );
        y.fill(0.0);
        for c in &self.cells {
            let xs = c.s.map_or(1.0, |s| x[s as usize]);
            let wp = c.p.map_or(1.0, |p| w[p as usize]);
            y[c.t as usize] += c.mu * xs * wp;
        }
    }

    /// The reverse derivative by the definition: `dx[s] += mu dy[t] w[p]`,
    /// `dw[p] += mu x[s] dy[t]`.
    ///
    /// # Panics
    /// If a slice's length differs from the span's sizes.
    pub fn apply_reverse(&self, x: &[f64], w: &[f64], dy: &[f64], dx: &mut [f64], dw: &mut [f64]) {
        assert_eq!(
            (x.len(), w.len(), dy.len()),
            (self.inputs, self.params, self.outputs)
        );
        assert_eq!((dx.len(), dw.len()), (self.inputs, self.params));
        dx.fill(0.0);
        dw.fill(0.0);
        for c in &self.cells {
            let d = dy[c.t as usize] * c.mu;
            let xs = c.s.map_or(1.0, |s| x[s as usize]);
            let wp = c.p.map_or(1.0, |p| w[p as usize]);
            if let Some(s) = c.s {
                dx[s as usize] += d * wp;
            }
            if let Some(p) = c.p {
                dw[p as usize] += d * xs;
            }
        }
    }

    /// Checks that every index is inside its set.
    ///
    /// # Errors
    /// The first cell with an index out of range, described.
    pub fn validate(&self) -> Result<(), String> {
        for (i, c) in self.cells.iter().enumerate() {
            let bad = c.s.is_some_and(|s| s as usize >= self.inputs)
                || c.p.is_some_and(|p| p as usize >= self.params)
                || c.t as usize >= self.outputs;
            if bad {
                return Err(format!(
                    "cell {i} ({c:?}) is outside the span's sizes ({} inputs, {} parameters, {} outputs)",
                    self.inputs, self.params, self.outputs
                ));
            }
        }
        Ok(())
    }
}
