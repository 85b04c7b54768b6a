//! The rules of `+ - * /` as the reverse sweep of `#[lens]` runs them: the rule when it takes
//! the operands' types, and otherwise nothing reported (see `lens_core::guard`).
//!
//! The function as written runs the same rule (`AddRule::add_vjp(a, b)`) and reports a
//! missing one there ("no reverse rule for `f64 * f32`"). Rustc merges the sweep's copy of
//! that error only when the two are identical to the byte, and they were not always: in a loop
//! each named its own file for the long type of the impl it suggested, and in a generic
//! function the where clause made rustc convert the operand, with another message. The sweep
//! therefore runs `Binary::<tag::Mul, _, _>::of(&a, &b).lens_dispatch().lens_rule(a, b)`:
//! [`Binary::lens_dispatch`] resolves to [`Dispatch`] when the operand types have the rule
//! and gives [`Rule`], which runs it; otherwise, one autoref step later, to [`Mismatch`],
//! which gives [`Pick`], whose `lens_rule` has a value of the type the rest of the sweep most
//! likely expects and is never built.
//!
//! Only types go through the dispatch (the values are zero-sized); the operands go straight
//! to the rule, so that a debug build does not copy them once more per step.

use super::{AddRule, DivRule, MulRule, SubRule};
use crate::guard::Typed;
use core::marker::PhantomData;
use nalgebra::{SMatrix, Scalar};

/// The operator a [`Binary`] runs.
pub mod tag {
    /// `+`.
    pub enum Add {}
    /// `-`.
    pub enum Sub {}
    /// `*`.
    pub enum Mul {}
    /// `/`.
    pub enum Div {}
    /// `+=`: as `+`, and without a rule the left operand's type, which the assignment keeps.
    pub enum AddAssign {}
    /// `-=`.
    pub enum SubAssign {}
    /// `*=`.
    pub enum MulAssign {}
    /// `/=`.
    pub enum DivAssign {}

    /// The operators of an expression (not of an assignment), whose value without a rule
    /// may take the other operand's type (`PickMatrix`).
    pub trait Expression {}
    impl Expression for Add {}
    impl Expression for Sub {}
    impl Expression for Mul {}
    impl Expression for Div {}
}

/// Markers of the types `R`, `A` and `B`, with no value.
type Types<R, A, B> = PhantomData<(fn() -> R, fn() -> A, fn() -> B)>;

/// The types of the operands of the operator `R` (a [`tag`]).
pub struct Binary<R, A, B>(Types<R, A, B>);

impl<R, A, B> Binary<R, A, B> {
    /// The types of `a` and `b`.
    #[inline(always)]
    pub fn of(_a: &A, _b: &B) -> Self {
        Binary(PhantomData)
    }
}

/// `A R B` has a rule.
pub struct Rule<R, A, B>(Types<R, A, B>);

/// The operand types have the rule.
pub trait Dispatch<R, A, B> {
    /// The rule to run.
    fn lens_dispatch(self) -> Rule<R, A, B>;
}

macro_rules! rules {
    ($($tag:ident $rule:ident $f:ident $left:ident $right:ident),*) => {$(
        impl<A: $rule<B>, B> Dispatch<tag::$tag, A, B> for Binary<tag::$tag, A, B> {
            #[inline(always)]
            fn lens_dispatch(self) -> Rule<tag::$tag, A, B> {
                Rule(PhantomData)
            }
        }

        impl<A: $rule<B>, B> Rule<tag::$tag, A, B> {
            /// The rule: the value and its pullback.
            #[inline(always)]
            pub fn lens_rule(self, a: A, b: B) -> (A::Out, impl FnOnce(A::Out) -> (A, B)) {
                a.$f(b)
            }
            /// The rule when only `a` is differentiated: its change alone.
            #[inline(always)]
            pub fn lens_rule_left(self, a: A, b: B) -> (A::Out, impl FnOnce(A::Out) -> A) {
                a.$left(b)
            }
            /// The rule when only `b` is differentiated: its change alone.
            #[inline(always)]
            pub fn lens_rule_right(self, a: A, b: B) -> (A::Out, impl FnOnce(A::Out) -> B) {
                a.$right(b)
            }
        }
    )*};
}
rules!(
    Add AddRule add_vjp add_vjp_left add_vjp_right,
    Sub SubRule sub_vjp sub_vjp_left sub_vjp_right,
    Mul MulRule mul_vjp mul_vjp_left mul_vjp_right,
    Div DivRule div_vjp div_vjp_left div_vjp_right,
    AddAssign AddRule add_vjp add_vjp_left add_vjp_right,
    SubAssign SubRule sub_vjp sub_vjp_left sub_vjp_right,
    MulAssign MulRule mul_vjp mul_vjp_left mul_vjp_right,
    DivAssign DivRule div_vjp div_vjp_left div_vjp_right
);

