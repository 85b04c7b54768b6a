//! The guards of the code `#[lens]` and `para!` generate: hidden, named by that code through
//! `__private`, never called by hand.
//!
//! A `#[lens]` function is emitted twice, as written and as its sweeps (`name_vjp`,
//! `name_rev`). A mistake in it is in the function as written, and rustc reports it there,
//! once; without guards it showed again in the sweeps, where the types they derive stop
//! agreeing (a rule whose single impl made rustc convert the operand, `x.max(y)` with `y: f32`,
//! then the changes returned against the signature's types, reported at `#[lens]` with
//! suggestions that cannot be written, `x.max.into()(y)`). Every guard is one of three
//! patterns:
//!
//! 1. **A value read at the written type, with a fallback one autoref step later**
//!    (this module: `Typed::like(witness, x).lens_typed()`, `Types::of(&x)`, the changes'
//!    `Change*`). The first impl is `x` itself when `x` has the type `W` the witness names;
//!    when it has another, method resolution picks the impl on `&Typed` (found one autoref
//!    step later), whose value still has type `W`, so the sweep reports nothing and the one
//!    error is the function as written's. That impl never runs: the crate has a type error
//!    elsewhere and is not built. Should a sweep ever disagree with a function as written
//!    that compiles (a defect of `#[lens]`), building that impl fails with
//!    `Typed::MISMATCH`, so a mismatch never becomes a program that runs (when the code is
//!    monomorphised: `cargo check` does not show it). The same autoref step picks a kind
//!    without a type error: [`no_change`] gives a `Tangent`'s zero, else a `NoChange` value.
//! 2. **A value spanned like the function as written's** ([`reads`]: `Value`, `Moved`,
//!    `operand`, `witness`, `index_typed`): the sweep's copy of an expression carries the
//!    written one's span and form, so rustc reports a type error of either as one diagnostic,
//!    with the help it gives for the code as written.
//! 3. **A check that is one obligation with its own message** ([`names`]: `IsTheLensTypeOfThisFunction`;
//!    this module: `GivenByTheFunctionCalled` for a change that would be lost): a trait with
//!    `#[diagnostic::on_unimplemented]`, implemented only where the code is right, so a
//!    mistake is one error at the user's expression saying what to do.

mod names;
mod no_change;
mod reads;

pub use names::*;
pub use no_change::*;
pub use reads::*;

use crate::Tangent;

// The first pattern: operands, variables and changes held to the function as written's
// types (`Typed`, `Types`), the changes checked against their arguments (`Change*`, `ChangeOfTheArgument`).

#[cfg(feature = "alloc")]
use crate::HeapMatrix;
use core::marker::PhantomData;
use nalgebra::SMatrix;

/// `x`, to be read as a `W` (see the module's documentation).
pub struct Typed<W, X>(PhantomData<W>, X);

impl<W, X> Typed<W, X> {
    /// `x`, to be read as a `W`.
    #[inline(always)]
    pub fn new(x: X) -> Self {
        Typed(PhantomData, x)
    }

    /// `x`, to be read as a value of the type `witness` names.
    #[inline(always)]
    pub fn like(_witness: PhantomData<W>, x: X) -> Self {
        Typed(PhantomData, x)
    }

    /// Evaluated only when the code of a mismatch is built, which happens only if the
    /// function as written compiles and its sweep does not agree with it.
    pub const MISMATCH: () = panic!(
        "#[lens] generated a reverse sweep whose types differ from the function as written: \
         a defect of #[lens], please report it with the function"
    );
}

/// The types of a value `x` and of `W`, with no value (`Types::<W, _>::of(&x)`): the form of
/// [`Typed`] for a value named by a variable, handed over by [`ExactTypes::lens_typed_move`]
/// without a copy of its own in a debug build (a change of a large matrix argument).
pub struct Types<W, X>(PhantomData<(fn() -> W, fn() -> X)>);

impl<W, X> Types<W, X> {
    /// The types of `x` and of `W`.
    #[inline(always)]
    pub fn of(_x: &X) -> Self {
        Types(PhantomData)
    }

