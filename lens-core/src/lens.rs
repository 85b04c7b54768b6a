//! The lens: a forward map together with its reverse derivative.

/// A lens on inputs of type `X`: a forward map `X -> Out` and its reverse derivative.
///
/// The methods are named `apply`/`apply_vjp` (not `forward`/`vjp` as on [`crate::Para`])
/// because every lens is also a `Para` with parameter `()`, and both traits are usually in
/// scope: distinct names keep `Relu.apply(x)` unambiguous.
///
/// `apply_vjp` runs the forward map and returns the output with its *pullback*: a closure that
/// takes a change of the output and returns the change of the input (for smooth maps the
/// vector-Jacobian product `J(x)^T d`). Values the reverse needs are captured by the closure,
/// computed once.
///
/// ```
/// use paralens::{Lens, Sigmoid};
///
/// let (y, pullback) = Sigmoid.apply_vjp(0.0_f64);
/// assert_eq!(y, 0.5);
/// assert_eq!(pullback(1.0), 0.25); // sigma'(0) = 1/4
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a lens on inputs of type `{X}`",
    label = "`{Self}` cannot take a `{X}`",
    note = "a lens's input type must be exactly the output type of the stage before it"
)]
pub trait Lens<X> {
    /// The output type (its own change space).
    type Out;

    /// The forward map.
    fn apply(&self, x: X) -> Self::Out {
        self.apply_vjp(x).0
    }

    /// The forward map together with its pullback (the reverse derivative at `x`).
    fn apply_vjp(&self, x: X) -> (Self::Out, impl FnOnce(Self::Out) -> X);

    /// The reverse derivative `R[f](x, d)`.
    fn reverse(&self, x: X, d: Self::Out) -> X {
        let (_, pullback) = self.apply_vjp(x);
        pullback(d)
    }
}

/// Makes lenses (no parameters) usable wherever a [`crate::Para`] is expected, with the
/// unit parameter `()`; also gives them [`crate::Init`]. Each type is preceded by its
/// generic parameters in brackets: `lens_is_para!([] Relu, [T] LeakyRelu<T>)`.
macro_rules! lens_is_para {
    ($([$($g:tt)*] $ty:ty),* $(,)?) => {$(
        impl<X, $($g)*> $crate::Para<X> for $ty
        where
            $ty: $crate::Lens<X>,
        {
            type Param = ();
            type Out = <$ty as $crate::Lens<X>>::Out;

            #[inline]
            fn forward(&self, _p: &(), x: X) -> Self::Out {
                $crate::Lens::apply(self, x)
            }

            #[inline]
            fn vjp(
                &self,
                _p: &(),
                x: X,
            ) -> (Self::Out, impl FnOnce(Self::Out, &mut ()) -> X) {
                let (y, pullback) = $crate::Lens::apply_vjp(self, x);
                (y, #[inline(always)] move |d, _: &mut ()| pullback(d))
            }
        }

        impl<$($g)*> $crate::Init for $ty {
            type Param = ();
            fn init_with<R: rand::Rng + ?Sized>(&self, _rng: &mut R) {}
        }
    )*};
}
pub(crate) use lens_is_para;
