//! Logic gate networks learned through a smooth relaxation, then run as Boolean circuits.
//!
//! A [`LogicLayer`] is a layer of two-input gates with fixed random wiring; each gate is a
//! probability distribution over the 16 Boolean functions of two inputs (the softmax of 16
//! parameters). On inputs in `[0, 1]` a gate computes the *multilinear extension* of its
//! expected truth table `tau`: `tau_0 (1-a)(1-b) + tau_1 a (1-b) + tau_2 (1-a) b + tau_3 a b`,
//! which is the gate's own Boolean function at 0/1 inputs when the distribution is one-hot
//! (`a AND b = a b`, `a XOR b = a + b - 2 a b`). A [`GroupSum`] head reads classes off groups of
//! gates, divided by a temperature. A [`WalshLayer`] is the same layer with 4 parameters a
//! gate (the Walsh coefficients of its table's logits, each corner's value a sigmoid) in
//! place of 16 scores. All are parametric lenses: they compose with `then`,
//! train with the library's learners and optimizers, and their reverse derivatives are
//! written once, beside their forwards, and checked against finite differences and, at 0/1
//! inputs, against the Boolean difference of the discrete gate (`tests/relaxed.rs`).
//!
//! [`discretise`] then keeps each gate's most probable function: the model becomes a
//! [`Netlist`](crate::netlist::Netlist) evaluated bit-sliced, 64 examples per word, whose
//! classes a [`GroupVote`](crate::models::GroupVote) reads. That circuit is the model that is
//! shipped: where every gate is confident (one-hot), it computes exactly what the relaxation
//! computes at 0/1 inputs.
//!
//! ```
//! use paralens::circuits::relaxed::{GroupSum, LogicLayer, discretise};
//! use paralens::prelude::*;
//!
//! let model = LogicLayer::<4, 8, f64>::new(1).then(GroupSum::<8, 2, f64>::new(1.0));
//! let params = model.init(0);
//! let x = HeapMatrix::<f64, 4, 1>::from_fn(|r, _| if r % 2 == 0 { 1.0 } else { 0.0 });
//! let scores = model.forward(&params, x);
//! assert!(scores.iter().all(|s| (0.0..=4.0).contains(s)));
//! let net = discretise(&model, &params, 4).unwrap();
//! assert_eq!(net.outputs(), 8);
//! ```

mod discrete;
mod gates;
mod head;
mod layer;
mod walsh;

pub use discrete::{Discretise, discretise};
pub use gates::{NAMES, bit, relaxed};
pub use head::GroupSum;
pub use layer::LogicLayer;
pub use walsh::WalshLayer;