    /// The type of `x` and the type `witness` names.
    #[inline(always)]
    pub fn like(_witness: PhantomData<W>, _x: &X) -> Self {
        Types(PhantomData)
    }
}

/// The types agree: the value itself.
pub trait ExactTypes<W> {
    /// `x`.
    fn lens_typed_move(self, x: W) -> W;
}

impl<W> ExactTypes<W> for Types<W, W> {
    #[inline(always)]
    fn lens_typed_move(self, x: W) -> W {
        x
    }
}

/// The types differ (see [`Mismatch`]).
pub trait MismatchTypes<W, X> {
    /// Never returns.
    fn lens_typed_move(self, x: X) -> W;
}

impl<W, X> MismatchTypes<W, X> for &Types<W, X> {
    fn lens_typed_move(self, _x: X) -> W {
        #[allow(clippy::let_unit_value)]
        let () = Typed::<W, X>::MISMATCH;
        unreachable!()
    }
}

/// The types agree: the value itself.
pub trait Exact<W> {
    /// The value.
    fn lens_typed(self) -> W;
}

impl<W> Exact<W> for Typed<W, W> {
    #[inline(always)]
    fn lens_typed(self) -> W {
        self.1
    }
}

/// The types differ: the function as written reports the error (see the module's
/// documentation).
pub trait Mismatch<W> {
    /// Never returns.
    fn lens_typed(self) -> W;
}

impl<W, X> Mismatch<W> for &Typed<W, X> {
    fn lens_typed(self) -> W {
        // Fails the build if this code is ever built (a constant of the generic impl is
        // evaluated where the impl is used).
        #[allow(clippy::let_unit_value)]
        let () = Typed::<W, X>::MISMATCH;
        unreachable!()
    }
}

/// The types of an operand `x` and of the other operand `w` of `+` or `-`
/// (`Infer::of(&w, &x).lens_infer(x)`), for an operand computed from forward-only data whose
/// type nothing else fixes (`x + c.into()`). The rules of `+` and `-` add values of one type,
/// so [`InferSame`] takes `w`'s type for it, in the function as written and in the sweep
/// alike, where rustc refused it as ambiguous (in each of the three functions, with
/// suggestions that cannot be written). An operand whose type is known is handed on as it is
/// by [`InferAsIs`], one autoref step later: a different type is then the rule's own error,
/// reported once, by the function as written.
pub struct Infer<W, X>(PhantomData<(fn() -> W, fn() -> X)>);

impl<W, X> Infer<W, X> {
    /// The types of `w` and of `x`.
    #[inline(always)]
    pub fn of(_w: &W, _x: &X) -> Self {
        Infer(PhantomData)
    }
}

/// The operand has (or may have) the other operand's type: it is read as that type.
pub trait InferSame<W> {
    /// `x`.
    fn lens_infer(self, x: W) -> W;
}

impl<W> InferSame<W> for Infer<W, W> {
    #[inline(always)]
    fn lens_infer(self, x: W) -> W {
        x
    }
}

/// The operand has a type of its own: it is handed on as it is.
pub trait InferAsIs<X> {
    /// `x`.
    fn lens_infer(self, x: X) -> X;
}

impl<W, X> InferAsIs<X> for &Infer<W, X> {
    #[inline(always)]
    fn lens_infer(self, x: X) -> X {
        x
    }
}

/// The types of an operand `x` and of the other operand `w` of `*` or `/`
/// (`InferScalar::of(&w, &x).lens_infer_scalar(x)`): the form of [`Infer`] for the operators
/// that scale. An operand whose type nothing fixes (`v * c.into()`, `x / c.into()`) is read
/// as the scalar of `w` (`w` itself for a scalar, the entries' type for a matrix), the one
/// reading under which a scalar operand of these rules works; a product of two matrices
/// takes matrices whose types are known. An operand with a type of its own is handed on as
/// it is ([`InferScalarAsIs`]).
pub struct InferScalar<W, X>(PhantomData<(fn() -> W, fn() -> X)>);

impl<W, X> InferScalar<W, X> {
    /// The types of `w` and of `x`.
    #[inline(always)]
    pub fn of(_w: &W, _x: &X) -> Self {
        InferScalar(PhantomData)
    }
}

