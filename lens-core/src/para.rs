//! The parametric lens: a lens with a parameter port.

/// A parametric lens `P x X -> Out` with its reverse derivative.
///
/// The pullback returns the change of the parameter and of the input. Layers, models and
/// composites of them are `Para`s; a plain [`crate::Lens`] is a `Para` with parameter `()`.
///
/// ```
/// use lens_core::{Dense, Init, Para};
/// use nalgebra::SVector;
///
/// let layer = Dense::<3, 2, f64>::new();
/// let p = layer.init(1);
/// let x = SVector::<f64, 3>::new(1.0, 2.0, 3.0);
/// let (y, pullback) = layer.vjp(&p, x);
/// let (dp, dx) = pullback(SVector::<f64, 2>::new(1.0, 0.0));
/// assert_eq!(y, p.w * x + p.b);
/// assert_eq!(dp.b, SVector::<f64, 2>::new(1.0, 0.0)); // d(Wx + b)/db = I
/// assert_eq!(dx, p.w.transpose() * SVector::<f64, 2>::new(1.0, 0.0));
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot take an input of type `{X}`",
    label = "`{Self}` is not a parametric lens on `{X}`",
    note = "in a composite, each stage's input type must be exactly the previous stage's output type (shapes included)"
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

    /// The forward map and its pullback, which returns `(parameter change, input change)`.
    fn vjp(&self, p: &Self::Param, x: X)
    -> (Self::Out, impl FnOnce(Self::Out) -> (Self::Param, X));
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
    ) -> (Self::Out, impl FnOnce(Self::Out) -> (Self::Param, X)) {
        (**self).vjp(p, x)
    }
}
