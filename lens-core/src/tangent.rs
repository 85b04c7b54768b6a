//! Change spaces: the types that flow through lenses and their changes.

use crate::Real;
use nalgebra::SMatrix;

/// A change space: the values that flow backwards through a lens.
///
/// In paralens a type is its own change space (a change to an `SVector<f32, 4>` is an
/// `SVector<f32, 4>`). `accumulate` is the addition of the category: real addition for smooth
/// maps, XOR for bits. When a value is used twice, the changes coming back from its uses are
/// accumulated.
///
/// Parameter structs get this trait from `#[derive(Tangent)]`:
///
/// ```
/// use paralens::{Flat, Tangent};
/// use paralens::nalgebra::{SMatrix, SVector};
///
/// #[derive(Clone, Debug, Tangent)]
/// struct Affine {
///     w: SMatrix<f64, 2, 3>,
///     b: SVector<f64, 2>,
/// }
///
/// let mut p = Affine::zeros();
/// p.b[1] = 2.0;
/// p.accumulate(&p.clone());
/// assert_eq!(p.b[1], 4.0);
/// assert_eq!(Flat::<f64>::flat_len(&p), 8);
/// ```
pub trait Tangent: Clone {
    /// The zero change (the unit of `accumulate`).
    #[must_use]
    fn zeros() -> Self;
    /// Adds `other` into `self` (`self += other`; XOR for bits).
    fn accumulate(&mut self, other: &Self);
    /// The zero change in a box. Large static matrices override it to build the zeros in the
    /// allocation itself: `Box::new(zeros())` builds them on the stack first (400 KB for a
    /// 784x128 layer).
    #[cfg(feature = "alloc")]
    #[must_use]
    fn boxed_zeros() -> alloc::boxed::Box<Self> {
        alloc::boxed::Box::new(Self::zeros())
    }
}

/// A change space seen as a sequence of flat slices of scalars `T`.
///
/// Optimizers walk all parameters through this view, one slice per stored array (one slice
/// for a matrix, one per field for a struct), so they never need to know a model's shape.
#[diagnostic::on_unimplemented(
    message = "`{Self}` does not hold `{T}` scalars",
    label = "parameters of another scalar type than `{T}`",
    note = "a model's parameters, its loss and its optimizer share one scalar type: an optimizer built at one (`Adam::new(0.01f32)`, `Sgd::<f64>::new(0.1)`) updates parameters of that scalar only, and a layer written without its scalar (`Dense<4, 8>`) is `f32` (`Dense<4, 8, f64>` for `f64`)"
)]
pub trait Flat<T: Copy + 'static>: Tangent {
    /// The scalars of `self`, as consecutive slices in a fixed order.
    fn slices(&self) -> impl Iterator<Item = &[T]>;
    /// The scalars of `self`, mutably, in the same order as [`Flat::slices`].
    fn slices_mut(&mut self) -> impl Iterator<Item = &mut [T]>;

    /// Calls `f` on each slice, in the order of [`Flat::slices`], structurally (see
    /// [`Flat::zip2_slices`]).
    #[inline]
    fn visit_slices(&self, f: &mut impl FnMut(&[T])) {
        for x in self.slices() {
            f(x);
        }
    }

    /// Calls `f` on corresponding slices of `self` and `a`, in the order of
    /// [`Flat::slices`]. Implementations recurse through the structure instead of running
    /// iterators, so each slice's fixed length stays visible to the compiler (optimizer loops
    /// over static matrices then unroll and vectorise like hand-written ones).
    #[inline]
    fn zip2_slices(&mut self, a: &Self, f: &mut impl FnMut(&mut [T], &[T])) {
        for (x, y) in self.slices_mut().zip(a.slices()) {
            f(x, y);
        }
    }

    /// Like [`Flat::zip2_slices`], over three values.
    #[inline]
    fn zip3_slices(
        &mut self,
        a: &Self,
        b: &mut Self,
        f: &mut impl FnMut(&mut [T], &[T], &mut [T]),
    ) {
        for ((x, y), z) in self.slices_mut().zip(a.slices()).zip(b.slices_mut()) {
            f(x, y, z);
        }
    }

    /// Like [`Flat::zip2_slices`], over four values.
    #[inline]
    fn zip4_slices(
        &mut self,
        a: &Self,
        b: &mut Self,
        c: &mut Self,
        f: &mut impl FnMut(&mut [T], &[T], &mut [T], &mut [T]),
    ) {
        let all = self
            .slices_mut()
            .zip(a.slices())
            .zip(b.slices_mut())
            .zip(c.slices_mut());
        for (((x, y), z), w) in all {
            f(x, y, z, w);
        }
    }
    /// Like [`Flat::zip2_slices`], with the second value mutable too (an update that clears
    /// each change as it reads it).
    #[inline]
    fn zip2_slices_mut(&mut self, a: &mut Self, f: &mut impl FnMut(&mut [T], &mut [T])) {
        for (x, y) in self.slices_mut().zip(a.slices_mut()) {
            f(x, y);
        }
    }

    /// Like [`Flat::zip4_slices`], with the second value mutable too (an optimizer that
    /// clears each change as it reads it).
    #[inline]
    fn zip4_slices_mut(
        &mut self,
        a: &mut Self,
        b: &mut Self,
        c: &mut Self,
        f: &mut impl FnMut(&mut [T], &mut [T], &mut [T], &mut [T]),
    ) {
        let all = self
            .slices_mut()
            .zip(a.slices_mut())
            .zip(b.slices_mut())
            .zip(c.slices_mut());
        for (((x, y), z), w) in all {
            f(x, y, z, w);
        }
    }

    /// The number of scalars.
    #[must_use]
    fn flat_len(&self) -> usize {
        self.slices().map(<[T]>::len).sum()
    }

    /// Multiplies every scalar by `s`.
    #[inline]
    fn scale(&mut self, s: T)
    where
        T: Real,
    {
        for sl in self.slices_mut() {
            for v in sl {
                *v *= s;
            }
        }
    }

    /// The inner product `<self, other>` (sum of products of all scalars).
    #[must_use]
    #[inline]
    fn dot_flat(&self, other: &Self) -> T
    where
        T: Real,
    {
        let mut acc = T::zero();
        for (a, b) in self.slices().zip(other.slices()) {
            for (x, y) in a.iter().zip(b) {
                acc += *x * *y;
            }
        }
        acc
    }

    /// `true` when no scalar is NaN or infinite.
    #[must_use]
    #[inline]
    fn all_finite(&self) -> bool
    where
        T: Real,
    {
        !crate::optim::any_non_finite_in(self)
    }
}

