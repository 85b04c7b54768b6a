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

#[cfg(feature = "alloc")]
use alloc::{format, string::String, vec::Vec};

mod bias;
#[cfg(feature = "alloc")]
mod compiled;
mod conv;
#[cfg(feature = "alloc")]
mod dense;
mod flatten;
pub mod instances;
#[cfg(feature = "alloc")]
mod layer;
mod linear;
mod pool;
#[cfg(feature = "alloc")]
mod small;

pub use bias::Bias;
#[cfg(feature = "alloc")]
pub use compiled::CompiledSpan;
#[doc(hidden)]
pub use conv::DirectScalar;
pub use conv::{Conv2d, ConvGeometry};
#[cfg(feature = "alloc")]
pub use dense::{Dense, DenseParams};
pub use flatten::Flatten;
#[cfg(feature = "alloc")]
pub use layer::SpanLayer;
#[doc(hidden)]
pub use linear::BatchPasses;
pub use pool::MaxPool2d;

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
#[cfg(feature = "alloc")]
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

#[cfg(feature = "alloc")]
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