/// The operand has (or may have) the scalar type of the other operand.
pub trait InferScalarSame<S> {
    /// `x`.
    fn lens_infer_scalar(self, x: S) -> S;
}

// One impl per scalar type, not `impl<T: Real> for InferScalar<T, T>`: while the other
// operand's type is not known yet (the value of `h.map(f)` for a heap matrix), a generic impl
// would match it at once and make the operand that type; with one impl per type the choice
// waits until it is known.
macro_rules! infer_scalar {
    ($($t:ty),*) => {$(
        impl InferScalarSame<$t> for InferScalar<$t, $t> {
            #[inline(always)]
            fn lens_infer_scalar(self, x: $t) -> $t {
                x
            }
        }

        impl<const R: usize, const C: usize> InferScalarSame<$t>
            for InferScalar<SMatrix<$t, R, C>, $t>
        {
            #[inline(always)]
            fn lens_infer_scalar(self, x: $t) -> $t {
                x
            }
        }

        #[cfg(feature = "alloc")]
        impl<const R: usize, const C: usize> InferScalarSame<$t>
            for InferScalar<HeapMatrix<$t, R, C>, $t>
        {
            #[inline(always)]
            fn lens_infer_scalar(self, x: $t) -> $t {
                x
            }
        }
    )*};
}
infer_scalar!(f32, f64);

/// The operand has a type of its own: it is handed on as it is.
pub trait InferScalarAsIs<X> {
    /// `x`.
    fn lens_infer_scalar(self, x: X) -> X;
}

impl<W, X> InferScalarAsIs<X> for &InferScalar<W, X> {
    #[inline(always)]
    fn lens_infer_scalar(self, x: X) -> X {
        x
    }
}

/// The change a called function's pullback gives an argument (`Change::like(w, &g)`, `w`
/// the argument's witness), read at the argument's type, in three steps of method
/// resolution on `(&&Change::like(w, &g)).lens_change(g)`:
/// - [`ChangeExact`]: the change has the argument's type; the change itself.
/// - [`NoChangeFromTheCall`]: the change is `()` where the argument is differentiated: the function
///   called does not differentiate that parameter (`#[nodiff]`), and the change would be lost.
///   An error, at the argument, saying so ([`GivenByTheFunctionCalled`]); it was rustc's
///   "expected `&f64`, found `&()`" at `#[lens]`.
/// - [`ChangeOther`]: another type. The function as written has a type error in that
///   argument and reports it; the sweep goes on at the argument's type, reporting nothing
///   more (see the module's documentation; never built). Should the function as written
///   compile (a hand-written `name_vjp` whose pullback gives a change of another type),
///   building fails with [`Change::OTHER_TYPE`], which says so.
pub struct Change<W, G>(PhantomData<(fn() -> W, fn() -> G)>);

// `Copy` whatever `W` and `G` are: `ChangeOther` takes the guard by value, found two
// dereferences below the receiver `&&Change` (without it, E0507 in the guard's internals).
impl<W, G> Clone for Change<W, G> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<W, G> Copy for Change<W, G> {}

impl<W, G> Change<W, G> {
    /// Evaluated only when the code of a change of another type is built: the function as
    /// written compiles, and the function it calls gives an argument a change of another
    /// type than the argument's.
    pub const OTHER_TYPE: () = panic!(
        "a function called in a #[lens] body gives one of its arguments a change of another \
         type than the argument's: the pullback of its `name_vjp` (written by hand in \
         `custom_reverse!`) must return one change per argument, each of that argument's type, \
         a tuple for several (if #[lens] wrote that function, this is a defect of #[lens], \
         please report it)"
    );

    /// The argument's type (by its witness) and the change's.
    #[inline(always)]
    pub fn like(_witness: PhantomData<W>, _change: &G) -> Self {
        Change(PhantomData)
    }
}

/// The change has the argument's type.
pub trait ChangeExact<W> {
    /// `g`.
    fn lens_change(self, g: W) -> W;
}

impl<W> ChangeExact<W> for &&Change<W, W> {
    #[inline(always)]
    fn lens_change(self, g: W) -> W {
        g
    }
}

