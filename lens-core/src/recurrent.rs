//! Recurrent cells: an Elman cell, a GRU cell and an LSTM cell, each a `para!` model of dense
//! layers and activations for one step of a sequence, on one example (`SVector`s) or on a
//! batch of `B` examples as the columns of matrices (`SMatrix<T, I, B>`, through the dense
//! layers' matrix products), or on [`HeapMatrix`] activations for batches of real size (the
//! values the pullbacks keep are then pooled blocks, not matrices on the stack: the MNIST
//! row LSTM trains on a default 2 MiB thread). A sequence model calls its cell in a
//! differentiated loop over a constant number of steps; the cell's parameters are shared by
//! the steps, and the reverse adds the steps' changes (see `examples/sequence_digits.rs`):
//!
//! ```
//! use paralens::recurrent::GruCell;
//! use paralens::{Dense, Init, Para};
//! use paralens::nalgebra::SVector;
//!
//! paralens::para! {
//!     /// Reads four 2-vectors and scores the last state.
//!     pub struct Reader { cell: GruCell<2, 3, f64>, out: Dense<3, 1, f64> }
//!     fn forward(&self, xs: [SVector<f64, 2>; 4]) -> SVector<f64, 1> {
//!         let mut h = SVector::<f64, 3>::zeros();
//!         for t in 0..4 {
//!             h = self.cell(xs[t], h);
//!         }
//!         self.out(h)
//!     }
//! }
//! let model = Reader { cell: GruCell::new(), out: Dense::new() };
//! let p = model.init(0);
//! let xs = [SVector::<f64, 2>::new(0.5, -0.5); 4];
//! let (dp, _) = model.changes(&p, xs, SVector::<f64, 1>::new(1.0));
//! assert!(dp.cell.z.x.w.norm() > 0.0); // every step added to the shared gate weights
//! ```

use crate::fns::{sigmoid, sigmoid_lens_vjp, tanh, tanh_lens_vjp};
use crate::{Dense, HeapMatrix, Real};
use nalgebra::SMatrix;

crate::para! {
    /// One input-to-hidden affine map and one hidden-to-hidden map, added: the pre-activation
    /// of a gate, `W x + U h + b`.
    #[derive(Clone, Copy, Debug, Default)]
    pub struct Gate<const I: usize, const H: usize, T: Real> {
        x: Dense<I, H, T>,
        h: Dense<H, H, T>,
    }
    fn forward<const B: usize>(&self, x: SMatrix<T, I, B>, h: SMatrix<T, H, B>) -> SMatrix<T, H, B> {
        self.x(x) + self.h(h)
    }
    fn forward<const B: usize>(
        &self,
        x: HeapMatrix<T, I, B>,
        h: HeapMatrix<T, H, B>,
    ) -> HeapMatrix<T, H, B> {
        self.x(x) + self.h(h)
    }
}

impl<const I: usize, const H: usize, T: Real> Gate<I, H, T> {
    /// A gate of freshly initialisable dense maps.
    #[must_use]
    pub fn new() -> Self {
        Self {
            x: Dense::new(),
            h: Dense::new(),
        }
    }
}

crate::para! {
    /// The Elman cell: `h' = tanh(W x + U h + b)`.
    #[derive(Clone, Copy, Debug, Default)]
    pub struct ElmanCell<const I: usize, const H: usize, T: Real> {
        a: Gate<I, H, T>,
    }
    fn forward<const B: usize>(&self, x: SMatrix<T, I, B>, h: SMatrix<T, H, B>) -> SMatrix<T, H, B> {
        tanh(self.a(x, h))
    }
    fn forward<const B: usize>(
        &self,
        x: HeapMatrix<T, I, B>,
        h: HeapMatrix<T, H, B>,
    ) -> HeapMatrix<T, H, B> {
        tanh(self.a(x, h))
    }
}

impl<const I: usize, const H: usize, T: Real> ElmanCell<I, H, T> {
    /// A cell ready for `init`.
    #[must_use]
    pub fn new() -> Self {
        Self { a: Gate::new() }
    }
}