/// The field of a struct deriving [`Tangent`], as a [`Flat`] value: the derived `Flat` impl
/// is bounded by `Field: FlatField<S, T>` for each field type `T` and reaches the field
/// through [`FlatField::of`], not by `T: Flat<S>`. With a field type that does not resolve
/// (a typo in a `para!` model's layer), a bound on it directly made rustc report the derived
/// `slices` and `slices_mut` as "incompatible type for trait" (E0053) beside the one error
/// that matters; behind `Field` the bound is not on the unresolved type itself and rustc
/// reports that error alone.
#[doc(hidden)]
pub struct Field;

/// `T` as a [`Flat`] value (see [`Field`]).
#[doc(hidden)]
pub trait FlatField<S: Copy + 'static, T> {
    /// `T` itself.
    type Of: Flat<S>;
    /// `x`.
    fn of(x: &T) -> &Self::Of;
    /// `x`.
    fn of_mut(x: &mut T) -> &mut Self::Of;
}

impl<S: Copy + 'static, T: Flat<S>> FlatField<S, T> for Field {
    type Of = T;
    #[inline(always)]
    fn of(x: &T) -> &T {
        x
    }
    #[inline(always)]
    fn of_mut(x: &mut T) -> &mut T {
        x
    }
}

/// A field of a struct deriving [`Tangent`] whose type names none of the struct's generics
/// (`n: usize`), as the derived `accumulate` reaches it. The derived impl is not bounded by
/// such a type's `Tangent`: that bound is decided where the struct is written, and when it
/// failed, rustc reported it there and again at every use of the struct (a `#[lens]`
/// argument of that type: a second error at `#[lens]`, naming its internal `zeros_of`). The
/// derived `zeros` calls the field type's own `zeros`, the one error (at the field's type);
/// `accumulate` goes through this, which resolves to [`FieldAccumulate`] when the type is
/// `Tangent` and otherwise, one autoref step later, to [`FieldAccumulateOther`], which is
/// never built (the crate has the error of `zeros`).
#[doc(hidden)]
pub struct FieldTangent<T>(pub core::marker::PhantomData<T>);