/// No rule takes the operand types: the function as written reports it.
pub trait Mismatch<R, A, B> {
    /// The type to go on with.
    fn lens_dispatch(self) -> Pick<R, A, B>;
}

impl<R, A, B> Mismatch<R, A, B> for &Binary<R, A, B> {
    #[inline(always)]
    fn lens_dispatch(self) -> Pick<R, A, B> {
        Pick(PhantomData)
    }
}

/// The type the sweep gives the value of an operation `R` with no rule, so that what follows
/// it finds the type it would most likely have had: the matrix operand's of a scalar and a
/// matrix (`x * v` of two precisions), the product's shape of two matrices (`m * v` whose
/// inner sizes differ), and otherwise, and always for a compound assignment (`s += v`, whose
/// binding keeps its type), the left operand's. Its `lens_rule` is never built.
pub struct Pick<R, A, B>(Types<R, A, B>);

/// A scalar and a matrix: the matrix's type.
pub trait PickMatrix<A, B> {
    /// Never returns. (Function pointers for the pullbacks of every `Pick`: an opaque type
    /// on `&Pick` would borrow the temporary.)
    fn lens_rule(self, a: A, b: B) -> (B, fn(B) -> (A, B));
    /// Never returns.
    fn lens_rule_left(self, a: A, b: B) -> (B, fn(B) -> A);
    /// Never returns.
    fn lens_rule_right(self, a: A, b: B) -> (B, fn(B) -> B);
}

impl<R: tag::Expression, A: crate::Real, B: MatrixOperand> PickMatrix<A, B> for Pick<R, A, B> {
    fn lens_rule(self, _: A, _: B) -> (B, fn(B) -> (A, B)) {
        mismatch::<A, B>()
    }
    fn lens_rule_left(self, _: A, _: B) -> (B, fn(B) -> A) {
        mismatch::<A, B>()
    }
    fn lens_rule_right(self, _: A, _: B) -> (B, fn(B) -> B) {
        mismatch::<A, B>()
    }
}

/// The body of every `Pick`'s `lens_rule`: a compile-time failure when built (it never is:
/// the function as written reports the mismatch first).
fn mismatch<A, B>() -> ! {
    #[allow(clippy::let_unit_value)]
    let () = Typed::<A, B>::MISMATCH;
    unreachable!()
}

/// Two matrices multiplied: the product's shape, the left one's scalar type.
pub trait PickProduct<A, B> {
    /// The product's type.
    type Value;
    /// Never returns.
    fn lens_rule(self, a: A, b: B) -> (Self::Value, fn(Self::Value) -> (A, B));
    /// Never returns.
    fn lens_rule_left(self, a: A, b: B) -> (Self::Value, fn(Self::Value) -> A);
    /// Never returns.
    fn lens_rule_right(self, a: A, b: B) -> (Self::Value, fn(Self::Value) -> B);
}

