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
//! ## `#[lens]`: a function and its reverse derivative
//!
//! On `fn name(a1: T1, ..., an: Tn) -> U`, `#[lens]` keeps `name` as written and generates:
//! - `name_rev(a1, ..., an, d: U)`: the reverse derivative at `(a1, ..., an)` applied to the
//!   output change `d`, returning the changes of the differentiated arguments (a plain value
//!   for one, a tuple for several);
//! - `name_vjp(a1, ..., an)`: the value and its pullback (one slot per argument, `()` for
//!   arguments that are not differentiated); calls inside other lens bodies use it;
//! - a zero-sized type `Name` (UpperCamelCase) implementing [`Lens`], or [`Para`] when some
//!   arguments are marked `#[param]` (the parameter is the tuple of those, or the one
//!   argument's type itself when there is one, as `name_rev` returns one change bare); write
//!   `#[lens(name = Other)]` when that name is taken. With parameters it also implements
//!   [`Init`] (or [`InitAt`], below), so it can be a sub-model of `para!`: they start at zero, or where
//!   `#[lens(init = f)]` puts them (`fn f<R: rand::Rng + ?Sized>(rng: &mut R) -> Params`).
//!   A model of several layers needs `init`: from zero, the layers' changes stay zero. The
//!   const generics that the parameters' types name are the type's own, so each size has
//!   one parameter type: `fn gain<const N: usize>(#[param] g: SVector<f64, N>, ..)` gives
//!   the unit struct `Gain<const N: usize>` (a sub-model `gain: Gain<3>`, a value `Gain`),
//!   and `f` may be generic over them. The type's generics are those sizes in the order the
//!   function declares them; a value of the type is for one size. Where they name a type parameter of the function
//!   (the scalar `T`) the type is one for every `T`, so it has no `Init` but [`InitAt<T>`]
//!   for every `T` (`init_at(seed)`; none where a bound of `T` names another generic): a
//!   `para!` model initialises it at its own scalar (its type parameter bounded by `Real`,
//!   or else the float type its forward function names); a model of such layers alone names
//!   its `T` by a field `_scalar: PhantomData<T>`. Its
//!   [`Para::vjp_params`] (what a [`Learner`] runs) sweeps the body with the inputs as data,
//!   so the inputs' changes through `+ - * /` (a product per layer for a batch) are never
//!   computed (a method with an operand, `x.dot(&w)`, keeps its two-sided rule there, to
//!   keep a mistake in it one error).
//!
//! ```
//! use paralens::prelude::*;
//!
//! #[lens]
//! fn poly(x: f64) -> f64 {
//!     let y = x * x;        // shadowing, repeated operands and plain literals are fine
//!     let y = y + 3.0 * x;
//!     y.exp().ln()
//! }
//! assert_eq!(poly(2.0), 10.0);
//! assert!((poly_rev(2.0, 1.0) - 7.0).abs() < 1e-12); // d/dx (x^2 + 3x) = 2x + 3
//! assert_eq!(Poly.apply(2.0), poly(2.0));
//! ```
//!
//! Differentiated: the operators and methods of the [`primitives`] table (generated from the
//! macro's own table: `+ - * /` and unary `-`, float methods such as `exp`, `powf`, `max`,
//! `atan2`, also as `f64::max(x, y)` or `T::exp(x)`, nalgebra operations such as `dot`,
//! `transpose`, `norm`, and the step functions such as `floor` with no change), `let` (with
//! shadowing and tuple patterns),
//! tuples, nested blocks, `if` (with or without `else`), `if let` and `match` whose
//! conditions are not differentiated, assignments `x = e` and `x += e` (`-= *= /=` too) on
//! `let mut` bindings, anywhere in blocks and branches (an untaken branch keeps the old value),
//! calls of other `#[lens]` functions (`m::g(x)` uses `m::g_vjp`) and of the activations in
//! [`fns`] (with [`fns::add_bias`], a layer's bias added to every column of a batch, and
//! [`fns::to_static`] and [`fns::to_heap`] between heap and static values), `map(f)` with `f`
//! a `#[lens]` function, and on `u64` Z2 words (64 examples per word) `& ^ | !` with the Z2
//! rules. Generic and const-generic functions
//! work. Arguments of integer, `bool` or `char` type, and those marked `#[nodiff]`, get no
//! change (their slot is omitted from `name_rev`); a borrowed argument must be marked
//! `#[nodiff]` (it cannot give a change back), or taken by value to be differentiated. A
//! borrowed `#[nodiff]` matrix or scalar is an operand like an owned one (`w * x` with
//! `w: &HeapMatrix<f32, 128, 784>`), read as a copy where a rule takes a value, and a caller
//! may lend its own value (`inner(x, &m)`). A function with a borrowed argument gets
//! `name_vjp` and `name_rev` but no lens type: a lens type's inputs are values it hands a
//! change back for. Borrowed arguments take elided lifetimes (no named lifetime parameter).
//! `#[nodiff]` takes any type (an `Option`, a configuration struct); where that type has no
//! "no change" value to give back (a struct of the user's), the function gets `name_vjp` and
//! `name_rev` but no lens type.
//! Raw identifiers work: `fn r#match` gives `match_vjp`, `match_rev` and `Match`.
//!
//! `for` loops are differentiated when their trip count is bounded by a constant: `a..N`,
//! `a..=N`, `.rev()`, `.step_by(k)`, with `N` a literal, a `const` item or a const generic
//! parameter (also `N - k`, `N / k`, `N + 1`). The `let mut` bindings the body assigns are
//! carried from one iteration to the next; the loop counter is forward-only data. A loop whose
//! body calls nothing but primitives and pure functions runs its body again in the reverse
//! pass, keeping per iteration only the carried values the reverse reads (none for the chained
//! Rosenbrock function: no tape); any other keeps each iteration's pullback. What is kept is
//! in a tape of `N + 1` fixed-size slots: with `std`, a
//! block of the per-thread pool that [`HeapMatrix`] uses, taken on the first call and recycled
//! after, so a training step allocates nothing once warm; with `alloc` alone, a block
//! allocated per call; without `alloc`, inline with the pullback, on the caller's stack
//! (`N + 1` times what one iteration keeps). The reverse pass runs the iterations last first
//! (first to last when the carried values are only sums the body adds to, whose iterations'
//! changes are independent). A function whose generic parameter
//! appears in no input's type gets `name_vjp` and `name_rev` but no lens type (the lens
//! type's traits are implemented per input type), unless it is a const generic that the
//! `#[param]` arguments' types name: the lens type carries those (a hidden width), in the
//! order the function declares them.
//!
//! Indexing by forward-only data (literals, loop counters, arithmetic on them, comparisons):
//! `v[i]` of vectors, `m[(r, c)]` and `m[i]` of matrices, `a[i]` of arrays (of scalars,
//! vectors, tuples). The reverse adds the entry's change into the adjoint at that place, so a
//! loop reading `N` entries costs `N` additions: the chained Rosenbrock function is
//! `for i in 0..N - 1 { let t = x[i + 1] - x[i] * x[i]; ... }`. Entries of a `let mut`
//! binding can be assigned (`y[i] = e`, `m[(r, c)] += e`, `a[i] *= e`): `y` is rebound to a
//! copy with the entry replaced, whose reverse gives the entry's change to `e` and nothing to
//! the value it overwrote. Data is built and taken apart too: `SVector::new(a, b, c)`
//! and the other nalgebra constructors from entries (`Vector3::new`, `Matrix2x3::new`, row by
//! row), array literals `[a, b, c]`, arrays as arguments and results, and `let [a, b, c] = v`;
//! structs deriving [`Tangent`] as arguments (field access `p.w`, `t.0` of tuples, the
//! reverse adding into that field of the adjoint) and as results (struct literals).
//!
//! ```
//! use paralens::prelude::*;
//!
//! /// `N` steps of `h <- sin(h) w`.
//! #[lens]
//! fn iterate<const N: usize>(x: f64, w: f64) -> f64 {
//!     let mut h = x;
//!     for _ in 0..N {
//!         h = h.sin() * w;
//!     }
//!     h
//! }
//! let (dx, dw) = iterate_rev::<2>(0.5, 2.0, 1.0);
//! let h1 = 0.5f64.sin() * 2.0;
//! assert!((dx - h1.cos() * 2.0 * 0.5f64.cos() * 2.0).abs() < 1e-12);
//! assert!((dw - (h1.sin() + h1.cos() * 2.0 * 0.5f64.sin())).abs() < 1e-12);
//! ```
//!
//! What cannot be differentiated is a compile error at that expression saying what to write
//! instead: `while` and `loop`, `for` over a range with no constant bound, `break` and
//! `continue` in a differentiated loop, `return`, `?`, mutation other than assigning a whole `let mut` binding,
//! methods with no reverse rule (those that change their receiver in place, `fill`, `swap`,
//! `*_assign`, say to assign a new value), enum variants holding a differentiated value
//! (`Some(x)`), casts of differentiated values, and
//! forward-only code (a condition, a `println!`) that could change a binding while reading a
//! differentiated value. All errors of a function are reported together, and the function's
//! signature is still emitted (with an `unreachable!()` body) so its callers compile. A call `g(x)` of another
//! function reaches `g`'s own reverse, never one found by name alone: the sweeps call the
//! hidden `g_lens_vjp` that `#[lens]` writes beside `g`, which is tied to that `g`. Calling a
//! plain function fails with "cannot find function `g_lens_vjp`" at the call: annotate `g`
//! with `#[lens]`, or give it a reverse written by hand with [`custom_reverse!`] (importing a
//! `#[lens]` function by name, import its `g_lens_vjp` too, as rustc's help says, or call it
//! by its path, `module::g(x)`). Where a plain function of the same name shadows a `#[lens]`
//! one (a `fn relu` of yours beside the prelude's, imported by a glob), the call runs yours
//! and the reverse found is the other's: it is refused with a panic at its first run naming
//! both (Rust cannot compare the two functions at compile time).
//!
//! ## Reverses written by hand
//!
//! A function whose reverse you write yourself goes in [`custom_reverse!`] beside it; a
//! `#[lens]` body that calls it runs that reverse, and only for that function:
//!
//! ```
//! use paralens::prelude::*;
//!
//! custom_reverse! {
//!     /// `x` clipped to `[0, 6]`.
//!     fn relu6(x: f64) -> f64 {
//!         x.clamp(0.0, 6.0)
//!     }
//!     /// Its value and pullback: the change passes where `0 < x < 6`.
//!     fn relu6_vjp(x: f64) -> (f64, impl FnOnce(f64) -> f64) {
//!         (relu6(x), move |d| if x > 0.0 && x < 6.0 { d } else { 0.0 })
//!     }
//! }
//!
//! #[lens]
//! fn twice(x: f64) -> f64 {
//!     2.0 * relu6(x)
//! }
//! assert_eq!(twice(7.0), 12.0);
//! assert_eq!(twice_rev(7.0, 1.0), 0.0); // flat above 6
//! assert_eq!(twice_rev(3.0, 1.0), 2.0);
//! ```
//!
//! ## `para!`: models of sub-models
//!
//! ```
//! use paralens::prelude::*;
//!
//! para! {
//!     /// A perceptron whose second layer is used twice (its weights are shared).
//!     pub struct Net { l1: Dense<4, 8>, l2: Dense<8, 8> }
//!     fn forward(&self, x: SVector<f32, 4>) -> SVector<f32, 8> {
//!         let h = relu(self.l1(x));
//!         self.l2(tanh(self.l2(h)))
//!     }
//! }
//!
//! let net = Net::default();
//! let p: NetParams = net.init(0);           // one field per sub-model
//! let (y, pullback) = net.vjp(&p, SVector::repeat(1.0));
//! let mut dp = NetParams::zeros();           // the caller's buffer: pullbacks add into it
//! let _dx = pullback(SVector::repeat(1.0), &mut dp);
//! assert_eq!(y.len(), 8);
//! assert!(dp.l2.w.norm() > 0.0);            // both uses of l2 contributed
//! ```
//!
//! `para!` generates the model struct (deriving `Clone, Copy, Debug, Default` unless the
//! struct carries its own `#[derive(...)]`), its
//! parameter struct `NameParams` (with [`Tangent`] and [`Flat`], so optimizers walk it),
//! [`Init`] and [`Para`]. A sub-model given a value of the wrong shape is a compile error at
//! that call, whose notes point at the sub-model's field (`NameParams` has a private method
//! `input_of_<sub-model>` per sub-model that checks its input: give the struct no method of
//! your own of that name). The body is differentiated like a `#[lens]` body (loops included: a sub-model
//! called in every iteration shares its weights, and its changes add up). The model may be
//! generic (`struct M<T: Real> { l: Dense<2, 2, T> }`, with `MParams<T>`), and so may
//! `forward` (`fn forward<const B: usize>(&self, x: SMatrix<T, 2, B>)`: the batch size).
//! Fields marked `#[nodiff]` are configuration (a scale, a flag), read as `self.scale` and
//! not part of the parameters; a field of integer (but `u64`, a Z2 word), `bool` or `char`
//! type, an `Option` or a `PhantomData` is configuration without the marker, and an `f32`,
//! `f64`, `u64` or scalar `T` field needs it (it is refused otherwise, since a learned scalar
//! is a sub-model's parameter). The
//! struct's const generics may bound loops (`for k in 0..N - 1`). A model may have several `forward` functions, one `Para` impl
//! each on its own input type: the recurrent cells run on static matrices and on
//! [`HeapMatrix`] activations (whose values are not `Copy`: a value read twice is written
//! `x.clone()` in the body, and the generated reverse clones what it reads again).
//!
//! ## The crates behind the facade
//!
//! [`lens_core`] (traits, rules, composition, losses, optimizers, learners, data),
//! `lens-macros` (`#[lens]`, `para!`, `#[derive(Tangent)]`), [`lens_circuits`] (Boolean and
//! polynomial circuits, reverse derivative ascent), also reachable as `paralens::circuits`.
#![cfg_attr(not(feature = "std"), no_std)]
#![deny(missing_docs)]

