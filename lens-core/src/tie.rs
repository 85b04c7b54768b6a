//! A `#[lens]` body's call `g(x)` reaches the value and the reverse of one function.
//!
//! The body as written calls `g` as Rust resolves it; the sweeps called `g_vjp`, resolved on
//! its own: a plain `fn relu` of the user's beside the prelude's glob import shadows the
//! prelude's `relu`, not its `relu_vjp`, and the reverse was the other function's. Now the
//! sweeps call `g_lens_vjp(x)`, a hidden companion written beside `g` and `g_vjp` (by
//! `#[lens]`, or for a reverse written by hand by `custom_reverse!`), which returns the
//! value and pullback of `g_vjp` [`Tied`] to the identity of its own `g`; the sweep hands
//! [`Tied::lens_tie`] the `g` its call names, and a different item is refused before any
//! change is computed.
//!
//! The identity is the function item's type, the one thing unique to an item that a value
//! carries. It cannot be named, so it is compared as a `TypeId` (of `typeid`, for items
//! generic over types that are not `'static`): two constants, which an optimised build folds,
//! leaving no check at run time when the items agree. No stable Rust can compare the two at
//! compile time (`TypeId` equality is not `const`, and an impl cannot name a function item's
//! type), so a mismatch is refused at the call's first run, with a message naming both items.

use core::any::type_name;
use core::marker::PhantomData;

/// The value and pullback of a function's reverse (`g_vjp(x)`), with the identity of the
/// function `g` they belong to. `A` is the tuple of `g`'s argument types, through which the
/// caller's `g` has its generic arguments inferred.
#[doc(hidden)]
pub struct Tied<V, A> {
    value: V,
    item: core::any::TypeId,
    name: &'static str,
    args: PhantomData<fn(A)>,
}

impl<V, A> Tied<V, A> {
    /// `value` of the function `item` (its own `g`, named where `g_vjp` is written).
    #[inline(always)]
    pub fn new<F: CallWith<A>>(value: V, item: &F) -> Self {
        let _ = item;
        Tied {
            value,
            item: typeid::of::<F>(),
            name: type_name::<F>(),
            args: PhantomData,
        }
    }

    /// The value, when `item` (the function a `#[lens]` body's call names) is the function it
    /// belongs to; a panic naming both otherwise.
    #[inline(always)]
    pub fn lens_tie<F: CallWith<A>>(self, item: &F) -> V {
        let _ = item;
        if typeid::of::<F>() != self.item {
            not_the_lens(type_name::<F>(), self.name);
        }
        self.value
    }
}

#[cold]
#[inline(never)]
fn not_the_lens(called: &str, own: &str) -> ! {
    panic!(
        "a `#[lens]` body calls `{called}`, but the reverse found for it belongs to `{own}`: `{called}` is not a `#[lens]` function (a plain function of the same name shadows the lens function), or it was imported by name without its hidden `_lens_vjp`. Annotate it with `#[lens]`, give it a reverse with `custom_reverse!`, import its `_lens_vjp` beside it (or its module's `*`), or call the function you mean by its path"
    )
}

/// A function item callable with the arguments `A` (a tuple, of up to 32): what infers the
/// generic arguments of the `g` a call names from the argument types of its reverse.
#[doc(hidden)]
pub trait CallWith<A> {}

macro_rules! call_with {
    ($(($($a:ident),*))*) => {$(
        impl<F, R, $($a),*> CallWith<($($a,)*)> for F where F: Fn($($a),*) -> R {}
    )*};
}