/// A field's `Tangent::accumulate` (see [`FieldTangent`]).
#[doc(hidden)]
pub trait FieldAccumulate<T> {
    /// `a.accumulate(b)`.
    fn lens_accumulate(&self, a: &mut T, b: &T);
}

impl<T: Tangent> FieldAccumulate<T> for FieldTangent<T> {
    #[inline(always)]
    fn lens_accumulate(&self, a: &mut T, b: &T) {
        a.accumulate(b);
    }
}

/// A field of a type that is not `Tangent`, whose error the derived `zeros` reports (see
/// [`FieldTangent`]).
#[doc(hidden)]
pub trait FieldAccumulateOther<T> {
    /// Never runs.
    fn lens_accumulate(&self, a: &mut T, b: &T);
}

impl<T> FieldAccumulateOther<T> for &FieldTangent<T> {
    #[cold]
    fn lens_accumulate(&self, _: &mut T, _: &T) {
        unreachable!("a field whose type is not `Tangent`, refused at its `zeros`")
    }
}

/// The `Flat` methods of a value stored as one slice, given how to borrow it.
macro_rules! single_slice {
    ($t:ty, $get:path, $get_mut:path) => {
        #[inline]
        fn slices(&self) -> impl Iterator<Item = &[$t]> {
            core::iter::once($get(self))
        }
        #[inline]
        fn slices_mut(&mut self) -> impl Iterator<Item = &mut [$t]> {
            core::iter::once($get_mut(self))
        }
        #[inline]
        fn visit_slices(&self, f: &mut impl FnMut(&[$t])) {
            f($get(self));
        }
        #[inline]
        fn zip2_slices(&mut self, a: &Self, f: &mut impl FnMut(&mut [$t], &[$t])) {
            f($get_mut(self), $get(a));
        }
        #[inline]
        fn zip3_slices(
            &mut self,
            a: &Self,
            b: &mut Self,
            f: &mut impl FnMut(&mut [$t], &[$t], &mut [$t]),
        ) {
            f($get_mut(self), $get(a), $get_mut(b));
        }
        #[inline]
        fn zip4_slices(
            &mut self,
            a: &Self,
            b: &mut Self,
            c: &mut Self,
            f: &mut impl FnMut(&mut [$t], &[$t], &mut [$t], &mut [$t]),
        ) {
            f($get_mut(self), $get(a), $get_mut(b), $get_mut(c));
        }
        #[inline]
        fn zip4_slices_mut(
            &mut self,
            a: &mut Self,
            b: &mut Self,
            c: &mut Self,
            f: &mut impl FnMut(&mut [$t], &mut [$t], &mut [$t], &mut [$t]),
        ) {
            f($get_mut(self), $get_mut(a), $get_mut(b), $get_mut(c));
        }
        #[inline]
        fn zip2_slices_mut(&mut self, a: &mut Self, f: &mut impl FnMut(&mut [$t], &mut [$t])) {
            f($get_mut(self), $get_mut(a));
        }
    };
}
#[cfg(feature = "alloc")]
pub(crate) use single_slice;

macro_rules! scalar_tangent {
    ($($t:ty),*) => {$(
        impl Tangent for $t {
            #[inline]
            fn zeros() -> Self {
                0.0
            }
            #[inline]
            fn accumulate(&mut self, other: &Self) {
                *self += *other;
            }
        }

        impl Flat<$t> for $t {
            single_slice!($t, core::slice::from_ref, core::slice::from_mut);
        }
    )*};
}
scalar_tangent!(f32, f64);

/// A Z2 word: 64 bits, each its own example; changes add by XOR.
impl Tangent for u64 {
    #[inline]
    fn zeros() -> Self {
        0
    }
    #[inline]
    fn accumulate(&mut self, other: &Self) {
        *self ^= *other;
    }
}

impl Flat<u64> for u64 {
    single_slice!(u64, core::slice::from_ref, core::slice::from_mut);
}

