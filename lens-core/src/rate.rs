//! The learning rate as a lens `(L, L') -> (1, 1)`.

use crate::{Lens, Real};

/// The learning-rate lens: its forward discards the loss, its backward emits `-eta` as the
/// change of the loss. Pulled back through loss and model, that change becomes `-eta` times
/// the gradient: a descent direction, which the optimizer then puts onto the parameters.
///
/// ```
/// use paralens::{LearningRate, Lens};
/// let (unit, pullback) = LearningRate(0.1_f64).apply_vjp(3.7);
/// assert_eq!(unit, ());
/// assert_eq!(pullback(()), -0.1);
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LearningRate<T>(pub T);

impl<T: Real> Lens<T> for LearningRate<T> {
    type Out = ();
    #[inline]
    fn apply(&self, _loss: T) {}
    #[inline]
    fn apply_vjp(&self, _loss: T) -> ((), impl FnOnce(()) -> T) {
        let eta = self.0;
        (
            (),
            #[inline(always)]
            move |()| -eta,
        )
    }
}
