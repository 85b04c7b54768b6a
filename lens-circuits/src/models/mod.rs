//! Boolean models as parametric lenses over words.

mod gates;
mod group_vote;
mod lookup;
mod pseudo_linear;

pub use gates::{GateNetwork, gate_network, random_tables};
pub use group_vote::{GroupVote, Softmax};
pub use lookup::LookupTable;
pub use pseudo_linear::PseudoLinear;