/// A differentiated argument passed where the function called does not differentiate it.
/// The three names of this check (`GivenByTheFunctionCalled`, `ChangeOfTheArgument`,
/// `NoChangeFromTheCall`) are read by users in rustc's help and note lines ("the trait
/// `GivenByTheFunctionCalled` is not implemented for `ChangeOfTheArgument<f64>`", "required by
/// a bound in `NoChangeFromTheCall::lens_change`"): they say what is wrong.
#[diagnostic::on_unimplemented(
    message = "this argument is differentiated, and the function called does not differentiate its parameter",
    label = "its change would be lost here",
    note = "the parameter is `#[nodiff]` (or otherwise gets no change) in the function called: differentiate it there, or pass a value that is not differentiated"
)]
pub trait GivenByTheFunctionCalled {}

/// The argument of type `W` whose change a called function does not give: the bound of
/// [`NoChangeFromTheCall`] is on it rather than on `W`, so that in a generic function rustc does not
/// suggest bounding the type parameter by [`GivenByTheFunctionCalled`].
pub struct ChangeOfTheArgument<W>(PhantomData<fn() -> W>);

/// The change is `()` (see [`Change`]).
pub trait NoChangeFromTheCall<W> {
    /// Never compiles: its bound is implemented for no type.
    fn lens_change(self, g: ()) -> W
    where
        ChangeOfTheArgument<W>: GivenByTheFunctionCalled;
}

impl<W> NoChangeFromTheCall<W> for &Change<W, ()> {
    fn lens_change(self, _g: ()) -> W
    where
        ChangeOfTheArgument<W>: GivenByTheFunctionCalled,
    {
        unreachable!()
    }
}

/// The change has another type (see [`Change`]).
pub trait ChangeOther<W, G> {
    /// Never returns.
    fn lens_change(self, g: G) -> W;
}

impl<W, G> ChangeOther<W, G> for Change<W, G> {
    fn lens_change(self, _g: G) -> W {
        #[allow(clippy::let_unit_value)]
        let () = Change::<W, G>::OTHER_TYPE;
        unreachable!()
    }
}

/// A called function's changes, spread over the arguments of the call as written: `let (g0,
/// g1, g2) = (&Spread::<3, _>::of(&c)).lens_spread(c)`, `c` what the pullback returned.
/// - [`SpreadExact`]: `c` is a tuple of as many changes as the call has arguments; `c`.
/// - [`SpreadOther`]: anything else. The call has a wrong number of arguments, which the
///   function as written reports (rustc's E0061, with its help); the sweep goes on with a
///   tuple of [`Absent`] changes that [`ChangeOther`] reads at the arguments' types, so a
///   tuple pattern of the call's arity against the callee's does not report the same mistake
///   again. Never built: the crate has that error.
pub struct Spread<const N: usize, C>(PhantomData<fn() -> C>);

impl<const N: usize, C> Spread<N, C> {
    /// The changes' type, for a call of `N` arguments.
    #[inline(always)]
    pub fn of(_changes: &C) -> Self {
        Spread(PhantomData)
    }
}

/// The change of an argument that the function called does not have (see [`Spread`]).
pub struct Absent;

/// As many changes as arguments: the changes themselves (see [`Spread`]).
pub trait SpreadExact<C> {
    /// `c`.
    fn lens_spread(self, c: C) -> C;
}

/// Another number of changes than arguments (see [`Spread`]).
pub trait SpreadOther<C> {
    /// One [`Absent`] for each argument.
    type Absent;
    /// Never returns.
    fn lens_spread(self, c: C) -> Self::Absent;
}

macro_rules! spread {
    ($n:literal: $($t:ident)*) => {
        impl<$($t),*> SpreadExact<($($t,)*)> for &Spread<$n, ($($t,)*)> {
            #[inline(always)]
            fn lens_spread(self, c: ($($t,)*)) -> ($($t,)*) {
                c
            }
        }

        impl<C> SpreadOther<C> for Spread<$n, C> {
            type Absent = ($(spread!(@absent $t),)*);
            fn lens_spread(self, _c: C) -> Self::Absent {
                #[allow(clippy::let_unit_value)]
                let () = Typed::<Self::Absent, C>::MISMATCH;
                unreachable!()
            }
        }
    };
    (@absent $t:ident) => { Absent };
}

