//! Seeded parameter initialisation.

use rand::{Rng, SeedableRng, rngs::StdRng};

/// Models that can create their initial parameters from a random source.
///
/// Composites initialise their parts in order from one generator, so a seed fixes every
/// weight of a model.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot draw its initial parameters: it has no `Init`",
    label = "a sub-model needs `Init`",
    note = "a `#[lens]` function's type has `Init` unless its parameters' types name a type parameter of the function (a scalar `T`): write the function for one scalar type, or implement `Init` for the lens type at the sizes you use"
)]
pub trait Init {
    /// The parameter type created.
    type Param;

    /// Draws the parameters from `rng`.
    fn init_with<R: Rng + ?Sized>(&self, rng: &mut R) -> Self::Param;

    /// Draws the parameters from a generator seeded with `seed` (deterministic).
    fn init(&self, seed: u64) -> Self::Param {
        self.init_with(&mut StdRng::seed_from_u64(seed))
    }

    /// Records in `layout` how the parameter arrays under `path` are stored in a checkpoint
    /// when their type does not say it (a convolution's kernel, flat in memory, is stored with
    /// its `[out, in, k, k]` shape). The default records nothing: every array is stored as its
    /// type says. Composites pass each part the path its parameters have.
    #[cfg(feature = "std")]
    fn layout(&self, path: &str, layout: &mut crate::checkpoint::Layout) {
        let _ = (path, layout);
    }
}

impl<M: Init + ?Sized> Init for &M {
    type Param = M::Param;
    fn init_with<R: Rng + ?Sized>(&self, rng: &mut R) -> Self::Param {
        (**self).init_with(rng)
    }
    #[cfg(feature = "std")]
    fn layout(&self, path: &str, layout: &mut crate::checkpoint::Layout) {
        (**self).layout(path, layout);
    }
}
