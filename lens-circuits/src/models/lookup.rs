//! The lookup-table model: a truth table indexed by the input bits.

use crate::Word;
use lens_core::Para;

/// `M` truth tables of `T = 2^N` entries indexed by `N` input bits, as the circuit
/// `y_o = XOR_k (p[o][k] & m_k(x))` where `m_k` is the minterm of `k` (the AND of `x_j` or
/// `!x_j` by the bits of `k`). Its reverse in the parameters is `dp[o][k] = m_k & d_o`: in
/// each example, only the entry that example selects can change.
///
/// Parameters are words with every lane equal (a parameter bit is shared by all examples).
///
/// ```
/// use paralens::circuits::models::LookupTable;
/// use paralens::Para;
/// let lut = LookupTable::<2, 1, 4>;
/// // XOR of two bits: table [0, 1, 1, 0] (entry k = x0 + 2 x1).
/// let p = [[0u64, u64::MAX, u64::MAX, 0]];
/// let y = lut.forward(&p, [0b1100, 0b1010]);
/// assert_eq!(y[0], 0b0110);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LookupTable<const N: usize, const M: usize, const T: usize>;

impl<const N: usize, const M: usize, const T: usize> LookupTable<N, M, T> {
    const CHECK: () = assert!(
        N < usize::BITS as usize && T == 1 << N,
        "LookupTable<N, M, T> needs T = 2^N table entries"
    );

    /// The minterms of `x`: `m[k]` is set in the lanes whose input bits spell `k`.
    #[inline]
    fn minterms<W: Word>(x: &[W; N]) -> [W; T] {
        let () = Self::CHECK;
        core::array::from_fn(|k| {
            (0..N).fold(W::ONES, |m, j| {
                m & if (k >> j) & 1 == 1 { x[j] } else { !x[j] }
            })
        })
    }
}

impl<W: Word, const N: usize, const M: usize, const T: usize> Para<[W; N]>
    for LookupTable<N, M, T>
{
    type Param = [[W; T]; M];
    type Out = [W; M];

    fn forward(&self, p: &Self::Param, x: [W; N]) -> [W; M] {
        let m = Self::minterms(&x);
        core::array::from_fn(|o| (0..T).fold(W::ZERO, |y, k| y ^ (p[o][k] & m[k])))
    }

    fn vjp(
        &self,
        p: &Self::Param,
        x: [W; N],
    ) -> ([W; M], impl FnOnce([W; M], &mut Self::Param) -> [W; N]) {
        let m = Self::minterms(&x);
        let y = core::array::from_fn(|o| (0..T).fold(W::ZERO, |y, k| y ^ (p[o][k] & m[k])));
        (y, move |d: [W; M], dp: &mut Self::Param| {
            // Z2 changes add by XOR.
            for (o, row) in dp.iter_mut().enumerate() {
                for (k, w) in row.iter_mut().enumerate() {
                    *w = *w ^ (m[k] & d[o]);
                }
            }
            // dm[k] = XOR_o p[o][k] & d[o]; through the AND chain of minterm k, the change of
            // literal j is dm[k] & (AND of the other literals), and NOT passes it unchanged.
            let dm: [W; T] =
                core::array::from_fn(|k| (0..M).fold(W::ZERO, |a, o| a ^ (p[o][k] & d[o])));
            core::array::from_fn(|j| {
                (0..T).fold(W::ZERO, |a, k| {
                    let others = (0..N).filter(|&i| i != j).fold(W::ONES, |acc, i| {
                        acc & if (k >> i) & 1 == 1 { x[i] } else { !x[i] }
                    });
                    a ^ (dm[k] & others)
                })
            })
        })
    }
}
