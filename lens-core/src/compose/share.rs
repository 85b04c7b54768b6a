//! Weight sharing: sequential composition reparametrised by copy.

use crate::{Init, Para, Tangent};
use rand::Rng;

/// `a` then `b` where both stages use the same parameter `P`.
///
/// This is `a.then(b)` reparametrised by the copy map `P -> (P, P)`, whose reverse adds:
/// the parameter change is the sum of the changes from both uses.
///
/// ```
/// use paralens::{Dense, Init, Para, ParaExt, Tangent};
/// use paralens::nalgebra::SVector;
///
/// // The same 2x2 layer applied twice.
/// let twice = Dense::<2, 2, f64>::new().share(Dense::<2, 2, f64>::new());
/// let p = Dense::<2, 2, f64>::new().init(3);
/// let x = SVector::<f64, 2>::new(1.0, -1.0);
/// let y = twice.forward(&p, x);
/// let w = *p.w; // the weights are boxed
/// assert_eq!(y, w * (w * x + p.b) + p.b);
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct Share<A, B> {
    /// The first use of the shared parameter.
    pub a: A,
    /// The second use of the shared parameter.
    pub b: B,
}

impl<A, B> Share<A, B> {
    /// Composes `a` then `b` with one shared parameter.
    #[must_use]
    pub const fn new(a: A, b: B) -> Self {
        Self { a, b }
    }
}

impl<X, P, A, B> Para<X> for Share<A, B>
where
    P: Tangent,
    A: Para<X, Param = P>,
    B: Para<A::Out, Param = P>,
{
    type Param = P;
    type Out = B::Out;

    #[inline]
    fn forward(&self, p: &P, x: X) -> Self::Out {
        self.b.forward(p, self.a.forward(p, x))
    }

    #[inline]
    fn vjp(&self, p: &P, x: X) -> (Self::Out, impl FnOnce(Self::Out, &mut P) -> X) {
        let (y, pull_a) = self.a.vjp(p, x);
        let (z, pull_b) = self.b.vjp(p, y);
        (
            z,
            // Both uses add their change into the one buffer: sharing is adding.
            #[inline(always)]
            move |dz, dp: &mut P| {
                let dy = pull_b(dz, dp);
                pull_a(dy, dp)
            },
        )
    }

    #[inline]
    fn vjp_params(&self, p: &P, x: X) -> (Self::Out, impl FnOnce(Self::Out, &mut P)) {
        let (y, pull_a) = self.a.vjp_params(p, x);
        let (z, pull_b) = self.b.vjp(p, y);
        (
            z,
            #[inline(always)]
            move |dz, dp: &mut P| {
                let dy = pull_b(dz, dp);
                pull_a(dy, dp);
            },
        )
    }
}

/// The shared parameter is initialised by the first stage.
impl<A: Init, B> Init for Share<A, B> {
    type Param = A::Param;
    fn init_with<R: Rng + ?Sized>(&self, rng: &mut R) -> Self::Param {
        self.a.init_with(rng)
    }
    #[cfg(feature = "std")]
    fn layout(&self, path: &str, layout: &mut crate::checkpoint::Layout) {
        self.a.layout(path, layout);
    }
}
