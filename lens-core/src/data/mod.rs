//! Data sets and the small utilities examples need: parsing with clear errors, seeded
//! stratified splits, standardisation.

mod error;
mod iris;
mod split;

pub use error::DataError;
pub use iris::{IRIS_CLASSES, IRIS_CSV, Iris, iris, parse_iris};
pub use split::{Standardizer, stratified_split};
