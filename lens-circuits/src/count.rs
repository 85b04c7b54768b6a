//! Counting set lanes over many words: the vote rules count, per parameter bit, the examples
//! that ask for a flip.

use crate::Word;

/// `out[i] = words[i].popcount()` and `words[i] = 0`, for `i < out.len()`.
///
/// The x86-64 baseline has no population-count instruction, and `count_ones` there is a
/// dozen instructions; this runs a copy of the loop compiled for POPCNT when the CPU has it
/// (measured: a third of a training step of the 8x1024 gate network went into counting).
pub(crate) fn take_counts<W: Word>(words: &mut [W], out: &mut [u32]) {
    #[cfg(target_arch = "x86_64")]
    if lens_core::__cpu_has!("popcnt") {
        // SAFETY: the CPU has POPCNT, the only feature `take_counts_popcnt` enables.
        unsafe { take_counts_popcnt(words, out) };
        return;
    }
    take_counts_portable(words, out);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "popcnt")]
fn take_counts_popcnt<W: Word>(words: &mut [W], out: &mut [u32]) {
    take_counts_portable(words, out);
}

#[inline(always)]
fn take_counts_portable<W: Word>(words: &mut [W], out: &mut [u32]) {
    for (o, w) in out.iter_mut().zip(words.iter_mut()) {
        *o = w.popcount();
        *w = W::ZERO;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Lanes;

    #[test]
    fn counts_equal_popcount_and_words_are_cleared() {
        let mut words: Vec<Lanes<2>> = (0..40u64)
            .map(|i| Lanes([i.wrapping_mul(0x9e37_79b9_7f4a_7c15), !i]))
            .collect();
        let want: Vec<u32> = words.iter().map(Word::popcount).collect();
        let mut out = vec![0; 30];
        take_counts(&mut words, &mut out);
        assert_eq!(out, want[..30]);
        assert!(words[..30].iter().all(|w| *w == Lanes::ZERO));
        assert_ne!(words[30], Lanes::ZERO, "only the counted words are cleared");
        let mut out2 = vec![0; 30];
        take_counts_portable(&mut words.clone(), &mut out2);
        assert_eq!(out2, vec![0; 30]);
    }
}
