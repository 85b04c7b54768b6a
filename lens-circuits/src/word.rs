//! Z2 words: bit-sliced values, one bit per example.

use core::ops::{BitAnd, BitOr, BitXor, Not};
use lens_core::Tangent;

/// A bit-sliced Boolean value: one bit per example, `LANES` examples in all. Every
/// operation acts on each example (lane) independently.
pub trait Word:
    Copy
    + PartialEq
    + core::fmt::Debug
    + Tangent
    + BitAnd<Output = Self>
    + BitOr<Output = Self>
    + BitXor<Output = Self>
    + Not<Output = Self>
{
    /// The number of examples one value holds.
    const LANES: usize;
    /// All examples 0.
    const ZERO: Self;
    /// All examples 1.
    const ONES: Self;

    /// Every example set to `bit`.
    #[must_use]
    fn splat(bit: bool) -> Self {
        if bit { Self::ONES } else { Self::ZERO }
    }

    /// The bit of example `lane`.
    ///
    /// # Panics
    /// If `lane >= LANES`.
    #[must_use]
    fn lane(&self, lane: usize) -> bool;

    /// Sets the bit of example `lane`.
    ///
    /// # Panics
    /// If `lane >= LANES`.
    fn set_lane(&mut self, lane: usize, bit: bool);

    /// The number of examples whose bit is 1.
    #[must_use]
    fn popcount(&self) -> u32;

    /// The value as `u64` words (64 lanes each, lane `i` of word `k` is example `64k + i`).
    #[must_use]
    fn words(&self) -> &[u64];
}

impl Word for u64 {
    const LANES: usize = 64;
    const ZERO: Self = 0;
    const ONES: Self = u64::MAX;

    #[inline]
    fn lane(&self, lane: usize) -> bool {
        assert!(
            lane < 64,
            "lane {lane} is out of range for a u64 word (64 lanes)"
        );
        (self >> lane) & 1 == 1
    }

    #[inline]
    fn set_lane(&mut self, lane: usize, bit: bool) {
        assert!(
            lane < 64,
            "lane {lane} is out of range for a u64 word (64 lanes)"
        );
        *self = (*self & !(1 << lane)) | (u64::from(bit) << lane);
    }

    #[inline]
    fn popcount(&self) -> u32 {
        self.count_ones()
    }

    #[inline]
    fn words(&self) -> &[u64] {
        core::slice::from_ref(self)
    }
}
