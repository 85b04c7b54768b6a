//! The "no change" of an argument that is not differentiated (see the module
//! [`guard`](super)): a `Tangent`'s zero, or else a [`NoChange`] value, chosen by autoref
//! steps.

use super::Tangent;

/// The "no change" value a lens type returns for an argument that is not differentiated
/// (labels, indices, flags, `#[nodiff]` values) whose type has no [`Tangent`]: integers,
/// `bool`, `char`, `Option`s, and arrays and tuples of them. A type with a `Tangent` has
/// its zero instead, chosen by [`NoChangeOf`].
pub trait NoChange {
    /// The value standing for "no change".
    fn no_change() -> Self;
}

/// The "no change" of a `#[nodiff]` argument of type `T`: its [`Tangent`]'s zero where
/// it has one ([`NoChangeTangent`]), else its [`NoChange`] value ([`NoChangeData`], one
/// autoref step later). Two traits and not one: `[bool; 3]` has no `Tangent`, `[f64; 3]`
/// has, and one trait's impls for arrays of each would overlap.
pub struct NoChangeOf<T>(core::marker::PhantomData<fn() -> T>);

impl<T> NoChangeOf<T> {
    /// The value of `T`'s kind of no change, through `lens_no_change()`.
    #[inline(always)]
    #[allow(clippy::new_without_default)]
    pub fn new() -> Self {
        NoChangeOf(core::marker::PhantomData)
    }
}

/// [`NoChangeOf`] a type with a [`Tangent`]: its zero.
pub trait NoChangeTangent<T> {
    /// The zero.
    fn lens_no_change(self) -> T;
}

impl<T: Tangent> NoChangeTangent<T> for &&NoChangeOf<T> {
    #[inline(always)]
    fn lens_no_change(self) -> T {
        T::zeros()
    }
}

/// [`NoChangeOf`] a type without a [`Tangent`]: its [`NoChange`] value.
pub trait NoChangeData<T> {
    /// The value.
    fn lens_no_change(self) -> T;
}

impl<T: NoChange> NoChangeData<T> for &NoChangeOf<T> {
    #[inline(always)]
    fn lens_no_change(self) -> T {
        T::no_change()
    }
}

impl<T: NoChange, const N: usize> NoChange for [T; N] {
    #[inline]
    fn no_change() -> Self {
        core::array::from_fn(|_| T::no_change())
    }
}

macro_rules! no_change_tuple {
    ($(($($t:ident),+))*) => {$(
        impl<$($t: NoChange),+> NoChange for ($($t,)+) {
            #[inline]
            fn no_change() -> Self {
                ($($t::no_change(),)+)
            }
        }
    )*};
}
no_change_tuple! {
    (A)
    (A, B)
    (A, B, C)
    (A, B, C, D)
    (A, B, C, D, E)
    (A, B, C, D, E, F)
}

macro_rules! no_change_int {
    ($($t:ty),*) => {$(
        impl NoChange for $t {
            #[inline]
            fn no_change() -> Self {
                0
            }
        }
    )*};
}
no_change_int!(usize, isize, i8, i16, i32, i64, i128, u8, u16, u32, u128);

impl NoChange for bool {
    #[inline]
    fn no_change() -> Self {
        false
    }
}

impl NoChange for char {
    #[inline]
    fn no_change() -> Self {
        '\0'
    }
}

/// An optional setting (`#[nodiff] k: Option<T>`): no change is `None`.
impl<T> NoChange for Option<T> {
    #[inline]
    fn no_change() -> Self {
        None
    }
}
