//! Seeded parameter initialisation.

use rand::{Rng, SeedableRng, rngs::StdRng};

/// Models that can create their initial parameters from a random source.
///
/// Composites initialise their parts in order from one generator, so a seed fixes every
/// weight of a model.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot draw its initial parameters: it has no `Init`",
    label = "a sub-model needs `Init`",
    note = "a `#[lens]` function's type has `Init` unless its parameters' types name a type parameter of the function (a scalar `T`); such a type is initialised at a scalar by `InitAt`: it is a sub-model of a `para!` model generic over that scalar (`struct M<T: Real>`), or write the function for one scalar type"
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

/// Models that create their initial parameters at a scalar type `S` that their own type does
/// not name: a `#[lens]` function generic over its scalar
/// (`fn affine<T: Real, const N: usize>(#[param] w: SVector<T, N>, ..)`) has one lens type
/// (`Affine<N>`) for every `T`, hence no one [`Init::Param`]; it implements `InitAt<T>` for
/// every `T` instead.
///
/// A `para!` model initialises its sub-models through this trait, at its scalar: its first
/// type parameter bounded by `Real` (`struct M<T: Real>`), else the first float type its
/// forward function's signature names, else its one type parameter. Every [`Init`] type
/// implements it at every `S`, ignoring `S`.
///
/// ```
/// use paralens::rand::{Rng, SeedableRng, rngs::StdRng};
/// use paralens::{InitAt, Real, lens};
/// use paralens::nalgebra::SVector;
///
/// #[lens(init = ones)]
/// fn affine<T: Real, const N: usize>(#[param] w: SVector<T, N>, x: SVector<T, N>) -> T {
///     w.dot(&x)
/// }
///
/// fn ones<T: Real, const N: usize, R: Rng + ?Sized>(_: &mut R) -> SVector<T, N> {
///     SVector::repeat(T::one())
/// }
///
/// let w: SVector<f32, 3> = InitAt::<f32>::init_at_with(&Affine::<3>, &mut StdRng::seed_from_u64(0));
/// assert_eq!(w, SVector::<f32, 3>::repeat(1.0));
/// let v: SVector<f64, 2> = InitAt::<f64>::init_at(&Affine::<2>, 7);
/// assert_eq!(v, SVector::<f64, 2>::repeat(1.0));
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot draw its initial parameters at the scalar `{S}`",
    label = "a sub-model needs `Init`, or `InitAt` at the model's scalar",
    note = "a `#[lens]` function generic over its scalar `T` is initialised at the scalar of the `para!` model it is a sub-model of: the model's first type parameter bounded by `Real`, else the first float type (`f32` or `f64`) its forward function's signature names (an alias is not read), else its one type parameter; make the model generic over its scalar (`struct M<T: Real>`, with a field `_scalar: PhantomData<T>` if no other names it), or write the function for one scalar type"
)]
pub trait InitAt<S> {
    /// The parameter type created.
    type Param;

    /// Draws the parameters from `rng` (named apart from [`Init::init_with`], so that a
    /// glob import of both traits leaves a model's `init_with` one method).
    fn init_at_with<R: Rng + ?Sized>(&self, rng: &mut R) -> Self::Param;

    /// Draws the parameters from a generator seeded with `seed` (deterministic).
    fn init_at(&self, seed: u64) -> Self::Param {
        self.init_at_with(&mut StdRng::seed_from_u64(seed))
    }

    /// As [`Init::layout`].
    #[cfg(feature = "std")]
    fn layout_at(&self, path: &str, layout: &mut crate::checkpoint::Layout) {
        let _ = (path, layout);
    }
}

impl<M: Init + ?Sized, S> InitAt<S> for M {
    type Param = M::Param;
    #[inline]
    fn init_at_with<R: Rng + ?Sized>(&self, rng: &mut R) -> Self::Param {
        Init::init_with(self, rng)
    }
    #[cfg(feature = "std")]
    fn layout_at(&self, path: &str, layout: &mut crate::checkpoint::Layout) {
        Init::layout(self, path, layout);
    }
}

/// The scalar of a `para!` model that has none the rules of [`InitAt`] find (no type
/// parameter bounded by `Real`, no float type in its forward function's signature, and not
/// one type parameter): no lens implements `InitAt` at it, so a sub-model generic over its
/// scalar is refused with `InitAt`'s note on what to write.
#[doc(hidden)]
#[derive(Clone, Copy, Debug)]
pub enum ModelScalarNotFound {}
