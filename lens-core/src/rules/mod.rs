//! Primitive reverse rules: one item per primitive, forward and reverse side by side.
//!
//! Every rule returns the forward value together with its pullback, the reverse derivative
//! at that point. The `#[lens]` macro maps each operation of a body to one of these items
//! (the operator to a trait, the operand types pick the impl), so this module reads as the
//! table of reverse rules of the category:
//!
//! | primitive | forward | reverse (given change `d`) |
//! |---|---|---|
//! | `x + y` | sum | `(d, d)` |
//! | `x - y` | difference | `(d, -d)` |
//! | `x * x`, `x.dot(&x)`, `x.component_mul(&x)` | squares | one change `2 x d` (`d x^T + x^T d` for a square matrix, static or heap) |
//! | `x * y` | product | `(d y, x d)` (matrices: `(d y^T, x^T d)`; heap matrices by [`crate::gemm`]) |
//! | `x / y` | quotient | `(d / y, -d x / y^2)` |
//! | `-x` | negation | `-d` |
//! | `exp ln sqrt sin cos tan tanh sinh cosh asin acos atan log2 log10 exp2 abs recip` | the function | `d f'(x)` |
//! | `atan2`, `hypot` | the function | `(d x, -d y) / (x^2 + y^2)`; `(d x, d y) / h` |
//! | `x.mul_add(a, b)`, `x.clamp(lo, hi)` | `x a + b`; clamping | `(d a, d x, d)`; `d` to the operand that is the value |
//! | `norm`, `norm_squared`, `mean`, `max()`, `min()` on matrices | reductions | `d a / \|a\|`; `2 d a`; `d / n` everywhere; `d` at the extreme entry |
//! | `component_div` (static and heap matrices) | `a ⊘ b` | `(d ⊘ b, -d ∘ a ⊘ b^2)` |
//! | `floor ceil round trunc signum` | step functions | no change (zero where defined) |
//! | `powi(n)`, `powf(a)` | powers | `d n x^(n-1)`; `(d a x^(a-1), d y ln x)` |
//! | `max`, `min` | the chosen operand | `d` to the chosen operand (ties: the first) |
//! | `transpose`, `dot`, `component_mul`, `sum` (static and heap matrices) | nalgebra | transpose; `(d y, d x)`; `(d∘y, d∘x)`; broadcast |
//! | `map(f)` | entry-wise `f` | entry-wise `f_rev` |
//! | `x[i]`, `m[(r, c)]`, `a[i]` | the entry | `d` added into the adjoint at that place |
//! | `x[i] = e` (also `m[(r, c)]`, `a[i]`, and `+=` ...) | `x` with the entry replaced | `(d` with zero there, `d[i])` |
//! | activations | see [`activation`] | |
//! | `x ^ y`, `x & y`, `x \| y`, `!x` on `u64` | Z2 words | `(d, d)`, `(y&d, x&d)`, `(!y&d, !x&d)`, `d` |
//!
//! Where one operand of `+ - * /`, `dot`, `component_mul` or `component_div` is forward-only
//! data, the macros run the rule's one-sided form (`MulRule::mul_vjp_left`,
//! `Dot::dot_vjp_right`, `component_div_left`, ...), whose pullback computes the other
//! operand's change alone.
//!
//! Every rule is checked against central finite differences in `tests/rules.rs` and
//! `tests/methods.rs`, and at its edges (zeros, kinks, infinities, NaN) in `tests/edges.rs`.

pub mod activation;
mod binary;
pub mod checked;
mod entrywise;
mod float;
mod index;
mod matrix;
mod unary;
mod z2;

pub use binary::{AddRule, DivRule, MulRule, NegRule, SquareRule, SubRule};

/// No value has this type. The rules of `+`, `-` and `/` have a second impl for it, so that
/// the operand type is never inferred from a single impl: `x + y` with `x: f64`, `y: f32` is
/// then the rule's own error ("no reverse rule for `f64 + f32`") at the operator, not a
/// mismatch with an impossible suggestion (`acc +.into()= y`) followed by errors at
/// `#[lens]`. The operators are no less inferable than they were as written: `f64` has many
/// `Add` impls. The rules of methods (`max`, `powf`) have none, as the methods take `f64`
/// and `x.max(c.into())` is valid Rust. `#[diagnostic::do_not_recommend]` keeps these impls
/// out of the help.
#[doc(hidden)]
#[derive(Clone, Copy, Debug)]
pub enum Unmatched {}

