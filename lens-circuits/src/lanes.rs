//! `Lanes<W>`: W words side by side, 64·W examples per value.

use crate::Word;
use core::ops::{BitAnd, BitOr, BitXor, Not, Shl, Shr};
use lens_core::rules::{AndRule, NotRule, OrRule, XorRule};
use lens_core::{Flat, Tangent};

/// `64 * W` examples of one Boolean wire, as `W` words. Operations act word by word, which
/// the compiler turns into SIMD for `W = 4` (AVX2) or `W = 8` (AVX-512).
///
/// ```
/// use paralens::circuits::{Lanes, Word};
/// let mut x = Lanes::<4>::ZERO;
/// x.set_lane(200, true);
/// assert!(x.lane(200) && !x.lane(199));
/// assert_eq!((x | Lanes::splat(false)).popcount(), 1);
/// ```
#[derive(Clone, Copy, Debug)]
#[repr(transparent)]
pub struct Lanes<const W: usize>(pub [u64; W]);

/// Word by word, with no early exit: the derived comparison of `[u64; W]` calls `memcmp`,
/// which cost an eighth of a training step (the reverse sweep asks of every gate whether
/// its change is zero).
impl<const W: usize> PartialEq for Lanes<W> {
    #[inline]
    fn eq(&self, o: &Self) -> bool {
        self.0.iter().zip(&o.0).fold(0, |acc, (a, b)| acc | (a ^ b)) == 0
    }
}

impl<const W: usize> Eq for Lanes<W> {}

/// Hashes the words, as equality compares them.
impl<const W: usize> core::hash::Hash for Lanes<W> {
    fn hash<H: core::hash::Hasher>(&self, state: &mut H) {
        self.0.hash(state);
    }
}

impl<const W: usize> Default for Lanes<W> {
    fn default() -> Self {
        Self::ZERO
    }
}

macro_rules! lanewise {
    ($($tr:ident $m:ident $op:tt),*) => {$(
        impl<const W: usize> $tr for Lanes<W> {
            type Output = Self;
            #[inline(always)]
            fn $m(self, o: Self) -> Self {
                Self(core::array::from_fn(|i| self.0[i] $op o.0[i]))
            }
        }
    )*};
}
lanewise!(BitAnd bitand &, BitOr bitor |, BitXor bitxor ^);

impl<const W: usize> Not for Lanes<W> {
    type Output = Self;
    #[inline(always)]
    fn not(self) -> Self {
        Self(self.0.map(|w| !w))
    }
}

/// Shifts every word left by `n` bits (example `i` of each word moves to `i + n`).
impl<const W: usize> Shl<u32> for Lanes<W> {
    type Output = Self;
    #[inline]
    fn shl(self, n: u32) -> Self {
        Self(self.0.map(|w| w << n))
    }
}

/// Shifts every word right by `n` bits.
impl<const W: usize> Shr<u32> for Lanes<W> {
    type Output = Self;
    #[inline]
    fn shr(self, n: u32) -> Self {
        Self(self.0.map(|w| w >> n))
    }
}

impl<const W: usize> Word for Lanes<W> {
    const LANES: usize = 64 * W;
    const ZERO: Self = Self([0; W]);
    const ONES: Self = Self([u64::MAX; W]);

    #[inline]
    fn lane(&self, lane: usize) -> bool {
        assert!(
            lane < 64 * W,
            "lane {lane} is out of range for Lanes<{W}> ({} lanes)",
            64 * W
        );
        self.0[lane / 64].lane(lane % 64)
    }

    #[inline]
    fn set_lane(&mut self, lane: usize, bit: bool) {
        assert!(
            lane < 64 * W,
            "lane {lane} is out of range for Lanes<{W}> ({} lanes)",
            64 * W
        );
        self.0[lane / 64].set_lane(lane % 64, bit);
    }

    #[inline]
    fn popcount(&self) -> u32 {
        self.0.iter().map(|w| w.count_ones()).sum()
    }

    #[inline]
    fn words(&self) -> &[u64] {
        &self.0
    }
}

// In a checkpoint, one tensor of `W` words (`u64`, shape `[W]`). Present whenever lens-core
// has checkpoints (its `std`), as the derived implementations are.
lens_core::__private::with_checkpoints! {
/// In a checkpoint, one tensor of `W` words (`u64`, shape `[W]`).
impl<const W: usize> lens_core::checkpoint::Tensors<u64> for Lanes<W> {
    fn tensors(
        &self,
        path: &str,
        out: &mut lens_core::__private::Vec<lens_core::checkpoint::Tensor<u64>>,
    ) {
        self.0.tensors(path, out);
    }
    fn load_from(
        &mut self,
        path: &str,
        src: &mut lens_core::checkpoint::Source<'_>,
    ) -> Result<(), lens_core::checkpoint::CheckpointError> {
        self.0.load_from(path, src)
    }
}
}

/// Changes add by XOR (Z2).
impl<const W: usize> Tangent for Lanes<W> {
    #[inline]
    fn zeros() -> Self {
        Self::ZERO
    }
    #[inline]
    fn accumulate(&mut self, other: &Self) {
        *self = *self ^ *other;
    }
}

impl<const W: usize> Flat<u64> for Lanes<W> {
    #[inline]
    fn slices(&self) -> impl Iterator<Item = &[u64]> {
        core::iter::once(&self.0[..])
    }
    #[inline]
    fn slices_mut(&mut self) -> impl Iterator<Item = &mut [u64]> {
        core::iter::once(&mut self.0[..])
    }
}

impl<const W: usize> XorRule for Lanes<W> {
    #[inline]
    fn xor_vjp(self, y: Self) -> (Self, impl FnOnce(Self) -> (Self, Self)) {
        (
            self ^ y,
            #[inline(always)]
            |d| (d, d),
        )
    }
}

impl<const W: usize> AndRule for Lanes<W> {
    #[inline]
    fn and_vjp(self, y: Self) -> (Self, impl FnOnce(Self) -> (Self, Self)) {
        (
            self & y,
            #[inline(always)]
            move |d| (y & d, self & d),
        )
    }
}

impl<const W: usize> OrRule for Lanes<W> {
    #[inline]
    fn or_vjp(self, y: Self) -> (Self, impl FnOnce(Self) -> (Self, Self)) {
        (
            self | y,
            #[inline(always)]
            move |d| (!y & d, !self & d),
        )
    }
}

impl<const W: usize> NotRule for Lanes<W> {
    #[inline]
    fn not_vjp(self) -> (Self, impl FnOnce(Self) -> Self) {
        (
            !self,
            #[inline(always)]
            |d| d,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lanes_are_equal_only_when_every_word_is() {
        let a = Lanes::<8>(core::array::from_fn(|i| i as u64 * 0x0101));
        assert_eq!(a, a);
        for word in 0..8 {
            for bit in [0, 17, 63] {
                let mut b = a;
                b.0[word] ^= 1 << bit;
                assert_ne!(a, b, "word {word}, bit {bit}");
            }
        }
        assert_eq!(Lanes::<3>::ZERO, Lanes([0; 3]));
        assert_ne!(Lanes::<3>::ZERO, Lanes::<3>::ONES);
    }
}
