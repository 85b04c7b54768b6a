//! The shape every learner shares, smooth or Boolean.

/// A learner: one training step on an input and its target, and the model's output at the
/// current parameters. The smooth [`crate::Learner`] (target: the loss's label) and the
/// Boolean learners of `lens-circuits` (target: the wanted output bits and the lanes that
/// hold examples; `X` may be unsized, as the netlist learner's slice of data words)
/// implement it, so a training loop is written once for both. `output` takes the learner
/// mutably: a learner may evaluate in buffers it owns (the netlist learner does).
///
/// ```
/// use paralens::{optim::Sgd, Dense, Init, Learn, Learner, Mse};
/// use paralens::nalgebra::SVector;
///
/// /// One pass over the data; the reports of the steps.
/// fn epoch<L: Learn<X>, X>(learner: &mut L, data: &[(X, L::Target)]) -> Vec<L::Report> {
///     data.iter()
///         .map(|(x, t)| learner.learn(x, t).unwrap_or_else(|e| panic!("{e:?}")))
///         .collect()
/// }
///
/// let model = Dense::<1, 1, f64>::new();
/// let mut learner = Learner::new(model, model.init(0), Mse, Sgd::new(0.1));
/// let data: Vec<_> = (0..8)
///     .map(|i| (SVector::<f64, 1>::new(i as f64 / 8.0), SVector::<f64, 1>::new(i as f64 / 4.0)))
///     .collect();
/// let first = epoch(&mut learner, &data);
/// for _ in 0..200 {
///     epoch(&mut learner, &data);
/// }
/// let last = epoch(&mut learner, &data);
/// assert!(last.iter().sum::<f64>() < first.iter().sum::<f64>() / 100.0);
/// assert!((learner.output(&SVector::<f64, 1>::new(0.5))[0] - 1.0).abs() < 0.05);
/// ```
pub trait Learn<X: ?Sized> {
    /// What a step learns from besides the input (a label, or target bits).
    type Target;
    /// The model's output.
    type Out;
    /// What a step reports (the loss, or the wrong bits and flips).
    type Report;
    /// Why a step was refused.
    type Error: core::fmt::Debug;

    /// One training step.
    ///
    /// # Errors
    /// The learner's own (a label out of range, a non-finite loss, ...).
    fn learn(&mut self, x: &X, target: &Self::Target) -> Result<Self::Report, Self::Error>;

    /// The model's output at the current parameters.
    fn output(&mut self, x: &X) -> Self::Out;
}