call_with! {
    ()
    (A0)
    (A0, A1)
    (A0, A1, A2)
    (A0, A1, A2, A3)
    (A0, A1, A2, A3, A4)
    (A0, A1, A2, A3, A4, A5)
    (A0, A1, A2, A3, A4, A5, A6)
    (A0, A1, A2, A3, A4, A5, A6, A7)
    (A0, A1, A2, A3, A4, A5, A6, A7, A8)
    (A0, A1, A2, A3, A4, A5, A6, A7, A8, A9)
    (A0, A1, A2, A3, A4, A5, A6, A7, A8, A9, A10)
    (A0, A1, A2, A3, A4, A5, A6, A7, A8, A9, A10, A11)
    (A0, A1, A2, A3, A4, A5, A6, A7, A8, A9, A10, A11, A12)
    (A0, A1, A2, A3, A4, A5, A6, A7, A8, A9, A10, A11, A12, A13)
    (A0, A1, A2, A3, A4, A5, A6, A7, A8, A9, A10, A11, A12, A13, A14)
    (A0, A1, A2, A3, A4, A5, A6, A7, A8, A9, A10, A11, A12, A13, A14, A15)
    (A0, A1, A2, A3, A4, A5, A6, A7, A8, A9, A10, A11, A12, A13, A14, A15, A16)
    (A0, A1, A2, A3, A4, A5, A6, A7, A8, A9, A10, A11, A12, A13, A14, A15, A16, A17)
    (A0, A1, A2, A3, A4, A5, A6, A7, A8, A9, A10, A11, A12, A13, A14, A15, A16, A17, A18)
    (A0, A1, A2, A3, A4, A5, A6, A7, A8, A9, A10, A11, A12, A13, A14, A15, A16, A17, A18, A19)
    (A0, A1, A2, A3, A4, A5, A6, A7, A8, A9, A10, A11, A12, A13, A14, A15, A16, A17, A18, A19, A20)
    (A0, A1, A2, A3, A4, A5, A6, A7, A8, A9, A10, A11, A12, A13, A14, A15, A16, A17, A18, A19, A20, A21)
    (A0, A1, A2, A3, A4, A5, A6, A7, A8, A9, A10, A11, A12, A13, A14, A15, A16, A17, A18, A19, A20, A21, A22)
    (A0, A1, A2, A3, A4, A5, A6, A7, A8, A9, A10, A11, A12, A13, A14, A15, A16, A17, A18, A19, A20, A21, A22, A23)
    (A0, A1, A2, A3, A4, A5, A6, A7, A8, A9, A10, A11, A12, A13, A14, A15, A16, A17, A18, A19, A20, A21, A22, A23, A24)
    (A0, A1, A2, A3, A4, A5, A6, A7, A8, A9, A10, A11, A12, A13, A14, A15, A16, A17, A18, A19, A20, A21, A22, A23, A24, A25)
    (A0, A1, A2, A3, A4, A5, A6, A7, A8, A9, A10, A11, A12, A13, A14, A15, A16, A17, A18, A19, A20, A21, A22, A23, A24, A25, A26)
    (A0, A1, A2, A3, A4, A5, A6, A7, A8, A9, A10, A11, A12, A13, A14, A15, A16, A17, A18, A19, A20, A21, A22, A23, A24, A25, A26, A27)
    (A0, A1, A2, A3, A4, A5, A6, A7, A8, A9, A10, A11, A12, A13, A14, A15, A16, A17, A18, A19, A20, A21, A22, A23, A24, A25, A26, A27, A28)
    (A0, A1, A2, A3, A4, A5, A6, A7, A8, A9, A10, A11, A12, A13, A14, A15, A16, A17, A18, A19, A20, A21, A22, A23, A24, A25, A26, A27, A28, A29)
    (A0, A1, A2, A3, A4, A5, A6, A7, A8, A9, A10, A11, A12, A13, A14, A15, A16, A17, A18, A19, A20, A21, A22, A23, A24, A25, A26, A27, A28, A29, A30)
    (A0, A1, A2, A3, A4, A5, A6, A7, A8, A9, A10, A11, A12, A13, A14, A15, A16, A17, A18, A19, A20, A21, A22, A23, A24, A25, A26, A27, A28, A29, A30, A31)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn double(x: f64) -> f64 {
        2.0 * x
    }
    fn triple(x: f64) -> f64 {
        3.0 * x
    }
    fn id<T: Copy>(x: T) -> T {
        x
    }

    #[test]
    fn the_same_item_passes() {
        let t = Tied::<_, (f64,)>::new(7, &double);
        assert_eq!(t.lens_tie(&double), 7);
        // A generic item's arguments inferred from the argument types on both sides.
        let t = Tied::<_, (f32,)>::new(1, &id);
        assert_eq!(t.lens_tie(&id), 1);
    }

    #[test]
    #[should_panic(expected = "is not a `#[lens]` function")]
    fn another_item_is_refused() {
        let t = Tied::<_, (f64,)>::new(7, &double);
        t.lens_tie(&triple);
    }

    #[test]
    fn an_item_taking_a_borrow_passes() {
        fn first(v: &[f64; 2]) -> f64 {
            v[0]
        }
        fn tied<'a>() -> Tied<u8, (&'a [f64; 2],)> {
            Tied::new(3, &first)
        }
        assert_eq!(tied().lens_tie(&first), 3);
    }
}
