//! Losses as parametric lenses whose parameter is the label.
//!
//! A loss `B x Label -> L` runs forward to a scalar and back to the change of the prediction;
//! the label port is closed (labels get no change). Each loss validates its labels, so a
//! class index out of range is an error, never a silent clamp.

mod bce;
mod columns;
mod cross_entropy;
mod dot;
mod hinge;
mod mse;

pub use bce::BinaryCrossEntropy;
pub use columns::PerColumn;
pub use cross_entropy::SoftmaxCrossEntropy;
pub use dot::DotProduct;
pub use hinge::Hinge;
pub use mse::Mse;

use crate::{LabelError, Real};

/// A loss on predictions of type `Y`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a loss of predictions of type `{Y}`",
    label = "not a loss of `{Y}`",
    note = "if the loss and the optimizer are in each other's place: a `Learner` takes the loss third and the optimizer last, `Learner::new(model, params, SoftmaxCrossEntropy, Adam::new(0.01))`",
    note = "a loss's prediction type is the model's output type (shapes included)"
)]
pub trait Loss<Y: Clone> {
    /// The label (the loss's parameter).
    type Label;
    /// The scalar the loss is measured in.
    type Scalar: Real;

    /// Checks that `label` is one this loss can take for predictions of type `Y`.
    fn check_label(&self, label: &Self::Label) -> Result<(), LabelError>;

    /// [`Loss::check_label`] for a label that holds several examples' labels (see
    /// [`PerColumn`]): the error comes with the position of the example it is about.
    ///
    /// # Errors
    /// The first label this loss cannot take, with its position (0 for a single example).
    fn check_labels(&self, label: &Self::Label) -> Result<(), (usize, LabelError)> {
        self.check_label(label).map_err(|e| (0, e))
    }

    /// The loss value.
    fn loss(&self, y: &Y, label: &Self::Label) -> Self::Scalar {
        self.vjp(y.clone(), label).0
    }

    /// The loss value and its pullback: a change of the loss to a change of the prediction.
    fn vjp(&self, y: Y, label: &Self::Label) -> (Self::Scalar, impl FnOnce(Self::Scalar) -> Y);
}

/// The check of a class-index label against `N` classes, shared by the losses that take one.
pub(crate) fn check_class<const N: usize>(label: usize) -> Result<(), LabelError> {
    if label < N {
        Ok(())
    } else {
        Err(LabelError::OutOfRange { label, classes: N })
    }
}