spread!(2: A B);
spread!(3: A B C);
spread!(4: A B C D);
spread!(5: A B C D E);
spread!(6: A B C D E F);
spread!(7: A B C D E F G);
spread!(8: A B C D E F G H);
spread!(9: A B C D E F G H I);
spread!(10: A B C D E F G H I J);
spread!(11: A B C D E F G H I J K);
spread!(12: A B C D E F G H I J K L);
spread!(13: A B C D E F G H I J K L M);
spread!(14: A B C D E F G H I J K L M N);
spread!(15: A B C D E F G H I J K L M N O);
spread!(16: A B C D E F G H I J K L M N O P);
spread!(17: A B C D E F G H I J K L M N O P Q);
spread!(18: A B C D E F G H I J K L M N O P Q R);
spread!(19: A B C D E F G H I J K L M N O P Q R S);
spread!(20: A B C D E F G H I J K L M N O P Q R S T);
spread!(21: A B C D E F G H I J K L M N O P Q R S T U);
spread!(22: A B C D E F G H I J K L M N O P Q R S T U V);
spread!(23: A B C D E F G H I J K L M N O P Q R S T U V W);
spread!(24: A B C D E F G H I J K L M N O P Q R S T U V W X);
spread!(25: A B C D E F G H I J K L M N O P Q R S T U V W X Y);
spread!(26: A B C D E F G H I J K L M N O P Q R S T U V W X Y Z);
spread!(27: A B C D E F G H I J K L M N O P Q R S T U V W X Y Z A1);
spread!(28: A B C D E F G H I J K L M N O P Q R S T U V W X Y Z A1 B1);
spread!(29: A B C D E F G H I J K L M N O P Q R S T U V W X Y Z A1 B1 C1);
spread!(30: A B C D E F G H I J K L M N O P Q R S T U V W X Y Z A1 B1 C1 D1);
spread!(31: A B C D E F G H I J K L M N O P Q R S T U V W X Y Z A1 B1 C1 D1 E1);
spread!(32: A B C D E F G H I J K L M N O P Q R S T U V W X Y Z A1 B1 C1 D1 E1 F1);

/// One character of a field's name, as a type: the name `at` is `(Ch<'a'>, Ch<'t'>)`, a
/// tuple field's `0` is `(Ch<'0'>,)`. `#[derive(Tangent)]` implements [`HasField`] for each of
/// the struct's fields under its name.
pub struct Ch<const C: char>;

/// The struct has a field named `N` (a tuple of [`Ch`]); implemented by `#[derive(Tangent)]`.
pub trait HasField<N> {}

/// The struct's fields are known by name: implemented by `#[derive(Tangent)]` (see
/// [`FieldsOf`]).
pub trait DerivedFields {}

/// The struct has every field named in `N`, a tuple of names (see [`FieldsOf`]).
pub trait HasFields<N> {}

macro_rules! has_fields {
    ($($n:ident)*) => {
        impl<S $(, $n)*> HasFields<($($n,)*)> for S where $(S: HasField<$n>),* {}
    };
}

has_fields!(A);
has_fields!(A B);
has_fields!(A B C);
has_fields!(A B C D);
has_fields!(A B C D E);
has_fields!(A B C D E F);
has_fields!(A B C D E F G);
has_fields!(A B C D E F G H);
has_fields!(A B C D E F G H I);
has_fields!(A B C D E F G H I J);
has_fields!(A B C D E F G H I J K);
has_fields!(A B C D E F G H I J K L);
has_fields!(A B C D E F G H I J K L M);
has_fields!(A B C D E F G H I J K L M N);
has_fields!(A B C D E F G H I J K L M N O);
has_fields!(A B C D E F G H I J K L M N O P);