impl<T: Real, const R: usize, const C: usize> Tangent for SMatrix<T, R, C> {
    #[inline]
    fn zeros() -> Self {
        Self::zeros()
    }
    #[inline]
    fn accumulate(&mut self, other: &Self) {
        *self += other;
    }
    #[cfg(feature = "alloc")]
    fn boxed_zeros() -> alloc::boxed::Box<Self> {
        let mut b = alloc::boxed::Box::<Self>::new_uninit();
        let first = b.as_mut_ptr().cast::<T>();
        for i in 0..R * C {
            // SAFETY: `Matrix` is `repr(C)` with its storage first and only zero-sized
            // fields after it, and `ArrayStorage<T, R, C>` is `repr(transparent)` over
            // `[[T; R]; C]`: the allocation is exactly `R * C` consecutive `T`s, so `i < R * C`
            // stays inside it, and writing every one of them initialises the whole value.
            unsafe { first.add(i).write(T::zero()) };
        }
        // SAFETY: every `T` of the matrix was written above, and its other fields are
        // zero-sized.
        unsafe { b.assume_init() }
    }
}

impl<T: Real, const R: usize, const C: usize> Flat<T> for SMatrix<T, R, C> {
    single_slice!(T, Self::as_slice, Self::as_mut_slice);
}

impl Tangent for () {
    #[inline]
    fn zeros() -> Self {}
    #[inline]
    fn accumulate(&mut self, _other: &Self) {}
}

impl<T: Copy + 'static> Flat<T> for () {
    #[inline]
    fn slices(&self) -> impl Iterator<Item = &[T]> {
        core::iter::empty()
    }
    #[inline]
    fn slices_mut(&mut self) -> impl Iterator<Item = &mut [T]> {
        core::iter::empty()
    }
    #[inline]
    fn visit_slices(&self, _: &mut impl FnMut(&[T])) {}
    #[inline]
    fn zip2_slices(&mut self, _: &Self, _: &mut impl FnMut(&mut [T], &[T])) {}
    #[inline]
    fn zip3_slices(
        &mut self,
        _: &Self,
        _: &mut Self,
        _: &mut impl FnMut(&mut [T], &[T], &mut [T]),
    ) {
    }
    #[inline]
    fn zip4_slices(
        &mut self,
        _: &Self,
        _: &mut Self,
        _: &mut Self,
        _: &mut impl FnMut(&mut [T], &[T], &mut [T], &mut [T]),
    ) {
    }
    #[inline]
    fn zip4_slices_mut(
        &mut self,
        _: &mut Self,
        _: &mut Self,
        _: &mut Self,
        _: &mut impl FnMut(&mut [T], &mut [T], &mut [T], &mut [T]),
    ) {
    }
    #[inline]
    fn zip2_slices_mut(&mut self, _: &mut Self, _: &mut impl FnMut(&mut [T], &mut [T])) {}
}

impl<X: Tangent, const N: usize> Tangent for [X; N] {
    #[inline]
    fn zeros() -> Self {
        core::array::from_fn(|_| X::zeros())
    }
    #[inline]
    fn accumulate(&mut self, other: &Self) {
        for (a, b) in self.iter_mut().zip(other) {
            a.accumulate(b);
        }
    }
}

impl<T: Copy + 'static, X: Flat<T>, const N: usize> Flat<T> for [X; N] {
    #[inline]
    fn slices(&self) -> impl Iterator<Item = &[T]> {
        self.iter().flat_map(Flat::slices)
    }
    #[inline]
    fn slices_mut(&mut self) -> impl Iterator<Item = &mut [T]> {
        self.iter_mut().flat_map(Flat::slices_mut)
    }
    #[inline]
    fn visit_slices(&self, f: &mut impl FnMut(&[T])) {
        for x in self {
            x.visit_slices(f);
        }
    }
    #[inline]
    fn zip2_slices(&mut self, a: &Self, f: &mut impl FnMut(&mut [T], &[T])) {
        for i in 0..N {
            self[i].zip2_slices(&a[i], f);
        }
    }
    #[inline]
    fn zip3_slices(
        &mut self,
        a: &Self,
        b: &mut Self,
        f: &mut impl FnMut(&mut [T], &[T], &mut [T]),
    ) {
        for i in 0..N {
            self[i].zip3_slices(&a[i], &mut b[i], f);
        }
    }
    #[inline]
    fn zip4_slices(
        &mut self,
        a: &Self,
        b: &mut Self,
        c: &mut Self,
        f: &mut impl FnMut(&mut [T], &[T], &mut [T], &mut [T]),
    ) {
        for i in 0..N {
            self[i].zip4_slices(&a[i], &mut b[i], &mut c[i], f);
        }
    }
    #[inline]
    fn zip4_slices_mut(
        &mut self,
        a: &mut Self,
        b: &mut Self,
        c: &mut Self,
        f: &mut impl FnMut(&mut [T], &mut [T], &mut [T], &mut [T]),
    ) {
        for i in 0..N {
            self[i].zip4_slices_mut(&mut a[i], &mut b[i], &mut c[i], f);
        }
    }
    #[inline]
    fn zip2_slices_mut(&mut self, a: &mut Self, f: &mut impl FnMut(&mut [T], &mut [T])) {
        for i in 0..N {
            self[i].zip2_slices_mut(&mut a[i], f);
        }
    }
}