/// The second impl of each rule trait named (see [`Unmatched`]), for each left operand type
/// that has a first: scalars, static and heap matrices. Not one blanket impl over every
/// type: rustdoc listed that on every page of the facade, even hidden.
macro_rules! unmatched {
    ($($rule:ident :: $f:ident),* $(,)?) => {$(
        unmatched!(@impl $rule :: $f, [T: crate::Real], T);
        unmatched!(@impl $rule :: $f, [T: crate::Real, const R: usize, const C: usize], nalgebra::SMatrix<T, R, C>);
        #[cfg(feature = "alloc")]
        unmatched!(@impl $rule :: $f, [T: crate::Real, const R: usize, const C: usize], crate::HeapMatrix<T, R, C>);
    )*};
    (@impl $rule:ident :: $f:ident, [$($g:tt)*], $x:ty) => {
        // Not API: hidden from the types' pages.
        #[doc(hidden)]
        #[diagnostic::do_not_recommend]
        impl<$($g)*> $rule<Unmatched> for $x {
            type Out = Unmatched;
            fn $f(self, rhs: Unmatched) -> (Unmatched, impl FnOnce(Unmatched) -> (Self, Unmatched)) {
                let never: Unmatched = rhs;
                (never, move |_: Unmatched| match never {})
            }
        }
    };
}
unmatched!(AddRule::add_vjp, SubRule::sub_vjp, DivRule::div_vjp);

pub use float::{Atan2Rule, ClampRule, HypotRule, MulAddRule};
pub use index::{
    BuildRule, IndexRule, SetAt, SetDispatch, SetMismatch, SetOf, SetPick, SetRule, set_checked,
};
pub use matrix::{
    ComponentOperand, ComponentProduct, Dot, Owned, Reduce, Transpose, component_div,
    component_mul, component_square, dot, dot_self, max_entry, mean, min_entry, norm, norm_squared,
    owned, sum, transpose,
};
pub use unary::*;
pub use z2::{AndRule, NotRule, OrRule, XorRule};

/// `v.map(f)` in the reverse sweep `#[lens]` generates (`map_checked!(v, f, f_rev)`): the
/// types of `v`, `f` and `f_rev`, for [`MapDispatch`] to pick [`map_vjp`] when `f` takes the
/// entries' type. When it takes another, the function as written
/// (`map_written!(v, f)`) reports the error once, and method resolution picks
/// [`MapMismatch`] one autoref step later, whose value has the vector's type, so the sweep
/// reports nothing more (see `lens_core::guard`). `f_rev` is checked once `map_vjp` is
/// picked: a function whose reverse does not fit (a `#[nodiff]` argument) is an error there.
#[doc(hidden)]
pub struct MapOf<V, F, R>(core::marker::PhantomData<(fn() -> V, fn() -> F, fn() -> R)>);

impl<V, F, R> MapOf<V, F, R> {
    /// The types of `v`, `f` and `f_rev`.
    #[inline(always)]
    pub fn of(_v: &V, _f: &F, _f_rev: &R) -> Self {
        MapOf(core::marker::PhantomData)
    }
}

/// `f` takes the entries' type: [`map_vjp`] runs.
#[doc(hidden)]
pub struct MapRule<V, F, R>(core::marker::PhantomData<(fn() -> V, fn() -> F, fn() -> R)>);

impl<V: crate::activation::Elementwise, F: Fn(V::Scalar) -> V::Scalar + Copy, R> MapRule<V, F, R> {
    /// [`map_vjp`], with `f_rev` the reverse tied to its function (`f_lens_rev`, see
    /// `lens_core::tie`): it must be `f`'s own.
    #[inline(always)]
    pub fn lens_map(self, v: V, f: F, f_rev: R) -> (V, impl FnOnce(V) -> V)
    where
        R: Fn(V::Scalar, V::Scalar) -> crate::tie::Tied<V::Scalar, (V::Scalar,)>,
    {
        map_vjp(v, f, move |x, d| f_rev(x, d).lens_tie(&f))
    }
}

/// [`MapOf`] whose `f` takes the entries' type.
#[doc(hidden)]
pub trait MapDispatch<V, F, R> {
    /// [`MapRule`].
    fn lens_dispatch(self) -> MapRule<V, F, R>;
}

impl<V, F, R> MapDispatch<V, F, R> for MapOf<V, F, R>
where
    V: crate::activation::Elementwise,
    F: Fn(V::Scalar) -> V::Scalar,
{
    #[inline(always)]
    fn lens_dispatch(self) -> MapRule<V, F, R> {
        MapRule(core::marker::PhantomData)
    }
}

/// [`MapOf`] whose `f` takes another type: never built (see [`MapOf`]).
#[doc(hidden)]
pub trait MapMismatch<V, F, R> {
    /// [`MapPick`].
    fn lens_dispatch(self) -> MapPick<V, F, R>;
}

impl<V, F, R> MapMismatch<V, F, R> for &MapOf<V, F, R> {
    #[inline(always)]
    fn lens_dispatch(self) -> MapPick<V, F, R> {
        MapPick(core::marker::PhantomData)
    }
}

