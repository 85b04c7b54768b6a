//! Data sets and the small utilities examples need: parsing with clear errors, seeded
//! stratified splits, standardisation.

mod digits;
mod error;
mod idx;
mod iris;
mod split;

pub use digits::{DIGITS_CSV_GZ, Digits, digits, parse_digits};
pub use error::DataError;
pub use idx::{
    Images, MAX_DEFLATE_RATIO, MNIST_FILES, Mnist, gunzip, load_mnist, parse_idx_images,
    parse_idx_labels, read_maybe_gzip,
};
pub use iris::{IRIS_CLASSES, IRIS_CSV, Iris, iris, iris_uci, parse_iris};
pub use split::{Standardizer, stratified_split};
