//! Boolean models as parametric lenses over words.

mod lookup;

pub use lookup::LookupTable;
