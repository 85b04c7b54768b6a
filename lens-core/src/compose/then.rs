//! Sequential composition.

use crate::{Init, Para};
use rand::Rng;

/// `a` then `b`: forward left to right, reverse right to left; parameter `(Pa, Pb)`.
///
/// ```
/// use paralens::{Dense, Init, Para, ParaExt, Relu};
/// use paralens::nalgebra::SVector;
///
/// let mlp = Dense::<4, 8>::new().then(Relu).then(Dense::<8, 3>::new());
/// let p = mlp.init(0);
/// let y: SVector<f32, 3> = mlp.forward(&p, SVector::zeros());
/// assert_eq!(y, p.1.b); // a zero input gives the last bias
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct Then<A, B> {
    /// The first stage.
    pub a: A,
    /// The second stage.
    pub b: B,
}

impl<A, B> Then<A, B> {
    /// Composes `a` then `b`.
    #[must_use]
    pub const fn new(a: A, b: B) -> Self {
        Self { a, b }
    }
}

impl<X, A, B> Para<X> for Then<A, B>
where
    A: Para<X>,
    B: Para<A::Out>,
{
    type Param = (A::Param, B::Param);
    type Out = B::Out;

    #[inline]
    fn forward(&self, p: &Self::Param, x: X) -> Self::Out {
        self.b.forward(&p.1, self.a.forward(&p.0, x))
    }

    #[inline]
    fn vjp(
        &self,
        p: &Self::Param,
        x: X,
    ) -> (Self::Out, impl FnOnce(Self::Out, &mut Self::Param) -> X) {
        let (y, pull_a) = self.a.vjp(&p.0, x);
        let (z, pull_b) = self.b.vjp(&p.1, y);
        (
            z,
            #[inline(always)]
            move |dz, dp: &mut Self::Param| {
                let dy = pull_b(dz, &mut dp.1);
                pull_a(dy, &mut dp.0)
            },
        )
    }

    #[inline]
    fn vjp_params(
        &self,
        p: &Self::Param,
        x: X,
    ) -> (Self::Out, impl FnOnce(Self::Out, &mut Self::Param)) {
        // Only the first stage sees the input.
        let (y, pull_a) = self.a.vjp_params(&p.0, x);
        let (z, pull_b) = self.b.vjp(&p.1, y);
        (
            z,
            #[inline(always)]
            move |dz, dp: &mut Self::Param| {
                let dy = pull_b(dz, &mut dp.1);
                pull_a(dy, &mut dp.0);
            },
        )
    }
}

impl<A: Init, B: Init> Init for Then<A, B> {
    type Param = (A::Param, B::Param);
    fn init_with<R: Rng + ?Sized>(&self, rng: &mut R) -> Self::Param {
        let pa = self.a.init_with(rng);
        (pa, self.b.init_with(rng))
    }
    #[cfg(feature = "std")]
    fn layout(&self, path: &str, layout: &mut crate::checkpoint::Layout) {
        self.a.layout(&crate::checkpoint::join(path, "0"), layout);
        self.b.layout(&crate::checkpoint::join(path, "1"), layout);
    }
}
