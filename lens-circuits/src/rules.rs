//! Gate reverse rules beyond the operators, in the `#[lens]` calling convention (`name`,
//! `name_vjp`, `name_rev`), so a `#[lens]` body over words can call `mux(s, a, b)`.
//! XOR, AND, OR and NOT are the operators `^ & | !` (rules in `lens_core::rules`).

use crate::Word;

// Each `_vjp` and `_rev` at its function's spans, so that a mistake in a call from a
// `#[lens]` body is one error, not one per function (see `lens_macros::__companions`).
lens_core::__private::companions! {
    /// `!(x & y)`.
    #[inline]
    pub fn nand<T: Word>(x: T, y: T) -> T {
        !(x & y)
    }

    /// [`nand`] and its pullback `d -> (y & d, x & d)` (NOT adds nothing in Z2).
    #[inline]
    pub fn nand_vjp<T: Word>(x: T, y: T) -> (T, impl FnOnce(T) -> (T, T)) {
        (
            nand(x, y),
            #[inline(always)]
            move |d: T| (y & d, x & d),
        )
    }

    /// The reverse derivative of [`nand`].
    #[inline]
    pub fn nand_rev<T: Word>(x: T, y: T, d: T) -> (T, T) {
        nand_vjp(x, y).1(d)
    }

    /// `s ? a : b`, lane by lane: `b ^ (s & (a ^ b))`.
    #[inline]
    pub fn mux<T: Word>(s: T, a: T, b: T) -> T {
        b ^ (s & (a ^ b))
    }

    /// [`mux`] and its pullback `d -> ((a ^ b) & d, s & d, !s & d)`.
    #[inline]
    pub fn mux_vjp<T: Word>(s: T, a: T, b: T) -> (T, impl FnOnce(T) -> (T, T, T)) {
        (
            mux(s, a, b),
            #[inline(always)]
            move |d: T| ((a ^ b) & d, s & d, !s & d),
        )
    }

    /// The reverse derivative of [`mux`].
    #[inline]
    pub fn mux_rev<T: Word>(s: T, a: T, b: T, d: T) -> (T, T, T) {
        mux_vjp(s, a, b).1(d)
    }
}

/// Copy `x -> (x, x)`; its reverse adds (XORs) the two changes.
#[inline]
pub fn copy_vjp<T: Word>(x: T) -> ((T, T), impl FnOnce((T, T)) -> T) {
    (
        (x, x),
        #[inline(always)]
        |(d1, d2): (T, T)| d1 ^ d2,
    )
}

/// Discard `x -> ()`; its reverse is the zero change.
#[inline]
pub fn discard_vjp<T: Word>(_x: T) -> ((), impl FnOnce(()) -> T) {
    (
        (),
        #[inline(always)]
        |()| T::ZERO,
    )
}

/// A constant: no input, so its reverse returns nothing.
#[inline]
pub fn constant_vjp<T: Word>(c: T) -> (T, impl FnOnce(T)) {
    (
        c,
        #[inline(always)]
        |_: T| (),
    )
}
