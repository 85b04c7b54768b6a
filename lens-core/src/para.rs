//! The parametric lens: a lens with a parameter port.

/// A parametric lens `P x X -> Out` with its reverse derivative.
///
/// The pullback takes the output's change and a parameter-change buffer: it *adds* the
/// parameter's change into the buffer and returns the input's change. The buffer belongs to
/// the caller (a [`crate::Learner`] allocates one, once), so a large parameter change is
/// never moved or returned by value, and a parameter used twice (weight sharing) simply gets
/// both changes added. Layers, models and composites of them are `Para`s; a plain
/// [`crate::Lens`] is a `Para` with parameter `()`.
///
/// ```
/// use paralens::{Dense, DenseParams, Init, Para, Tangent};
/// use paralens::nalgebra::SVector;
///
/// let layer = Dense::<3, 2, f64>::new();
/// let p = layer.init(1);
/// let x = SVector::<f64, 3>::new(1.0, 2.0, 3.0);
/// let (y, pullback) = layer.vjp(&p, x);
/// let mut dp: DenseParams<f64, 3, 2> = Tangent::zeros();
/// let dx = pullback(SVector::<f64, 2>::new(1.0, 0.0), &mut dp);
/// assert_eq!(y, *p.w * x + p.b);
/// assert_eq!(dp.b, SVector::<f64, 2>::new(1.0, 0.0)); // d(Wx + b)/db = I
/// assert_eq!(dx, p.w.transpose() * SVector::<f64, 2>::new(1.0, 0.0));
/// // The same through the convenience that starts from a zero change:
/// assert_eq!(layer.changes(&p, x, SVector::<f64, 2>::new(1.0, 0.0)), (dp, dx));
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot take an input of type `{X}`",
    label = "`{Self}` is not a parametric lens on `{X}`",
    note = "in a composite, each stage's input type must be exactly the previous stage's output type (shapes included)",
    note = "a layer written without its scalar (`Dense<3, 3>`) is `f32`; give it for `f64` (`Dense<3, 3, f64>`)",
    note = "a `#[lens]` function composes through its lens type, named in CamelCase: `.then(Relu)` for `fn relu`, not `.then(relu)`"
)]
pub trait Para<X> {
    /// The parameter (and parameter-change) type.
    type Param;
    /// The output type.
    type Out;

    /// The forward map at parameter `p`.
    fn forward(&self, p: &Self::Param, x: X) -> Self::Out {
        self.vjp(p, x).0
    }

    /// The forward map and its pullback, which adds the parameter change into the buffer it
    /// is given and returns the input change.
    fn vjp(
        &self,
        p: &Self::Param,
        x: X,
    ) -> (Self::Out, impl FnOnce(Self::Out, &mut Self::Param) -> X);

    /// The forward map and a pullback onto the parameter only, for a stage whose input change
    /// nobody wants (the first layer of a model in a learner: the input is data). The default
    /// runs [`Para::vjp`]'s pullback and drops the input change; layers whose input change
    /// costs a product (dense, convolutions) skip computing it, and composites pass the
    /// request on to their first stage.
    fn vjp_params(
        &self,
        p: &Self::Param,
        x: X,
    ) -> (Self::Out, impl FnOnce(Self::Out, &mut Self::Param)) {
        let (y, pullback) = self.vjp(p, x);
        (
            y,
            #[inline(always)]
            move |dy, dp: &mut Self::Param| {
                let _ = pullback(dy, dp);
            },
        )
    }

    /// The reverse derivative at `(p, x)` applied to `dy`: `(parameter change, input change)`,
    /// the parameter change starting from zero. A convenience for tests and small models: it
    /// builds the change by value (a learner keeps one buffer instead).
    fn changes(&self, p: &Self::Param, x: X, dy: Self::Out) -> (Self::Param, X)
    where
        Self::Param: crate::Tangent,
    {
        let mut dp = <Self::Param as crate::Tangent>::zeros();
        let dx = self.vjp(p, x).1(dy, &mut dp);
        (dp, dx)
    }
}

/// References to parametric lenses are parametric lenses (so composites can borrow models).
impl<X, M: Para<X> + ?Sized> Para<X> for &M {
    type Param = M::Param;
    type Out = M::Out;

    #[inline]
    fn forward(&self, p: &Self::Param, x: X) -> Self::Out {
        (**self).forward(p, x)
    }

    #[inline]
    fn vjp(
        &self,
        p: &Self::Param,
        x: X,
    ) -> (Self::Out, impl FnOnce(Self::Out, &mut Self::Param) -> X) {
        (**self).vjp(p, x)
    }

    #[inline]
    fn vjp_params(
        &self,
        p: &Self::Param,
        x: X,
    ) -> (Self::Out, impl FnOnce(Self::Out, &mut Self::Param)) {
        (**self).vjp_params(p, x)
    }
}
