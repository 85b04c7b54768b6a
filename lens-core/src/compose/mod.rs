//! Composition of parametric lenses: zero-cost generic types.
//!
//! | combinator | forward | parameter | reverse |
//! |---|---|---|---|
//! | [`Then`] `a.then(b)` | `b(a(x))` | `(Pa, Pb)` | `b`'s pullback, then `a`'s |
//! | [`Par`] `a.par(b)` | `(a(x1), b(x2))` | `(Pa, Pb)` | both, side by side |
//! | [`Share`] `a.share(b)` | `b(a(x))`, one weight | `P` | parameter changes add |
//! | [`Reparam`] `m.reparam(r)` | `m(r(q), x)` | `Q` | `r`'s pullback of `m`'s |
//! | [`Batch`] `m.batch::<B>()` | `m` on each of `B` inputs | `P` | parameter changes add |
//!
//! Shapes are checked by the compiler: composing stages whose types do not meet is a
//! compile error naming the stage that cannot take its input.

mod batch;
mod par;
mod reparam;
mod share;
mod then;

pub use batch::Batch;
pub use par::Par;
pub use reparam::Reparam;
pub use share::Share;
pub use then::Then;

/// Combinator methods available on every value (meaningful on [`crate::Para`]s).
pub trait ParaExt: Sized {
    /// Sequential composition: `self` then `next`; parameters pair up as `(self, next)`.
    fn then<B>(self, next: B) -> Then<Self, B> {
        Then::new(self, next)
    }

    /// Parallel composition on pairs of inputs.
    fn par<B>(self, other: B) -> Par<Self, B> {
        Par::new(self, other)
    }

    /// Sequential composition where both stages use one parameter (weight sharing).
    fn share<B>(self, next: B) -> Share<Self, B> {
        Share::new(self, next)
    }

    /// Reparametrises through the lens `r: Q -> Param`.
    fn reparam<R, Q>(self, r: R) -> Reparam<Self, R, Q> {
        Reparam::new(self, r)
    }

    /// Runs the model on `B` examples with one parameter.
    fn batch<const B: usize>(self) -> Batch<Self, B> {
        Batch::new(self)
    }
}

impl<M> ParaExt for M {}
