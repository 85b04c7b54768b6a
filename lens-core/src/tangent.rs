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
/// # extern crate lens_core as paralens; // users reach the derive through `paralens`
/// use lens_core::{Flat, Tangent};
/// use nalgebra::{SMatrix, SVector};
///
/// #[derive(Clone, Debug, Tangent)]
/// struct Affine {
///     w: SMatrix<f64, 2, 3>,
///     b: SVector<f64, 2>,
/// }
///
/// let mut p = Affine::zero();
/// p.b[1] = 2.0;
/// p.accumulate(&p.clone());
/// assert_eq!(p.b[1], 4.0);
/// assert_eq!(Flat::<f64>::flat_len(&p), 8);
/// ```
pub trait Tangent: Clone {
    /// The zero change (the unit of `accumulate`).
    #[must_use]
    fn zero() -> Self;
    /// Adds `other` into `self` (`self += other`; XOR for bits).
    fn accumulate(&mut self, other: &Self);
}

/// A change space seen as a sequence of flat slices of scalars `T`.
///
/// Optimizers walk all parameters through this view, one slice per stored array (one slice
/// for a matrix, one per field for a struct), so they never need to know a model's shape.
pub trait Flat<T: Copy + 'static>: Tangent {
    /// The scalars of `self`, as consecutive slices in a fixed order.
    fn slices(&self) -> impl Iterator<Item = &[T]>;
    /// The scalars of `self`, mutably, in the same order as [`Flat::slices`].
    fn slices_mut(&mut self) -> impl Iterator<Item = &mut [T]>;

    /// The number of scalars.
    #[must_use]
    fn flat_len(&self) -> usize {
        self.slices().map(<[T]>::len).sum()
    }

    /// Multiplies every scalar by `s`.
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
    fn all_finite(&self) -> bool
    where
        T: Real,
    {
        // No early exit: a branch-free scan vectorises, and the common case scans it all.
        !self
            .slices()
            .any(|s| s.iter().fold(false, |bad, v| bad | v.non_finite()))
    }
}

macro_rules! scalar_tangent {
    ($($t:ty),*) => {$(
        impl Tangent for $t {
            #[inline]
            fn zero() -> Self {
                0.0
            }
            #[inline]
            fn accumulate(&mut self, other: &Self) {
                *self += *other;
            }
        }

        impl Flat<$t> for $t {
            #[inline]
            fn slices(&self) -> impl Iterator<Item = &[$t]> {
                core::iter::once(core::slice::from_ref(self))
            }
            #[inline]
            fn slices_mut(&mut self) -> impl Iterator<Item = &mut [$t]> {
                core::iter::once(core::slice::from_mut(self))
            }
        }
    )*};
}
scalar_tangent!(f32, f64);

/// A Z2 word: 64 bits, each its own example; changes add by XOR.
impl Tangent for u64 {
    #[inline]
    fn zero() -> Self {
        0
    }
    #[inline]
    fn accumulate(&mut self, other: &Self) {
        *self ^= *other;
    }
}

impl Flat<u64> for u64 {
    #[inline]
    fn slices(&self) -> impl Iterator<Item = &[u64]> {
        core::iter::once(core::slice::from_ref(self))
    }
    #[inline]
    fn slices_mut(&mut self) -> impl Iterator<Item = &mut [u64]> {
        core::iter::once(core::slice::from_mut(self))
    }
}

impl<T: Real, const R: usize, const C: usize> Tangent for SMatrix<T, R, C> {
    #[inline]
    fn zero() -> Self {
        Self::zeros()
    }
    #[inline]
    fn accumulate(&mut self, other: &Self) {
        *self += other;
    }
}

impl<T: Real, const R: usize, const C: usize> Flat<T> for SMatrix<T, R, C> {
    #[inline]
    fn slices(&self) -> impl Iterator<Item = &[T]> {
        core::iter::once(self.as_slice())
    }
    #[inline]
    fn slices_mut(&mut self) -> impl Iterator<Item = &mut [T]> {
        core::iter::once(self.as_mut_slice())
    }
}

impl Tangent for () {
    #[inline]
    fn zero() -> Self {}
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
}

impl<X: Tangent, const N: usize> Tangent for [X; N] {
    #[inline]
    fn zero() -> Self {
        core::array::from_fn(|_| X::zero())
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
}

/// Large parameters live in a `Box`, allocated once at construction.
impl<X: Tangent> Tangent for Box<X> {
    #[inline]
    fn zero() -> Self {
        Box::new(X::zero())
    }
    #[inline]
    fn accumulate(&mut self, other: &Self) {
        (**self).accumulate(other);
    }
}

impl<T: Copy + 'static, X: Flat<T>> Flat<T> for Box<X> {
    #[inline]
    fn slices(&self) -> impl Iterator<Item = &[T]> {
        (**self).slices()
    }
    #[inline]
    fn slices_mut(&mut self) -> impl Iterator<Item = &mut [T]> {
        (**self).slices_mut()
    }
}

macro_rules! tuple_tangent {
    ($($name:ident $idx:tt),+) => {
        impl<$($name: Tangent),+> Tangent for ($($name,)+) {
            #[inline]
            fn zero() -> Self {
                ($($name::zero(),)+)
            }
            #[inline]
            fn accumulate(&mut self, other: &Self) {
                $(self.$idx.accumulate(&other.$idx);)+
            }
        }

        impl<T: Copy + 'static, $($name: Flat<T>),+> Flat<T> for ($($name,)+) {
            #[inline]
            fn slices(&self) -> impl Iterator<Item = &[T]> {
                core::iter::empty()$(.chain(self.$idx.slices()))+
            }
            #[inline]
            fn slices_mut(&mut self) -> impl Iterator<Item = &mut [T]> {
                core::iter::empty()$(.chain(self.$idx.slices_mut()))+
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
