//! Where a learner keeps its parameters, their change and the optimizer's state: in a box
//! (allocated once, at construction) when the `alloc` feature is on, so that a model of real
//! size never sits in the caller's frame; inline without it, where no allocator exists and
//! the models are small.

use crate::Tangent;

/// A learner's storage for one value: `Box<T>` with `alloc`.
#[cfg(feature = "alloc")]
pub(crate) type Held<T> = alloc::boxed::Box<T>;

/// Puts `value` in its storage.
#[cfg(feature = "alloc")]
#[inline]
pub(crate) fn held<T>(value: T) -> Held<T> {
    alloc::boxed::Box::new(value)
}

/// Zeros, built in the storage itself (a large matrix never passes through the stack).
#[cfg(feature = "alloc")]
#[inline]
pub(crate) fn held_zeros<T: Tangent>() -> Held<T> {
    T::boxed_zeros()
}

/// The value, out of its storage.
#[cfg(feature = "alloc")]
#[inline]
#[allow(clippy::boxed_local)] // the box is the storage this function empties
pub(crate) fn unheld<T>(h: Held<T>) -> T {
    *h
}

/// A learner's storage for one value: the value itself, without `alloc`.
#[cfg(not(feature = "alloc"))]
#[derive(Clone, Debug)]
pub(crate) struct Held<T>(T);

#[cfg(not(feature = "alloc"))]
impl<T> core::ops::Deref for Held<T> {
    type Target = T;
    #[inline]
    fn deref(&self) -> &T {
        &self.0
    }
}

#[cfg(not(feature = "alloc"))]
impl<T> core::ops::DerefMut for Held<T> {
    #[inline]
    fn deref_mut(&mut self) -> &mut T {
        &mut self.0
    }
}

/// Puts `value` in its storage.
#[cfg(not(feature = "alloc"))]
#[inline]
pub(crate) fn held<T>(value: T) -> Held<T> {
    Held(value)
}

/// Zeros.
#[cfg(not(feature = "alloc"))]
#[inline]
pub(crate) fn held_zeros<T: Tangent>() -> Held<T> {
    Held(T::zeros())
}

/// The value, out of its storage.
#[cfg(not(feature = "alloc"))]
#[inline]
pub(crate) fn unheld<T>(h: Held<T>) -> T {
    h.0
}
