//! # paralens
//!
//! Ordinary Rust functions become *parametric lenses*: a forward map and its reverse
//! derivative, statically typed, so that a model is a composition of lenses and an
//! ill-shaped composition is a compile error. Models, losses, learning rates and optimizers
//! are all lenses; one training step is one composite lens run forward and back.
//!
//! ```
//! use paralens::prelude::*;
//!
//! let model = Dense::<4, 16>::new().then(Relu).then(Dense::<16, 3>::glorot());
//! let params = model.init(7);
//! let mut learner = Learner::new(model, params, SoftmaxCrossEntropy, Adam::new(0.01));
//! let x = SVector::<f32, 4>::new(5.1, 3.5, 1.4, 0.2);
//! let loss_before = learner.step(&x, &0);
//! for _ in 0..20 {
//!     learner.step(&x, &0);
//! }
//! assert!(learner.try_loss(&x, &0).unwrap() < loss_before);
//! ```
//!
//! The crates behind the facade: [`lens_core`] (traits, rules, composition, losses,
//! optimizers, learners), `lens-macros` (`#[derive(Tangent)]`; `#[lens]` and `para!` next),
//! [`lens_circuits`] (Boolean and polynomial circuits).
#![deny(missing_docs)]

pub use lens_circuits as circuits;
pub use lens_core::*;
pub use nalgebra;

/// Everything a model needs in scope: traits, layers, activations, losses, optimizers, the
/// learner and nalgebra's static matrix aliases.
pub mod prelude {
    pub use lens_core::fns::*;
    pub use lens_core::optim::{AdaGrad, Adam, AdamW, Momentum, Nesterov, Optimizer, RmsProp, Sgd};
    pub use lens_core::{
        BinaryCrossEntropy, Dense, DenseParams, Flat, Gelu, Init, LeakyRelu, Learner, Lens,
        LogSoftmax, Loss, Mse, Para, ParaExt, Real, Relu, Sigmoid, Softmax, SoftmaxCrossEntropy,
        Softplus, Tangent, Tanh,
    };
    pub use lens_core::{lens, para};
    pub use nalgebra::{SMatrix, SVector};
}
