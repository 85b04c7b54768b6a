//! [`LogicLayer`]: two-input gates with fixed random wiring, each a softmax over the 16
//! functions, in real-valued logic.

use super::gates::{coefficients, expected_table, softmax};
use alloc::vec::Vec;
use core::marker::PhantomData;
use lens_core::{HeapMatrix, Init, Para, Real};
use rand::{Rng, SeedableRng, rngs::StdRng, seq::SliceRandom};

/// A layer of `O` two-input gates over `I` inputs. Gate `g` reads the inputs
/// `wires()[g]` (fixed at construction from a seed: concatenated random permutations of the
/// inputs, taken in pairs, so every input is read when `2 O >= I`). Its parameters are 16
/// scores per gate (a `HeapMatrix<T, 16, O>`, column `g` for gate `g`), whose softmax gives
/// the probability of each function; on a batch (the columns of a `HeapMatrix<T, I, B>`,
/// values in `[0, 1]`) the gate's output is its expected truth table's multilinear extension
/// (see the [module](super)).
#[derive(Clone, Debug)]
pub struct LogicLayer<const I: usize, const O: usize, T = f32> {
    wires: Vec<[u32; 2]>,
    scalar: PhantomData<fn() -> T>,
}

impl<const I: usize, const O: usize, T> LogicLayer<I, O, T> {
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

/// `O` pairs of inputs out of `I`, drawn from `seed`: concatenated random permutations of the
/// inputs, taken in pairs, so every input is read when `2 O >= I`.
pub(super) fn wiring<const I: usize, const O: usize>(seed: u64) -> Vec<[u32; 2]> {
    const {
        assert!(
            I >= 2 && O >= 1,
            "a logic layer reads two inputs or more and has gates"
        )
    };
    let mut rng = StdRng::seed_from_u64(seed);
    let mut order: Vec<u32> = Vec::with_capacity(2 * O + I);
    let mut wires = Vec::with_capacity(O);
    for _ in 0..O {
        let mut pair = [0u32; 2];
        for slot in &mut pair {
            if order.is_empty() {
                order.extend(0..I as u32);
                order.shuffle(&mut rng);
            }
            *slot = order.pop().expect("refilled above");
        }
        if pair[0] == pair[1] {
            // The end of one permutation met the start of the next: another input.
            pair[1] = (pair[0] + 1 + rng.random_range(0..I as u32 - 1)) % I as u32;
        }
        wires.push(pair);
    }
    wires
}

/// Standard normal draws (Box-Muller), through nalgebra's `libm`: without `std`, `f64` has
/// no `ln`.
pub(super) fn normal<T: Real, R: Rng + ?Sized>(rng: &mut R) -> T {
    let (u, v): (f64, f64) = (rng.random(), rng.random());
    use nalgebra::ComplexField;
    let r = ComplexField::sqrt(-2.0 * ComplexField::ln(1.0 - u));
    T::cst(r * ComplexField::cos(core::f64::consts::TAU * v))
}

/// The gates' outputs on a batch: gate `g` reads `wires[g]` and computes
/// `c0 + c1 a + c2 b + c3 a b` with its coefficients `c[4 g..4 g + 4]`.
pub(super) fn run<const I: usize, const O: usize, const B: usize, T: Real>(
    wires: &[[u32; 2]],
    c: &HeapMatrix<T, 4, O>,
    x: &HeapMatrix<T, I, B>,
) -> HeapMatrix<T, O, B> {
    let mut y = HeapMatrix::<T, O, B>::zeros();
    let (c, xs, ys) = (c.as_slice(), x.as_slice(), y.as_mut_slice());
    for j in 0..B {
        let (col, out) = (&xs[I * j..I * (j + 1)], &mut ys[O * j..O * (j + 1)]);
        for (g, (o, &[a, b])) in out.iter_mut().zip(wires).enumerate() {
            let (a, b) = (col[a as usize], col[b as usize]);
            let k = &c[4 * g..4 * g + 4];
            *o = k[0] + k[1] * a + k[2] * b + k[3] * a * b;
        }
    }
    y
}

/// The reverse of [`run`]: the input's change added into `dx` if given, and each gate's
/// table's change (summed over the batch) handed to `table(g, dtau)`.
pub(super) fn back<const I: usize, const O: usize, const B: usize, T: Real>(
    wires: &[[u32; 2]],
    c: &HeapMatrix<T, 4, O>,
    x: &HeapMatrix<T, I, B>,
    dy: &HeapMatrix<T, O, B>,
    mut dx: Option<&mut HeapMatrix<T, I, B>>,
    mut table: impl FnMut(usize, [T; 4]),
) {
    let (c, xs, dys) = (c.as_slice(), x.as_slice(), dy.as_slice());
    for (g, &[ia, ib]) in wires.iter().enumerate() {
        let (ia, ib) = (ia as usize, ib as usize);
        let k = &c[4 * g..4 * g + 4];
        // The coefficients' changes, summed over the batch.
        let mut dc = [T::zero(); 4];
        for j in 0..B {
            let (a, b, d) = (xs[I * j + ia], xs[I * j + ib], dys[O * j + g]);
            dc[0] += d;
            dc[1] += d * a;
            dc[2] += d * b;
            dc[3] += d * a * b;
            if let Some(dx) = dx.as_deref_mut() {
                let dx = dx.as_mut_slice();
                dx[I * j + ia] += d * (k[1] + k[3] * b);
                dx[I * j + ib] += d * (k[2] + k[3] * a);
            }
        }
        // Through the coefficients to the table.
        table(
            g,
            [
                dc[0] - dc[1] - dc[2] + dc[3],
                dc[1] - dc[3],
                dc[2] - dc[3],
                dc[3],
            ],
        );
    }
}

impl<const I: usize, const O: usize, T: Real> Init for LogicLayer<I, O, T> {
    type Param = HeapMatrix<T, 16, O>;

