//! What can be wrong with a netlist or its use.

use super::Wire;
use core::fmt;

/// A netlist that cannot be built, or inputs that do not fit it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NetlistError {
    /// Gate `gate` reads `wire`, which does not exist.
    DanglingWire {
        /// The gate (its index in the gate list).
        gate: usize,
        /// The wire it reads.
        wire: Wire,
        /// How many wires there are.
        wires: usize,
    },
    /// Output `output` is `wire`, which does not exist.
    DanglingOutput {
        /// The output's position.
        output: usize,
        /// The wire given.
        wire: Wire,
        /// How many wires there are.
        wires: usize,
    },
    /// The gates form a cycle through `gate`.
    Cycle {
        /// A gate on the cycle.
        gate: usize,
    },
    /// A slice of the wrong length was given.
    Width {
        /// Which slice.
        what: &'static str,
        /// Its required length.
        expected: usize,
        /// Its length.
        got: usize,
    },
    /// More wires than a `u32` can number.
    TooLarge,
    /// Example `example` has label `label`, but the model has only `classes` classes.
    Label {
        /// The example (its lane).
        example: usize,
        /// Its label.
        label: usize,
        /// How many classes there are.
        classes: usize,
    },
}

impl fmt::Display for NetlistError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::DanglingWire { gate, wire, wires } => write!(
                f,
                "gate {gate} reads wire {wire}, but the netlist has only {wires} wires (0..{wires})"
            ),
            Self::DanglingOutput {
                output,
                wire,
                wires,
            } => write!(
                f,
                "output {output} is wire {wire}, but the netlist has only {wires} wires (0..{wires})"
            ),
            Self::Cycle { gate } => write!(
                f,
                "the gates form a cycle through gate {gate}: a circuit must be acyclic"
            ),
            Self::Width {
                what,
                expected,
                got,
            } => write!(f, "{what}: expected {expected} values, got {got}"),
            Self::TooLarge => write!(f, "the netlist has more wires than a u32 can number"),
            Self::Label {
                example,
                label,
                classes,
            } => write!(
                f,
                "example {example} has label {label}, but the model has only {classes} classes (0..{classes})"
            ),
        }
    }
}

impl core::error::Error for NetlistError {}

impl NetlistError {
    /// `Ok` when a slice has the length required, else [`NetlistError::Width`].
    pub(crate) fn check_width(
        what: &'static str,
        expected: usize,
        got: usize,
    ) -> Result<(), NetlistError> {
        if expected == got {
            Ok(())
        } else {
            Err(NetlistError::Width {
                what,
                expected,
                got,
            })
        }
    }
}
