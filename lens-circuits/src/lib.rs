//! Boolean circuits for paralens: the reverse derivative category of polynomials over Z2,
//! bit-sliced.
//!
//! A [`Word`] holds one bit per example: `u64` holds 64 examples, [`Lanes<W>`] holds 64·W
//! (W words side by side, for SIMD). Their change space's addition is XOR, and every
//! operation acts lane-wise, so the reverse derivative of a circuit is computed for all
//! examples at once. The reverse rules (`docs/MATHEMATICS.md`, section 1):
//!
//! | gate | forward | reverse (change `d`) |
//! |---|---|---|
//! | XOR | `x ^ y` | `(d, d)` |
//! | AND | `x & y` | `(y & d, x & d)` |
//! | OR | `x \| y` | `(!y & d, !x & d)` |
//! | NOT | `!x` | `d` |
//! | NAND | `!(x & y)` | `(y & d, x & d)` |
//! | MUX | `s ? a : b` | `((a ^ b) & d, s & d, !s & d)` |
//! | copy | `(x, x)` | `d1 ^ d2` |
//! | discard, constant | | nothing |
//!
//! The reverse derivative is defined on the *circuit*: `x & x` computes `x` but its reverse
//! is `x&d ^ x&d = 0`. On read-once circuits it equals the Boolean difference, which
//! [`oracle::boolean_reverse`] computes by brute force.
//!
//! ```
//! use paralens::circuits::{Lanes, Word};
//! use paralens::rules::AndRule; // `paralens::rules::AndRule` through the facade
//! let x = Lanes::<2>::splat(true);
//! let y = Lanes::<2>([0b1010, u64::MAX]);
//! let (z, pullback) = x.and_vjp(y);
//! assert_eq!(z, y);
//! assert_eq!(pullback(Lanes::ONES).1, x); // d(x & y)/dy = x
//! ```
#![cfg_attr(not(feature = "std"), no_std)]
#![deny(missing_docs)]

// The rules' companions (`companions!`) name the runtime as `::paralens::__private`.
extern crate lens_core as paralens;

// Netlists and learners keep their buffers on the heap.
#[cfg(feature = "alloc")]
extern crate alloc;

pub mod binarise;
#[cfg(feature = "alloc")]
mod count;
mod lanes;
#[cfg(feature = "alloc")]
pub mod learn;
pub mod models;
#[cfg(feature = "alloc")]
pub mod netlist;
pub mod oracle;
#[cfg(feature = "alloc")]
pub mod relaxed;
pub mod ring;
pub mod rules;
#[cfg(feature = "alloc")]
mod select;
mod word;

pub use lanes::Lanes;
#[cfg(feature = "alloc")]
pub use learn::{BoolLearner, StepReport, UpdateRule};
#[cfg(feature = "alloc")]
pub use netlist::{Gate, Netlist, NetlistBuilder, NetlistError, Wire};
#[cfg(feature = "alloc")]
pub use select::BestOnValidation;
pub use word::Word;
