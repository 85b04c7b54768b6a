//! Reparametrisation: a lens on the parameter port.

use crate::{Lens, Para, Tangent};
use core::marker::PhantomData;

/// The model `m` whose parameter is computed from `q: Q` by the lens `r: Q -> P`.
///
/// The reverse sends the parameter change of `m` back through `r`. Because `m`'s pullback
/// borrows the parameter it ran with, the reverse recomputes `m`'s forward at `r(q)` (one
/// extra forward pass); [`crate::Share`] covers weight sharing without that cost.
///
/// ```
/// use paralens::{Lens, Para, ParaExt, Dense};
/// use paralens::nalgebra::SVector;
///
/// // Parametrise a 1x1 layer by a single scale factor s: w = s, b = 0... via a lens.
/// struct Scale;
/// impl Lens<f64> for Scale {
///     type Out = paralens::DenseParams<f64, 1, 1>;
///     fn apply_vjp(&self, s: f64) -> (Self::Out, impl FnOnce(Self::Out) -> f64) {
///         let p = paralens::DenseParams { w: Box::new([[s]].into()), b: SVector::zeros() };
///         (p, |d: Self::Out| d.w[(0, 0)])
///     }
/// }
/// let m = Dense::<1, 1, f64>::new().reparam::<_, f64>(Scale);
/// let (y, pullback) = m.vjp(&3.0, SVector::<f64, 1>::new(2.0));
/// assert_eq!(y[0], 6.0);
/// let mut ds = 0.0;
/// pullback(SVector::<f64, 1>::new(1.0), &mut ds);
/// assert_eq!(ds, 2.0); // d(s x)/ds = x
/// ```
pub struct Reparam<M, R, Q> {
    /// The model.
    pub model: M,
    /// The reparametrisation `Q -> M::Param`.
    pub r: R,
    _q: PhantomData<fn(Q) -> Q>,
}

impl<M, R, Q> Reparam<M, R, Q> {
    /// Reparametrises `model` through `r`.
    #[must_use]
    pub const fn new(model: M, r: R) -> Self {
        Self {
            model,
            r,
            _q: PhantomData,
        }
    }
}

impl<M: Clone, R: Clone, Q> Clone for Reparam<M, R, Q> {
    fn clone(&self) -> Self {
        Self::new(self.model.clone(), self.r.clone())
    }
}

impl<X, Q, M, R> Para<X> for Reparam<M, R, Q>
where
    X: Clone,
    Q: Tangent,
    M: Para<X>,
    M::Param: Tangent,
    R: Lens<Q, Out = M::Param>,
{
    type Param = Q;
    type Out = M::Out;

    #[inline]
    fn forward(&self, q: &Q, x: X) -> Self::Out {
        let p = self.r.apply(q.clone());
        self.model.forward(&p, x)
    }

    #[inline]
    fn vjp(&self, q: &Q, x: X) -> (Self::Out, impl FnOnce(Self::Out, &mut Q) -> X) {
        let (p, pull_r) = self.r.apply_vjp(q.clone());
        let y = self.model.forward(&p, x.clone());
        (
            y,
            #[inline(always)]
            move |dy, dq: &mut Q| {
                // The model's change is on `P`; the reparametrisation pulls it back to `Q`.
                let (_, pull_m) = self.model.vjp(&p, x);
                let mut dp = M::Param::zeros();
                let dx = pull_m(dy, &mut dp);
                dq.accumulate(&pull_r(dp));
                dx
            },
        )
    }
}
