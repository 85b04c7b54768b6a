//! Batching: one model with one parameter, run on `B` examples.

use crate::{Init, Para, Tangent};
use rand::Rng;

/// The model `m` run on `[X; B]` with one parameter; the reverse sums the parameter changes
/// (every example's pullback adds into the one buffer).
///
/// ```
/// use paralens::{Dense, Init, Para, ParaExt};
/// use paralens::nalgebra::SVector;
///
/// let layer = Dense::<2, 1, f64>::new();
/// let p = layer.init(5);
/// let xs = [SVector::<f64, 2>::new(1.0, 0.0), SVector::<f64, 2>::new(0.0, 2.0)];
/// let batched = layer.batch::<2>();
/// let (dp, _) = batched.changes(&p, xs, [SVector::<f64, 1>::new(1.0); 2]);
/// assert_eq!(*dp.w, paralens::nalgebra::SMatrix::<f64, 1, 2>::new(1.0, 2.0)); // sum of dy x^T
/// assert_eq!(dp.b[0], 2.0);
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct Batch<M, const B: usize> {
    /// The model run on each example.
    pub model: M,
}

impl<M, const B: usize> Batch<M, B> {
    /// Batches `model` over `B` examples.
    #[must_use]
    pub const fn new(model: M) -> Self {
        Self { model }
    }
}

impl<X, M, const B: usize> Para<[X; B]> for Batch<M, B>
where
    M: Para<X>,
    M::Out: Tangent,
{
    type Param = M::Param;
    type Out = [M::Out; B];

    #[inline]
    fn forward(&self, p: &M::Param, xs: [X; B]) -> Self::Out {
        xs.map(|x| self.model.forward(p, x))
    }

    #[inline]
    fn vjp(
        &self,
        p: &M::Param,
        xs: [X; B],
    ) -> (Self::Out, impl FnOnce(Self::Out, &mut M::Param) -> [X; B]) {
        let mut ys: [M::Out; B] = Tangent::zeros();
        let mut i = 0;
        let pulls = xs.map(|x| {
            let (y, pull) = self.model.vjp(p, x);
            ys[i] = y;
            i += 1;
            pull
        });
        (
            ys,
            #[inline(always)]
            move |dys: [M::Out; B], dp: &mut M::Param| {
                let mut pairs = pulls.into_iter().zip(dys);
                core::array::from_fn(|_| {
                    // from_fn calls this exactly B times, and both iterators have length B.
                    let (pull, dy) = pairs.next().expect("batch of B pullbacks");
                    // Every example adds its change into the one buffer.
                    pull(dy, dp)
                })
            },
        )
    }

    #[inline]
    fn vjp_params(
        &self,
        p: &M::Param,
        xs: [X; B],
    ) -> (Self::Out, impl FnOnce(Self::Out, &mut M::Param)) {
        let mut ys: [M::Out; B] = Tangent::zeros();
        let mut i = 0;
        let pulls = xs.map(|x| {
            let (y, pull) = self.model.vjp_params(p, x);
            ys[i] = y;
            i += 1;
            pull
        });
        (
            ys,
            #[inline(always)]
            move |dys: [M::Out; B], dp: &mut M::Param| {
                for (pull, dy) in pulls.into_iter().zip(dys) {
                    pull(dy, dp);
                }
            },
        )
    }
}

impl<M: Init, const B: usize> Init for Batch<M, B> {
    type Param = M::Param;
    fn init_with<R: Rng + ?Sized>(&self, rng: &mut R) -> Self::Param {
        self.model.init_with(rng)
    }
    #[cfg(feature = "std")]
    fn layout(&self, path: &str, layout: &mut crate::checkpoint::Layout) {
        self.model.layout(path, layout);
    }
}
