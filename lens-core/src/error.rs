//! Errors of learning steps and labels.

use core::fmt;

/// A label that a loss cannot take.
#[derive(Clone, Debug, PartialEq)]
pub enum LabelError {
    /// A class index not below the number of classes.
    OutOfRange {
        /// The label given.
        label: usize,
        /// The number of classes of the model's output.
        classes: usize,
    },
    /// A target value outside the range the loss accepts (e.g. not in `[0, 1]`), or not finite.
    BadTarget {
        /// The offending value.
        value: f64,
        /// What the loss accepts.
        expected: &'static str,
    },
}

impl fmt::Display for LabelError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::OutOfRange { label, classes } => write!(
                f,
                "label {label} is out of range: the model has {classes} classes (0..{classes})"
            ),
            Self::BadTarget { value, expected } => {
                write!(f, "target {value} is invalid: expected {expected}")
            }
        }
    }
}

impl core::error::Error for LabelError {}

/// Why a learning step was refused. Parameters and optimizer state are left unchanged.
///
/// Not exhaustive: a `match` needs a `_` arm, so that a new refusal is not a breaking change.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum StepError {
    /// A label the loss cannot take, at example `index` of the batch.
    Label {
        /// Position of the example in the batch (0 for a single step).
        index: usize,
        /// What is wrong with it.
        error: LabelError,
    },
    /// A label the loss cannot take, in one shard of a [`crate::ShardedLearner`]'s step.
    ShardLabel {
        /// The shard (from 0).
        shard: usize,
        /// Position of the example in the shard's label (0 for a shard of one example).
        index: usize,
        /// What is wrong with it.
        error: LabelError,
    },
    /// The loss came out NaN or infinite.
    NonFiniteLoss {
        /// The loss value.
        loss: f64,
    },
    /// A parameter change came out NaN or infinite.
    NonFiniteGradient,
    /// A setting of the optimizer with which it cannot train (a learning rate that is NaN or
    /// negative, a decay outside `[0, 1)`, a zero `eps`): checked before every step, since
    /// the adaptive optimizers apply their step size inside the update, where the check of
    /// the change does not see it.
    Setting(BadSetting),
    /// The batch does not have the size the step was compiled for.
    BatchSize {
        /// The batch size `B` of the step.
        expected: usize,
        /// The number of inputs given.
        inputs: usize,
        /// The number of labels given.
        labels: usize,
    },
    /// A mean over no examples was asked for (an empty evaluation set): it is not a number,
    /// and a made-up zero would look like a perfect loss.
    NoExamples,
    /// A setting of [`crate::train::Fit`] with which the loop cannot train (a batch of 0
    /// examples, a patience of 0 epochs).
    FitSetting {
        /// The field of `Fit` (`batch`, `patience`).
        name: &'static str,
        /// Its value.
        value: usize,
        /// The values it may take, in words.
        expected: &'static str,
    },
}

impl fmt::Display for StepError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Label { index, error } => write!(f, "example {index}: {error}"),
            Self::ShardLabel {
                shard,
                index,
                error,
            } => write!(f, "shard {shard}, example {index}: {error}"),
            Self::NonFiniteLoss { loss } => write!(
                f,
                "the loss is {loss}: the step was not applied (lower the learning rate or check the inputs for NaN)"
            ),
            Self::NonFiniteGradient => write!(
                f,
                "a parameter change is not finite: the step was not applied (lower the learning rate or check the inputs for NaN)"
            ),
            Self::Setting(bad) => write!(f, "{bad}: the step was not applied"),
            Self::BatchSize { inputs, labels, .. } if inputs != labels => write!(
                f,
                "{inputs} inputs and {labels} labels: each input takes one label"
            ),
            Self::BatchSize {
                expected, inputs, ..
            } => write!(
                f,
                "batch size mismatch: a step takes {expected} examples, and {inputs} are given"
            ),
            Self::NoExamples => write!(f, "no examples: a mean over none is not a number"),
            Self::FitSetting {
                name,
                value,
                expected,
            } => write!(f, "`Fit::{name}` is {value}; it must be {expected}"),
        }
    }
}

impl core::error::Error for StepError {}

/// A setting of an optimizer with which it cannot train (see
/// [`crate::optim::Optimizer::check`]).
///
/// ```
/// use paralens::optim::{Adam, Optimizer};
/// let bad = <Adam<f64> as Optimizer<f64>>::check(&Adam::new(f64::NAN)).unwrap_err();
/// assert_eq!(bad.name, "lr");
/// assert_eq!(bad.to_string(), "the optimizer's `lr` is NaN; it must be a finite number, 0 or more");
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BadSetting {
    /// The setting's field name (`lr`, `beta1`, `eps`, ...).
    pub name: &'static str,
    /// Its value.
    pub value: f64,
    /// The values it may take, in words.
    pub expected: &'static str,
}

impl fmt::Display for BadSetting {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "the optimizer's `{}` is {}; it must be {}",
            self.name, self.value, self.expected
        )
    }
}

impl core::error::Error for BadSetting {}