/// Large parameters live in a `Box`, allocated once at construction.
#[cfg(feature = "alloc")]
impl<X: Tangent> Tangent for alloc::boxed::Box<X> {
    #[inline]
    fn zeros() -> Self {
        X::boxed_zeros()
    }
    #[inline]
    fn accumulate(&mut self, other: &Self) {
        (**self).accumulate(other);
    }
}

#[cfg(feature = "alloc")]
impl<T: Copy + 'static, X: Flat<T>> Flat<T> for alloc::boxed::Box<X> {
    #[inline]
    fn slices(&self) -> impl Iterator<Item = &[T]> {
        (**self).slices()
    }
    #[inline]
    fn slices_mut(&mut self) -> impl Iterator<Item = &mut [T]> {
        (**self).slices_mut()
    }
    #[inline]
    fn visit_slices(&self, f: &mut impl FnMut(&[T])) {
        (**self).visit_slices(f);
    }
    #[inline]
    fn zip2_slices(&mut self, a: &Self, f: &mut impl FnMut(&mut [T], &[T])) {
        (**self).zip2_slices(a, f);
    }
    #[inline]
    fn zip3_slices(
        &mut self,
        a: &Self,
        b: &mut Self,
        f: &mut impl FnMut(&mut [T], &[T], &mut [T]),
    ) {
        (**self).zip3_slices(a, b, f);
    }
    #[inline]
    fn zip4_slices(
        &mut self,
        a: &Self,
        b: &mut Self,
        c: &mut Self,
        f: &mut impl FnMut(&mut [T], &[T], &mut [T], &mut [T]),
    ) {
        (**self).zip4_slices(a, b, c, f);
    }
    #[inline]
    fn zip4_slices_mut(
        &mut self,
        a: &mut Self,
        b: &mut Self,
        c: &mut Self,
        f: &mut impl FnMut(&mut [T], &mut [T], &mut [T], &mut [T]),
    ) {
        (**self).zip4_slices_mut(a, b, c, f);
    }
    #[inline]
    fn zip2_slices_mut(&mut self, a: &mut Self, f: &mut impl FnMut(&mut [T], &mut [T])) {
        (**self).zip2_slices_mut(a, f);
    }
}

macro_rules! tuple_tangent {
    ($($name:ident $idx:tt),+) => {
        impl<$($name: Tangent),+> Tangent for ($($name,)+) {
            #[inline]
            fn zeros() -> Self {
                ($($name::zeros(),)+)
            }
            #[inline]
            fn accumulate(&mut self, other: &Self) {
                $(self.$idx.accumulate(&other.$idx);)+
            }
        }

        #[diagnostic::do_not_recommend]
        impl<T: Copy + 'static, $($name: Flat<T>),+> Flat<T> for ($($name,)+) {
            #[inline]
            fn slices(&self) -> impl Iterator<Item = &[T]> {
                core::iter::empty()$(.chain(self.$idx.slices()))+
            }
            #[inline]
            fn slices_mut(&mut self) -> impl Iterator<Item = &mut [T]> {
                core::iter::empty()$(.chain(self.$idx.slices_mut()))+
            }
            #[inline]
            fn visit_slices(&self, f: &mut impl FnMut(&[T])) {
                $(self.$idx.visit_slices(f);)+
            }
            #[inline]
            fn zip2_slices(&mut self, a: &Self, f: &mut impl FnMut(&mut [T], &[T])) {
                $(self.$idx.zip2_slices(&a.$idx, f);)+
            }
            #[inline]
            fn zip3_slices(&mut self, a: &Self, b: &mut Self, f: &mut impl FnMut(&mut [T], &[T], &mut [T])) {
                $(self.$idx.zip3_slices(&a.$idx, &mut b.$idx, f);)+
            }
            #[inline]
            fn zip4_slices(
                &mut self,
                a: &Self,
                b: &mut Self,
                c: &mut Self,
                f: &mut impl FnMut(&mut [T], &[T], &mut [T], &mut [T]),
            ) {
                $(self.$idx.zip4_slices(&a.$idx, &mut b.$idx, &mut c.$idx, f);)+
            }
            #[inline]
            fn zip4_slices_mut(
                &mut self,
                a: &mut Self,
                b: &mut Self,
                c: &mut Self,
                f: &mut impl FnMut(&mut [T], &mut [T], &mut [T], &mut [T]),
            ) {
                $(self.$idx.zip4_slices_mut(&mut a.$idx, &mut b.$idx, &mut c.$idx, f);)+
            }
            #[inline]
            fn zip2_slices_mut(&mut self, a: &mut Self, f: &mut impl FnMut(&mut [T], &mut [T])) {
                $(self.$idx.zip2_slices_mut(&mut a.$idx, f);)+
            }
        }
    };
}
tuple_tangent!(A 0);
tuple_tangent!(A 0, B 1);
tuple_tangent!(A 0, B 1, C 2);
tuple_tangent!(A 0, B 1, C 2, D 3);
tuple_tangent!(A 0, B 1, C 2, D 3, E 4);
tuple_tangent!(A 0, B 1, C 2, D 3, E 4, F 5);
tuple_tangent!(A 0, B 1, C 2, D 3, E 4, F 5, G 6);
tuple_tangent!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7);

