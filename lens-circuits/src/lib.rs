//! Boolean and polynomial circuits for paralens.
//!
//! This crate is a placeholder: Z2 words, circuits and reverse derivative ascent arrive with
//! the circuits issue. It already depends on `lens-core`, so the same traits serve both.
#![deny(missing_docs)]

pub use lens_core::Tangent;