impl<T: Scalar, U, const R: usize, const K: usize, const L: usize, const C: usize>
    PickProduct<SMatrix<T, R, K>, SMatrix<U, L, C>>
    for Pick<tag::Mul, SMatrix<T, R, K>, SMatrix<U, L, C>>
{
    type Value = SMatrix<T, R, C>;
    #[allow(clippy::type_complexity)]
    fn lens_rule(
        self,
        _: SMatrix<T, R, K>,
        _: SMatrix<U, L, C>,
    ) -> (
        SMatrix<T, R, C>,
        fn(SMatrix<T, R, C>) -> (SMatrix<T, R, K>, SMatrix<U, L, C>),
    ) {
        mismatch::<SMatrix<T, R, K>, SMatrix<U, L, C>>()
    }
    fn lens_rule_left(
        self,
        _: SMatrix<T, R, K>,
        _: SMatrix<U, L, C>,
    ) -> (SMatrix<T, R, C>, fn(SMatrix<T, R, C>) -> SMatrix<T, R, K>) {
        mismatch::<SMatrix<T, R, K>, SMatrix<U, L, C>>()
    }
    fn lens_rule_right(
        self,
        _: SMatrix<T, R, K>,
        _: SMatrix<U, L, C>,
    ) -> (SMatrix<T, R, C>, fn(SMatrix<T, R, C>) -> SMatrix<U, L, C>) {
        mismatch::<SMatrix<T, R, K>, SMatrix<U, L, C>>()
    }
}

#[cfg(feature = "alloc")]
impl<T: crate::Real, U: crate::Real, const R: usize, const K: usize, const L: usize, const C: usize>
    PickProduct<crate::HeapMatrix<T, R, K>, crate::HeapMatrix<U, L, C>>
    for Pick<tag::Mul, crate::HeapMatrix<T, R, K>, crate::HeapMatrix<U, L, C>>
{
    type Value = crate::HeapMatrix<T, R, C>;
    #[allow(clippy::type_complexity)]
    fn lens_rule(
        self,
        _: crate::HeapMatrix<T, R, K>,
        _: crate::HeapMatrix<U, L, C>,
    ) -> (
        crate::HeapMatrix<T, R, C>,
        fn(crate::HeapMatrix<T, R, C>) -> (crate::HeapMatrix<T, R, K>, crate::HeapMatrix<U, L, C>),
    ) {
        mismatch::<crate::HeapMatrix<T, R, K>, crate::HeapMatrix<U, L, C>>()
    }
    #[allow(clippy::type_complexity)]
    fn lens_rule_left(
        self,
        _: crate::HeapMatrix<T, R, K>,
        _: crate::HeapMatrix<U, L, C>,
    ) -> (
        crate::HeapMatrix<T, R, C>,
        fn(crate::HeapMatrix<T, R, C>) -> crate::HeapMatrix<T, R, K>,
    ) {
        mismatch::<crate::HeapMatrix<T, R, K>, crate::HeapMatrix<U, L, C>>()
    }
    #[allow(clippy::type_complexity)]
    fn lens_rule_right(
        self,
        _: crate::HeapMatrix<T, R, K>,
        _: crate::HeapMatrix<U, L, C>,
    ) -> (
        crate::HeapMatrix<T, R, C>,
        fn(crate::HeapMatrix<T, R, C>) -> crate::HeapMatrix<U, L, C>,
    ) {
        mismatch::<crate::HeapMatrix<T, R, K>, crate::HeapMatrix<U, L, C>>()
    }
}

#[cfg(feature = "alloc")]
impl<T: crate::Real, U: crate::Real, const R: usize, const K: usize, const L: usize, const C: usize>
    PickProduct<SMatrix<T, R, K>, crate::HeapMatrix<U, L, C>>
    for Pick<tag::Mul, SMatrix<T, R, K>, crate::HeapMatrix<U, L, C>>
{
    type Value = crate::HeapMatrix<T, R, C>;
    #[allow(clippy::type_complexity)]
    fn lens_rule(
        self,
        _: SMatrix<T, R, K>,
        _: crate::HeapMatrix<U, L, C>,
    ) -> (
        crate::HeapMatrix<T, R, C>,
        fn(crate::HeapMatrix<T, R, C>) -> (SMatrix<T, R, K>, crate::HeapMatrix<U, L, C>),
    ) {
        mismatch::<SMatrix<T, R, K>, crate::HeapMatrix<U, L, C>>()
    }
    fn lens_rule_left(
        self,
        _: SMatrix<T, R, K>,
        _: crate::HeapMatrix<U, L, C>,
    ) -> (
        crate::HeapMatrix<T, R, C>,
        fn(crate::HeapMatrix<T, R, C>) -> SMatrix<T, R, K>,
    ) {
        mismatch::<SMatrix<T, R, K>, crate::HeapMatrix<U, L, C>>()
    }
    #[allow(clippy::type_complexity)]
    fn lens_rule_right(
        self,
        _: SMatrix<T, R, K>,
        _: crate::HeapMatrix<U, L, C>,
    ) -> (
        crate::HeapMatrix<T, R, C>,
        fn(crate::HeapMatrix<T, R, C>) -> crate::HeapMatrix<U, L, C>,
    ) {
        mismatch::<SMatrix<T, R, K>, crate::HeapMatrix<U, L, C>>()
    }
}