#[cfg(test)]
mod tests {
    use super::*;
    use nalgebra::SVector;

    #[test]
    fn tuple_of_matrices_walks_every_scalar_in_order() {
        let mut p = (
            SVector::<f64, 2>::new(1.0, 2.0),
            ((), 3.0_f64),
            [SVector::<f64, 1>::new(4.0); 2],
        );
        let flat: Vec<f64> = p.slices().flatten().copied().collect();
        assert_eq!(flat, [1.0, 2.0, 3.0, 4.0, 4.0]);
        p.scale(2.0);
        assert_eq!(p.1.1, 6.0);
        assert_eq!(p.dot_flat(&p), 4.0 + 16.0 + 36.0 + 64.0 + 64.0);
        let q = p;
        p.accumulate(&q);
        assert_eq!(p.2[1][0], 16.0);
    }

    #[test]
    fn zip4_slices_mut_walks_the_slices_of_slices_mut_in_order() {
        type P = (SVector<f32, 3>, [Box<SVector<f32, 2>>; 2], f32);
        let make = |k: f32| -> P {
            (
                SVector::from_fn(|i, _| k + i as f32),
                [
                    Box::new(SVector::from_fn(|i, _| k + 10.0 + i as f32)),
                    Box::new(SVector::from_fn(|i, _| k + 20.0 + i as f32)),
                ],
                k + 30.0,
            )
        };
        let (mut p, mut a, mut b, mut c) = (make(0.0), make(100.0), make(200.0), make(300.0));
        let want: Vec<Vec<f32>> = a.slices().map(<[f32]>::to_vec).collect();
        let mut seen = Vec::new();
        p.zip4_slices_mut(&mut a, &mut b, &mut c, &mut |x, y, z, w| {
            assert!(x.len() == y.len() && y.len() == z.len() && z.len() == w.len());
            seen.push(y.to_vec());
            // Every value writable: the second one too.
            for v in y.iter_mut() {
                *v = 0.0;
            }
            x[0] += z[0] + w[0];
        });
        assert_eq!(seen, want);
        assert!(a.slices().all(|s| s.iter().all(|&v| v == 0.0)));
        assert_eq!(p.0[0], 500.0);
        assert_eq!(p.1[1][0], 20.0 + 220.0 + 320.0);
        assert_eq!(p.2, 30.0 + 230.0 + 330.0);
    }

    #[test]
    fn all_finite_sees_a_nan_anywhere() {
        let mut p = (SVector::<f32, 3>::zeros(), 0.0_f32);
        assert!(p.all_finite());
        p.0[2] = f32::NAN;
        assert!(!p.all_finite());
        p.0[2] = 1.0;
        p.1 = f32::NEG_INFINITY;
        assert!(!p.all_finite());
        let q = (f64::MAX, f64::MIN_POSITIVE / 2.0, -0.0_f64);
        assert!(q.all_finite());
        assert!(!(q.0, f64::INFINITY).all_finite());
    }
}
