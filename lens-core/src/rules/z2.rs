//! Z2 words: `u64` holds 64 independent bits (64 examples), and the change space's addition
//! is XOR. The rules act bitwise, so lane `i` of a result depends only on lane `i`.

/// `x ^ y` (addition in Z2); reverse `(d, d)`.
#[diagnostic::on_unimplemented(
    message = "no reverse rule for `{Self} ^ {Self}`",
    label = "this `^` is differentiated, and `{Self}` is not a Boolean word",
    note = "a differentiated `^` takes two Boolean words of one type (`u64`, 64 examples per word, or a `Z2k`); `x + y` for floats"
)]
pub trait XorRule: Sized {
    /// The forward value and its pullback.
    fn xor_vjp(self, y: Self) -> (Self, impl FnOnce(Self) -> (Self, Self));
}

/// `x & y` (multiplication in Z2); reverse `(y & d, x & d)`.
#[diagnostic::on_unimplemented(
    message = "no reverse rule for `{Self} & {Self}`",
    label = "this `&` is differentiated, and `{Self}` is not a Boolean word",
    note = "a differentiated `&` takes two Boolean words of one type (`u64`, 64 examples per word, or a `Z2k`); `x * y` for floats"
)]
pub trait AndRule: Sized {
    /// The forward value and its pullback.
    fn and_vjp(self, y: Self) -> (Self, impl FnOnce(Self) -> (Self, Self));
}

/// `x | y = x ^ y ^ xy`; reverse `(!y & d, !x & d)`.
#[diagnostic::on_unimplemented(
    message = "no reverse rule for `{Self} | {Self}`",
    label = "this `|` is differentiated, and `{Self}` is not a Boolean word",
    note = "a differentiated `|` takes two Boolean words of one type (`u64`, 64 examples per word, or a `Z2k`); `x + y - x * y` for floats"
)]
pub trait OrRule: Sized {
    /// The forward value and its pullback.
    fn or_vjp(self, y: Self) -> (Self, impl FnOnce(Self) -> (Self, Self));
}

/// `!x = x ^ 1`; reverse `d`.
#[diagnostic::on_unimplemented(
    message = "no reverse rule for `!` of a `{Self}`",
    label = "this `!` is differentiated, and `{Self}` is not a Boolean word",
    note = "a differentiated `!` takes a Boolean word (`u64`, 64 examples per word, or a `Z2k`); a float has no `!`: write `-x` to negate it"
)]
pub trait NotRule: Sized {
    /// The forward value and its pullback.
    fn not_vjp(self) -> (Self, impl FnOnce(Self) -> Self);
}

impl XorRule for u64 {
    #[inline]
    fn xor_vjp(self, y: u64) -> (u64, impl FnOnce(u64) -> (u64, u64)) {
        (self ^ y, |d| (d, d))
    }
}

impl AndRule for u64 {
    #[inline]
    fn and_vjp(self, y: u64) -> (u64, impl FnOnce(u64) -> (u64, u64)) {
        (
            self & y,
            #[inline(always)]
            move |d| (y & d, self & d),
        )
    }
}

impl OrRule for u64 {
    #[inline]
    fn or_vjp(self, y: u64) -> (u64, impl FnOnce(u64) -> (u64, u64)) {
        (
            self | y,
            #[inline(always)]
            move |d| (!y & d, !self & d),
        )
    }
}

impl NotRule for u64 {
    #[inline]
    fn not_vjp(self) -> (u64, impl FnOnce(u64) -> u64) {
        (!self, |d| d)
    }
}