/// The change of a struct built by a literal (`Pose { at: a, angle: b }`, `Pair(a, b)`),
/// before the sweep reads its fields (`d.at`): `(&&FieldsOf::<N, _>::of(&d)).lens_fields(d)`,
/// `N` the literal's field names.
/// - [`FieldsKnown`]: the struct derives `Tangent` and has every field named: `d`.
/// - [`FieldsUnknown`]: it derives `Tangent` and lacks one of them. The literal as written
///   is rustc's one error there (E0560, E0061); the value read is of a type inferred from
///   nothing, whose field reads rustc does not report again in a body that has an error
///   (where `d.angel` was a second error, E0609). Never built: the crate has that error.
/// - [`FieldsAsIs`]: a struct whose `Tangent` is written by hand: `d`, its fields read as
///   they are.
pub struct FieldsOf<N, S>(PhantomData<fn() -> (N, S)>);

// Copied out of the references `FieldsAsIs` is found through.
impl<N, S> Clone for FieldsOf<N, S> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<N, S> Copy for FieldsOf<N, S> {}

impl<N, S> FieldsOf<N, S> {
    /// For the change `_d`.
    #[inline(always)]
    pub fn of(_d: &S) -> Self {
        FieldsOf(PhantomData)
    }
}

/// Every field named is the struct's (see [`FieldsOf`]).
pub trait FieldsKnown<S> {
    /// `d`.
    fn lens_fields(self, d: S) -> S;
}

impl<N, S: HasFields<N>> FieldsKnown<S> for &&FieldsOf<N, S> {
    #[inline(always)]
    fn lens_fields(self, d: S) -> S {
        d
    }
}

/// A field named is not the struct's (see [`FieldsOf`]).
pub trait FieldsUnknown<S> {
    /// Never returns.
    fn lens_fields<W>(self, d: S) -> W;
}

impl<N, S: DerivedFields> FieldsUnknown<S> for &FieldsOf<N, S> {
    fn lens_fields<W>(self, _d: S) -> W {
        #[allow(clippy::let_unit_value)]
        let () = Typed::<W, S>::MISMATCH;
        unreachable!()
    }
}

/// A struct whose fields are not known by name (see [`FieldsOf`]).
pub trait FieldsAsIs<S> {
    /// `d`.
    fn lens_fields(self, d: S) -> S;
}

impl<N, S> FieldsAsIs<S> for FieldsOf<N, S> {
    #[inline(always)]
    fn lens_fields(self, d: S) -> S {
        d
    }
}

/// The receiver of a float method of several operands (`x.max(y)`, `x.powf(a)`), for the
/// function as written, which reads each further operand through `Tie::of(&x).lens_tie(y)`.
/// The rules (`MaxRule::max_vjp(self, y: Self)`) take every operand at the receiver's type,
/// and are implemented for `f32` and `f64`. On a float receiver [`TieFloat`] hands the
/// operand on at that type, so one of another precision is rustc's mismatch at the operand,
/// with its suggestion (`y.into()`). On any other receiver (a matrix: `m.powf(2.0)`) the
/// rule is not implemented, which is the error to report; [`TieOther`], one autoref step
/// later, takes the operand at any type, so that rustc does not add a mismatch of the operand
/// against the matrix type. It is never run: the crate does not build. (A type of the user's
/// that implements a rule trait itself is read as "not a float" here too, and fails the
/// build with [`Typed::MISMATCH`].)
pub struct Tie<S>(PhantomData<fn() -> S>);

impl<S> Tie<S> {
    /// The receiver's type.
    #[inline(always)]
    pub fn of(_receiver: &S) -> Self {
        Tie(PhantomData)
    }
}

/// A float receiver: the operand at its type. The type is an associated type, not a
/// parameter of the method: rustc then does not say that the operand "influences the return
/// type of `lens_tie`" when it is of another precision.
pub trait TieFloat {
    /// The receiver's type.
    type Scalar;
    /// `a`.
    fn lens_tie(self, a: Self::Scalar) -> Self::Scalar;
}

impl<S: crate::Real> TieFloat for Tie<S> {
    type Scalar = S;
    #[inline(always)]
    fn lens_tie(self, a: S) -> S {
        a
    }
}

/// Any other receiver: its rule is missing, and that is the error (see [`Tie`]).
pub trait TieOther {
    /// The receiver's type.
    type Scalar;
    /// Never returns.
    fn lens_tie<A>(self, a: A) -> Self::Scalar;
}