#[cfg(feature = "alloc")]
impl<T: crate::Real, U: crate::Real, const R: usize, const K: usize, const L: usize, const C: usize>
    PickProduct<crate::HeapMatrix<T, R, K>, SMatrix<U, L, C>>
    for Pick<tag::Mul, crate::HeapMatrix<T, R, K>, SMatrix<U, L, C>>
{
    type Value = crate::HeapMatrix<T, R, C>;
    #[allow(clippy::type_complexity)]
    fn lens_rule(
        self,
        _: crate::HeapMatrix<T, R, K>,
        _: SMatrix<U, L, C>,
    ) -> (
        crate::HeapMatrix<T, R, C>,
        fn(crate::HeapMatrix<T, R, C>) -> (crate::HeapMatrix<T, R, K>, SMatrix<U, L, C>),
    ) {
        mismatch::<crate::HeapMatrix<T, R, K>, SMatrix<U, L, C>>()
    }
    fn lens_rule_left(
        self,
        _: crate::HeapMatrix<T, R, K>,
        _: SMatrix<U, L, C>,
    ) -> (
        crate::HeapMatrix<T, R, C>,
        fn(crate::HeapMatrix<T, R, C>) -> crate::HeapMatrix<T, R, K>,
    ) {
        mismatch::<crate::HeapMatrix<T, R, K>, SMatrix<U, L, C>>()
    }
    #[allow(clippy::type_complexity)]
    fn lens_rule_right(
        self,
        _: crate::HeapMatrix<T, R, K>,
        _: SMatrix<U, L, C>,
    ) -> (
        crate::HeapMatrix<T, R, C>,
        fn(crate::HeapMatrix<T, R, C>) -> SMatrix<U, L, C>,
    ) {
        mismatch::<crate::HeapMatrix<T, R, K>, SMatrix<U, L, C>>()
    }
}

/// Matrices, static and heap ones (for [`PickMatrix`]).
pub trait MatrixOperand {}

impl<T, R, C, S> MatrixOperand for nalgebra::Matrix<T, R, C, S> {}

#[cfg(feature = "alloc")]
impl<T: crate::Real, const R: usize, const C: usize> MatrixOperand for crate::HeapMatrix<T, R, C> {}

/// Otherwise: the left operand's type.
pub trait PickLeft<A, B> {
    /// Never returns.
    fn lens_rule(self, a: A, b: B) -> (A, fn(A) -> (A, B));
    /// Never returns.
    fn lens_rule_left(self, a: A, b: B) -> (A, fn(A) -> A);
    /// Never returns.
    fn lens_rule_right(self, a: A, b: B) -> (A, fn(A) -> B);
}

impl<R, A, B> PickLeft<A, B> for &Pick<R, A, B> {
    fn lens_rule(self, _: A, _: B) -> (A, fn(A) -> (A, B)) {
        mismatch::<A, B>()
    }
    fn lens_rule_left(self, _: A, _: B) -> (A, fn(A) -> A) {
        mismatch::<A, B>()
    }
    fn lens_rule_right(self, _: A, _: B) -> (A, fn(A) -> B) {
        mismatch::<A, B>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rule_runs_when_it_takes_the_operands() {
        let (a, b) = (3.0_f64, 2.0_f64);
        let (v, pb) = Binary::<tag::Mul, _, _>::of(&a, &b)
            .lens_dispatch()
            .lens_rule(a, b);
        assert_eq!(v, 6.0);
        assert_eq!(pb(1.0), (2.0, 3.0));
        // A literal takes the other operand's type, as with the rule itself.
        let a = 3.0_f32;
        let (v, _) = Binary::<tag::Sub, _, _>::of(&a, &1.0)
            .lens_dispatch()
            .lens_rule(a, 1.0);
        assert_eq!(v, 2.0_f32);
    }
}