crate::para! {
    /// The GRU cell (Cho et al.):
    /// `z = sigma(W_z x + U_z h)`, `r = sigma(W_r x + U_r h)`,
    /// `n = tanh(W_n x + r o (U_n h))`, `h' = (1 - z) o n + z o h` (biases in each map).
    #[derive(Clone, Copy, Debug, Default)]
    pub struct GruCell<const I: usize, const H: usize, T: Real> {
        z: Gate<I, H, T>,
        r: Gate<I, H, T>,
        nx: Dense<I, H, T>,
        nh: Dense<H, H, T>,
    }
    fn forward<const B: usize>(&self, x: SMatrix<T, I, B>, h: SMatrix<T, H, B>) -> SMatrix<T, H, B> {
        let z = sigmoid(self.z(x, h));
        let r = sigmoid(self.r(x, h));
        let n = tanh(self.nx(x) + r.component_mul(&self.nh(h)));
        (SMatrix::<T, H, B>::repeat(T::one()) - z).component_mul(&n) + z.component_mul(&h)
    }
    fn forward<const B: usize>(
        &self,
        x: HeapMatrix<T, I, B>,
        h: HeapMatrix<T, H, B>,
    ) -> HeapMatrix<T, H, B> {
        let z = sigmoid(self.z(x.clone(), h.clone()));
        let r = sigmoid(self.r(x.clone(), h.clone()));
        let n = tanh(self.nx(x) + r.component_mul(&self.nh(h.clone())));
        (HeapMatrix::<T, H, B>::repeat(T::one()) - z.clone()).component_mul(&n) + z.component_mul(&h)
    }
}

impl<const I: usize, const H: usize, T: Real> GruCell<I, H, T> {
    /// A cell ready for `init`.
    #[must_use]
    pub fn new() -> Self {
        Self {
            z: Gate::new(),
            r: Gate::new(),
            nx: Dense::new(),
            nh: Dense::new(),
        }
    }
}

crate::para! {
    /// The LSTM cell (Hochreiter and Schmidhuber, with a forget gate):
    /// `i, f, o = sigma(W x + U h)` (three gates), `g = tanh(W_g x + U_g h)`,
    /// `c' = f o c + i o g`, `h' = o o tanh(c')`; it maps `(x, h, c)` to `(h', c')`.
    #[derive(Clone, Copy, Debug, Default)]
    pub struct LstmCell<const I: usize, const H: usize, T: Real> {
        i: Gate<I, H, T>,
        f: Gate<I, H, T>,
        o: Gate<I, H, T>,
        g: Gate<I, H, T>,
    }
    fn forward<const B: usize>(
        &self,
        x: SMatrix<T, I, B>,
        h: SMatrix<T, H, B>,
        c: SMatrix<T, H, B>,
    ) -> (SMatrix<T, H, B>, SMatrix<T, H, B>) {
        let i = sigmoid(self.i(x, h));
        let f = sigmoid(self.f(x, h));
        let o = sigmoid(self.o(x, h));
        let g = tanh(self.g(x, h));
        let c2 = f.component_mul(&c) + i.component_mul(&g);
        (o.component_mul(&tanh(c2)), c2)
    }
    fn forward<const B: usize>(
        &self,
        x: HeapMatrix<T, I, B>,
        h: HeapMatrix<T, H, B>,
        c: HeapMatrix<T, H, B>,
    ) -> (HeapMatrix<T, H, B>, HeapMatrix<T, H, B>) {
        let i = sigmoid(self.i(x.clone(), h.clone()));
        let f = sigmoid(self.f(x.clone(), h.clone()));
        let o = sigmoid(self.o(x.clone(), h.clone()));
        let g = tanh(self.g(x, h));
        let c2 = f.component_mul(&c) + i.component_mul(&g);
        (o.component_mul(&tanh(c2.clone())), c2)
    }
}

impl<const I: usize, const H: usize, T: Real> LstmCell<I, H, T> {
    /// A cell ready for `init`.
    #[must_use]
    pub fn new() -> Self {
        Self {
            i: Gate::new(),
            f: Gate::new(),
            o: Gate::new(),
            g: Gate::new(),
        }
    }
}