impl<S> TieOther for &Tie<S> {
    type Scalar = S;
    fn lens_tie<A>(self, _a: A) -> S {
        #[allow(clippy::let_unit_value)]
        let () = Typed::<S, A>::MISMATCH;
        unreachable!()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_of_the_named_type_passes_through() {
        let x: f64 = Typed::<f64, _>::new(1.5).lens_typed();
        assert_eq!(x, 1.5);
        let w = PhantomData::<[f32; 2]>;
        let v = Typed::like(w, [1.0, 2.0]).lens_typed();
        assert_eq!(v, [1.0_f32, 2.0]);
    }

    #[test]
    fn inference_follows_the_named_type() {
        // `Default::default()` and a literal take the witness's type, as they would as the
        // operand of a rule of that type.
        let a = Typed::<f32, _>::new(Default::default()).lens_typed();
        let b = Typed::<u8, _>::new(7).lens_typed();
        assert_eq!((a, b), (0.0_f32, 7_u8));
    }

    #[test]
    fn an_operand_of_unknown_type_takes_the_other_operands() {
        let w = 2.0_f64;
        let c = 1.5_f32;
        // `c.into()` alone is ambiguous (`f64`, `f128`, ...): it takes `w`'s type.
        let o = c.into();
        let x = Infer::of(&w, &o).lens_infer(o);
        assert_eq!(w + x, 3.5_f64);
        // An operand whose type is known keeps it.
        let y = Infer::of(&w, &c).lens_infer(c);
        let is_f32: f32 = y;
        assert_eq!(is_f32, 1.5);
    }

    #[test]
    fn a_factor_of_unknown_type_is_the_other_operands_scalar() {
        let c = 2.0_f32;
        let x = 1.5_f64;
        let o = c.into();
        let o = InferScalar::of(&x, &o).lens_infer_scalar(o);
        assert_eq!(x * o, 3.0_f64);
        let v = SMatrix::<f64, 3, 1>::new(1.0, 2.0, 3.0);
        let o = c.into();
        let o = InferScalar::of(&v, &o).lens_infer_scalar(o);
        assert_eq!(v * o, SMatrix::<f64, 3, 1>::new(2.0, 4.0, 6.0));
        #[cfg(feature = "alloc")]
        {
            let h = crate::HeapMatrix::<f64, 3, 1>::from_fn(|i, _| i as f64);
            let o = c.into();
            let o = InferScalar::of(&h, &o).lens_infer_scalar(o);
            let is_f64: f64 = o;
            assert_eq!(is_f64, 2.0);
        }
        // A matrix operand keeps its type (a product of two matrices).
        let m = SMatrix::<f64, 3, 3>::identity();
        let w = InferScalar::of(&m, &v).lens_infer_scalar(v);
        assert_eq!(m * w, v);
    }

    #[test]
    fn a_float_receiver_ties_its_operand() {
        let x = 2.0_f64;
        let t = Tie::of(&x);
        let a: f64 = t.lens_tie(3.0);
        assert_eq!(x.powf(a), 8.0);
        let y = 0.5_f32;
        let b = Tie::of(&y).lens_tie(0.25);
        assert_eq!(y.max(b), 0.5_f32);
    }

    #[test]
    fn changes_as_many_as_arguments_pass_through() {
        let c = (0.5_f64, SMatrix::<f32, 2, 1>::new(1.0, 2.0));
        let (a, b) = (&Spread::<2, _>::of(&c)).lens_spread(c);
        assert_eq!((a, b), c);
        let c = (1_u8, 2_u16, 3_u32);
        assert_eq!((&Spread::<3, _>::of(&c)).lens_spread(c), (1, 2, 3));
    }

    #[test]
    fn a_change_of_the_arguments_type_is_itself() {
        let x = 1.5_f64;
        let g = 0.25_f64;
        let w = crate::__private::witness(&x);
        assert_eq!((&&Change::like(w, &g)).lens_change(g), 0.25);
        let v = SMatrix::<f64, 2, 1>::new(1.0, 2.0);
        let w = crate::__private::witness(&v);
        assert_eq!((&&Change::like(w, &v)).lens_change(v), v);
    }
}
