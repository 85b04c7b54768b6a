//! Boolean models as parametric lenses over words.

#[cfg(feature = "alloc")]
mod gates;
#[cfg(feature = "alloc")]
mod group_vote;
mod lookup;
mod pseudo_linear;

#[cfg(feature = "alloc")]
pub use gates::{GateNetwork, gate_network, random_tables};
#[cfg(feature = "alloc")]
pub use group_vote::{GroupVote, Softmax};
pub use lookup::LookupTable;
pub use pseudo_linear::PseudoLinear;
