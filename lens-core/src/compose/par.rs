//! Parallel composition.

use crate::{Init, Para};
use rand::Rng;

/// `a` beside `b` on pairs: `(x1, x2) -> (a(x1), b(x2))`; parameter `(Pa, Pb)`.
///
/// ```
/// use paralens::{Para, ParaExt, Relu, Sigmoid};
///
/// let both = Relu.par(Sigmoid);
/// let (y, pullback) = both.vjp(&((), ()), (-1.0_f64, 0.0_f64));
/// assert_eq!(y, (0.0, 0.5));
/// assert_eq!(pullback((1.0, 1.0), &mut ((), ())), (0.0, 0.25));
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct Par<A, B> {
    /// The stage on the first component.
    pub a: A,
    /// The stage on the second component.
    pub b: B,
}

impl<A, B> Par<A, B> {
    /// Puts `a` beside `b`.
    #[must_use]
    pub const fn new(a: A, b: B) -> Self {
        Self { a, b }
    }
}

impl<X1, X2, A, B> Para<(X1, X2)> for Par<A, B>
where
    A: Para<X1>,
    B: Para<X2>,
{
    type Param = (A::Param, B::Param);
    type Out = (A::Out, B::Out);

    #[inline]
    fn forward(&self, p: &Self::Param, x: (X1, X2)) -> Self::Out {
        (self.a.forward(&p.0, x.0), self.b.forward(&p.1, x.1))
    }

    #[inline]
    fn vjp(
        &self,
        p: &Self::Param,
        x: (X1, X2),
    ) -> (
        Self::Out,
        impl FnOnce(Self::Out, &mut Self::Param) -> (X1, X2),
    ) {
        let (y1, pull_a) = self.a.vjp(&p.0, x.0);
        let (y2, pull_b) = self.b.vjp(&p.1, x.1);
        (
            (y1, y2),
            #[inline(always)]
            move |(d1, d2), dp: &mut Self::Param| (pull_a(d1, &mut dp.0), pull_b(d2, &mut dp.1)),
        )
    }

    #[inline]
    fn vjp_params(
        &self,
        p: &Self::Param,
        x: (X1, X2),
    ) -> (Self::Out, impl FnOnce(Self::Out, &mut Self::Param)) {
        let (y1, pull_a) = self.a.vjp_params(&p.0, x.0);
        let (y2, pull_b) = self.b.vjp_params(&p.1, x.1);
        (
            (y1, y2),
            #[inline(always)]
            move |(d1, d2), dp: &mut Self::Param| {
                pull_a(d1, &mut dp.0);
                pull_b(d2, &mut dp.1);
            },
        )
    }
}

impl<A: Init, B: Init> Init for Par<A, B> {
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
