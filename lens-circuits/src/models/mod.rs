//! Boolean models as parametric lenses over words.

mod gates;
mod lookup;

pub use gates::{GateNetwork, gate_network, random_tables};
pub use lookup::LookupTable;