/// The vector's type, for a `map` whose function takes another type (see [`MapOf`]).
#[doc(hidden)]
pub struct MapPick<V, F, R>(core::marker::PhantomData<(fn() -> V, fn() -> F, fn() -> R)>);

impl<V, F, R> MapPick<V, F, R> {
    /// Never returns.
    pub fn lens_map(self, _v: V, _f: F, _f_rev: R) -> (V, fn(V) -> V) {
        #[allow(clippy::let_unit_value)]
        let () = crate::guard::Typed::<V, (F, R)>::MISMATCH;
        unreachable!()
    }
}

/// `v.map(f)` in the reverse sweep (see [`MapOf`]).
#[doc(hidden)]
#[macro_export]
macro_rules! __map_checked {
    ($v:expr, $f:expr, $f_rev:expr $(,)?) => {{
        use $crate::__private::rules::{MapDispatch as _, MapMismatch as _};
        let v = $v;
        $crate::__private::rules::MapOf::of(&v, &$f, &$f_rev)
            .lens_dispatch()
            .lens_map(v, $f, $f_rev)
    }};
}
#[doc(hidden)]
pub use crate::__map_checked as map_checked;

/// `v.map(f)` in the function as written (`map_written!`): `f` is read once as a function
/// pointer of the entries' type ([`map_type`]), so an `f` of another type is one mismatch of
/// types there, with no suggestion (a bound `Fn(V::Scalar)` was rustc's mismatch of
/// signatures suggesting to wrap `f` in a closure, which `map` in a `#[lens]` function
/// refuses); the value is computed with `f` itself, statically dispatched, through
/// [`MapWritten`]: [`MapWrittenExact`] when `f` takes the entries' type, else
/// [`MapWrittenOther`] one autoref step later, which reports nothing more and is never built
/// (the crate has the mismatch).
#[doc(hidden)]
pub struct MapWritten<V, F>(core::marker::PhantomData<(fn() -> V, fn() -> F)>);

impl<V, F> MapWritten<V, F> {
    /// The types of `v` and `f`.
    #[inline(always)]
    pub fn of(_v: &V, _f: &F) -> Self {
        MapWritten(core::marker::PhantomData)
    }
}

/// `f` as a function of the entries' type (see [`MapWritten`]).
#[doc(hidden)]
#[inline(always)]
pub fn map_type<V: crate::activation::Elementwise>(_v: &V, _f: fn(V::Scalar) -> V::Scalar) {}

/// [`MapWritten`] whose `f` takes the entries' type: the value.
#[doc(hidden)]
pub trait MapWrittenExact<V, F> {
    /// `(v.map(f), ())`.
    fn lens_map_written(self, v: V, f: F) -> (V, ());
}

impl<V, F> MapWrittenExact<V, F> for &&MapWritten<V, F>
where
    V: crate::activation::Elementwise,
    F: Fn(V::Scalar) -> V::Scalar,
{
    #[inline(always)]
    fn lens_map_written(self, v: V, f: F) -> (V, ()) {
        (v.map_entries(f), ())
    }
}

/// [`MapWritten`] whose `f` takes another type: never built.
#[doc(hidden)]
pub trait MapWrittenOther<V, F> {
    /// Never returns.
    fn lens_map_written(self, v: V, f: F) -> (V, ());
}

impl<V, F> MapWrittenOther<V, F> for &MapWritten<V, F> {
    fn lens_map_written(self, _v: V, _f: F) -> (V, ()) {
        #[allow(clippy::let_unit_value)]
        let () = crate::guard::Typed::<V, F>::MISMATCH;
        unreachable!()
    }
}

/// `v.map(f)` in the function as written (see [`MapWritten`]).
#[doc(hidden)]
#[macro_export]
macro_rules! __map_written {
    ($v:expr, $f:expr $(,)?) => {{
        use $crate::__private::rules::{MapWrittenExact as _, MapWrittenOther as _};
        let v = $v;
        // `f` as written (a function's path, read twice): its mismatch is reported at it.
        $crate::__private::rules::map_type(&v, $f);
        let f = $f;
        (&&$crate::__private::rules::MapWritten::of(&v, &f)).lens_map_written(v, f)
    }};
}
#[doc(hidden)]
pub use crate::__map_written as map_written;

/// `v.map(f)` for a scalar lens function `f` with reverse `f_rev`: entry-wise forward, and
/// reverse `d_i f'(v_i)` entry by entry.
#[inline]
pub fn map_vjp<V: crate::activation::Elementwise>(
    v: V,
    f: impl Fn(V::Scalar) -> V::Scalar,
    f_rev: impl Fn(V::Scalar, V::Scalar) -> V::Scalar,
) -> (V, impl FnOnce(V) -> V) {
    (
        v.map_entries(f),
        #[inline(always)]
        move |d: V| d.zip_entries(&v, |dv, x| f_rev(x, dv)),
    )
}