pub use lens_circuits as circuits;
pub use lens_core::*;
pub use nalgebra;

/// The operators and methods `#[lens]` and `para!` differentiate.
///
#[doc = lens_macros::__primitives_doc!()]
pub mod primitives {}

/// Everything a model needs in scope: traits, layers, activations, losses, optimizers, the
/// learner and nalgebra's static matrix aliases.
pub mod prelude {
    #[cfg(feature = "std")]
    pub use lens_core::ShardedLearner;
    pub use lens_core::fns::*;
    pub use lens_core::optim::{AdaGrad, Adam, AdamW, Momentum, Nesterov, Optimizer, RmsProp, Sgd};
    pub use lens_core::{
        BinaryCrossEntropy, DotProduct, Flat, Gelu, Hinge, Init, LeakyRelu, Learn, Learner, Lens,
        LogSoftmax, Loss, Mse, Para, ParaExt, PerColumn, Real, Relu, Sigmoid, Softmax,
        SoftmaxCrossEntropy, Softplus, Tangent, Tanh,
    };
    #[cfg(feature = "alloc")]
    pub use lens_core::{Dense, DenseParams, HeapMatrix};
    pub use lens_core::{custom_reverse, lens, para};
    pub use nalgebra::{SMatrix, SVector};
}

/// The README's examples, compiled and run as doc tests.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;

/// The guided tour's examples (`docs/TOUR.md`), compiled and run as doc tests.
#[doc = include_str!("../docs/TOUR.md")]
#[cfg(doctest)]
pub struct TourDoctests;
