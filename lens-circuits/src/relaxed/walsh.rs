//! [`WalshLayer`]: two-input gates with fixed random wiring, each given by the 4 Walsh
//! coefficients of its table's logits instead of 16 function scores.

use super::gates::coefficients;
use super::layer::{back, normal, run, wiring};
use alloc::vec::Vec;
use core::marker::PhantomData;
use lens_core::{HeapMatrix, Init, Para, Real};
use rand::Rng;

/// The Walsh functions at the corners `j = a + 2 b`: `[1, A, B, A B]` with `A = 2 a - 1`,
/// `B = 2 b - 1`. Row `j` gives corner `j`'s logit `z_j = sum_k WALSH[j][k] w_k`.
const WALSH: [[i8; 4]; 4] = [[1, -1, -1, 1], [1, 1, -1, -1], [1, -1, 1, -1], [1, 1, 1, 1]];

/// A layer of `O` two-input gates over `I` inputs, wired as [`LogicLayer`](super::LogicLayer)
/// (the same seed gives the same wiring). Gate `g` has 4 parameters `w` (column `g` of a
/// `HeapMatrix<T, 4, O>`), the Walsh coefficients of its truth table's logits: at the corner
/// `(a, b)` the table is `sigmoid(w0 + w1 A + w2 B + w3 A B)` with `A = 2 a - 1`,
/// `B = 2 b - 1`, and between the corners the gate computes that table's multilinear
/// extension, as `LogicLayer` does. A quarter of `LogicLayer`'s parameters and no softmax;
/// every table in `(0, 1)^4` is reachable, as with `LogicLayer`'s mixtures of the 16 functions. Discretised, corner `j` is true where its logit is positive.
#[derive(Clone, Debug)]
pub struct WalshLayer<const I: usize, const O: usize, T = f32> {
    wires: Vec<[u32; 2]>,
    scalar: PhantomData<fn() -> T>,
}

impl<const I: usize, const O: usize, T> WalshLayer<I, O, T> {
    /// The layer with the wiring drawn from `seed`.
    ///
    /// # Panics
    /// Fewer than two inputs, or none of the gates (a compile-time check where the sizes are
    /// constants).
    #[must_use]
    pub fn new(seed: u64) -> Self {
        Self {
            wires: wiring::<I, O>(seed),
            scalar: PhantomData,
        }
    }

    /// The inputs each gate reads.
    #[must_use]
    pub fn wires(&self) -> &[[u32; 2]] {
        &self.wires
    }
}

impl<const I: usize, const O: usize, T: Real> Init for WalshLayer<I, O, T> {
    type Param = HeapMatrix<T, 4, O>;

    /// Coefficients drawn from a standard normal distribution.
    fn init_with<R: Rng + ?Sized>(&self, rng: &mut R) -> Self::Param {
        HeapMatrix::from_fn(|_, _| normal(rng))
    }
}

/// Gate `g`'s table at its four corners: `sigmoid(WALSH w)`.
#[inline]
fn table<T: Real>(w: &[T]) -> [T; 4] {
    core::array::from_fn(|j| {
        let z = (0..4).fold(T::zero(), |s, k| s + T::cst(f64::from(WALSH[j][k])) * w[k]);
        T::one() / (T::one() + nalgebra::ComplexField::exp(-z))
    })
}

/// Function `k` of each gate (bit `j` of `k` is corner `j`'s value): corner `j` is true where
/// its logit is positive.
pub(super) fn function<T: Real>(w: &[T]) -> usize {
    (0..4)
        .filter(|&j| {
            (0..4).fold(T::zero(), |s, k| s + T::cst(f64::from(WALSH[j][k])) * w[k]) > T::zero()
        })
        .fold(0, |f, j| f | 1 << j)
}

impl<const I: usize, const O: usize, T: Real> WalshLayer<I, O, T> {
    /// The coefficients of each gate's relaxed function; each gate's table kept in `tau`
    /// when given (the reverse reads it through the sigmoid's derivative).
    fn tables(
        p: &HeapMatrix<T, 4, O>,
        mut tau: Option<&mut HeapMatrix<T, 4, O>>,
    ) -> HeapMatrix<T, 4, O> {
        let mut c = HeapMatrix::<T, 4, O>::zeros();
        let (w, out) = (p.as_slice(), c.as_mut_slice());
        for g in 0..O {
            let t = table(&w[4 * g..4 * (g + 1)]);
            out[4 * g..4 * (g + 1)].copy_from_slice(&coefficients(t));
            if let Some(tau) = tau.as_deref_mut() {
                tau.as_mut_slice()[4 * g..4 * (g + 1)].copy_from_slice(&t);
            }
        }
        c
    }

    /// The reverse: the coefficients' change added into `dp`, and the input's change if
    /// `dx`; `tau` the gates' tables kept by [`Self::tables`].
    fn back<const B: usize>(
        &self,
        tau: &HeapMatrix<T, 4, O>,
        c: &HeapMatrix<T, 4, O>,
        x: &HeapMatrix<T, I, B>,
        dy: &HeapMatrix<T, O, B>,
        dp: &mut HeapMatrix<T, 4, O>,
        dx: Option<&mut HeapMatrix<T, I, B>>,
    ) {
        let (t, dw) = (tau.as_slice(), dp.as_mut_slice());
        back(&self.wires, c, x, dy, dx, |g, dtau| {
            // Through the sigmoids to the logits, then the Walsh transform to `w`.
            let dz: [T; 4] = core::array::from_fn(|j| {
                let tj = t[4 * g + j];
                dtau[j] * tj * (T::one() - tj)
            });
            for k in 0..4 {
                dw[4 * g + k] +=
                    (0..4).fold(T::zero(), |s, j| s + T::cst(f64::from(WALSH[j][k])) * dz[j]);
            }
        });
    }
}

impl<const I: usize, const O: usize, const B: usize, T: Real> Para<HeapMatrix<T, I, B>>
    for WalshLayer<I, O, T>
{
    type Param = HeapMatrix<T, 4, O>;
    type Out = HeapMatrix<T, O, B>;

    fn forward(&self, p: &Self::Param, x: HeapMatrix<T, I, B>) -> Self::Out {
        run(&self.wires, &Self::tables(p, None), &x)
    }

    fn vjp(
        &self,
        p: &Self::Param,
        x: HeapMatrix<T, I, B>,
    ) -> (
        Self::Out,
        impl FnOnce(Self::Out, &mut Self::Param) -> HeapMatrix<T, I, B>,
    ) {
        let mut tau = HeapMatrix::<T, 4, O>::zeros();
        let c = Self::tables(p, Some(&mut tau));
        let y = run(&self.wires, &c, &x);
        (y, move |dy: Self::Out, dp: &mut Self::Param| {
            let mut dx = HeapMatrix::<T, I, B>::zeros();
            self.back(&tau, &c, &x, &dy, dp, Some(&mut dx));
            dx
        })
    }

    fn vjp_params(
        &self,
        p: &Self::Param,
        x: HeapMatrix<T, I, B>,
    ) -> (Self::Out, impl FnOnce(Self::Out, &mut Self::Param)) {
        let mut tau = HeapMatrix::<T, 4, O>::zeros();
        let c = Self::tables(p, Some(&mut tau));
        let y = run(&self.wires, &c, &x);
        (y, move |dy: Self::Out, dp: &mut Self::Param| {
            self.back(&tau, &c, &x, &dy, dp, None);
        })
    }
}