    /// Scores drawn from a standard normal distribution (Box-Muller).
    fn init_with<R: Rng + ?Sized>(&self, rng: &mut R) -> Self::Param {
        HeapMatrix::from_fn(|_, _| normal(rng))
    }
}

impl<const I: usize, const O: usize, T: Real> LogicLayer<I, O, T> {
    /// The coefficients of each gate's relaxed function; each gate's probabilities are kept in
    /// `probs` when given (the reverse reads them instead of computing the softmax again).
    fn tables(
        p: &HeapMatrix<T, 16, O>,
        mut probs: Option<&mut HeapMatrix<T, 16, O>>,
    ) -> HeapMatrix<T, 4, O> {
        let mut c = HeapMatrix::<T, 4, O>::zeros();
        let (w, out) = (p.as_slice(), c.as_mut_slice());
        for g in 0..O {
            let pg = softmax(&w[16 * g..16 * (g + 1)]);
            out[4 * g..4 * (g + 1)].copy_from_slice(&coefficients(expected_table(&pg)));
            if let Some(probs) = probs.as_deref_mut() {
                probs.as_mut_slice()[16 * g..16 * (g + 1)].copy_from_slice(&pg);
            }
        }
        c
    }

    /// The reverse: the scores' change added into `dp`, and the input's change if `dx`;
    /// `probs` are the gates' probabilities kept by [`Self::tables`].
    fn back<const B: usize>(
        &self,
        probs: &HeapMatrix<T, 16, O>,
        c: &HeapMatrix<T, 4, O>,
        x: &HeapMatrix<T, I, B>,
        dy: &HeapMatrix<T, O, B>,
        dp: &mut HeapMatrix<T, 16, O>,
        dx: Option<&mut HeapMatrix<T, I, B>>,
    ) {
        let (pr, dw) = (probs.as_slice(), dp.as_mut_slice());
        back(&self.wires, c, x, dy, dx, |g, dtau| {
            // Through the softmax to the scores.
            let pg: &[T; 16] = pr[16 * g..16 * (g + 1)]
                .try_into()
                .expect("16 probabilities a gate");
            let tau = expected_table(pg);
            let mean = (0..4).fold(T::zero(), |s, j| s + tau[j] * dtau[j]);
            for (kf, &pk) in pg.iter().enumerate() {
                let mut along = T::zero();
                for (j, &dt) in dtau.iter().enumerate() {
                    if (kf >> j) & 1 == 1 {
                        along += dt;
                    }
                }
                dw[16 * g + kf] += pk * (along - mean);
            }
        });
    }
}

impl<const I: usize, const O: usize, const B: usize, T: Real> Para<HeapMatrix<T, I, B>>
    for LogicLayer<I, O, T>
{
    type Param = HeapMatrix<T, 16, O>;
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
        let mut probs = HeapMatrix::<T, 16, O>::zeros();
        let c = Self::tables(p, Some(&mut probs));
        let y = run(&self.wires, &c, &x);
        (y, move |dy: Self::Out, dp: &mut Self::Param| {
            let mut dx = HeapMatrix::<T, I, B>::zeros();
            self.back(&probs, &c, &x, &dy, dp, Some(&mut dx));
            dx
        })
    }

    fn vjp_params(
        &self,
        p: &Self::Param,
        x: HeapMatrix<T, I, B>,
    ) -> (Self::Out, impl FnOnce(Self::Out, &mut Self::Param)) {
        let mut probs = HeapMatrix::<T, 16, O>::zeros();
        let c = Self::tables(p, Some(&mut probs));
        let y = run(&self.wires, &c, &x);
        (y, move |dy: Self::Out, dp: &mut Self::Param| {
            self.back(&probs, &c, &x, &dy, dp, None);
        })
    }
}
