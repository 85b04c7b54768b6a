//! Bit-sliced forward and reverse interpreters.

use super::level::Kind;
use super::{Netlist, NetlistError};
use crate::Word;
use alloc::{vec, vec::Vec};

/// Buffers for running a netlist (one value and one change per wire), allocated once so
/// that a forward or reverse pass allocates nothing.
#[derive(Clone, Debug)]
pub struct Evaluator<W: Word> {
    values: Vec<W>,
    changes: Vec<W>,
}

impl<W: Word> Evaluator<W> {
    /// The value of every wire after the last forward pass.
    #[must_use]
    pub fn values(&self) -> &[W] {
        &self.values
    }

    /// The input wires' values, for a caller that keeps some inputs there between passes
    /// (see [`Netlist::forward_from`]).
    pub(crate) fn inputs_mut(&mut self, n: usize) -> &mut [W] {
        &mut self.values[..n]
    }

    /// Sets every wire's change to zero: after a reverse pass stopped half way (a panic),
    /// the next one must start from a clear buffer.
    #[cfg(feature = "std")]
    pub(crate) fn clear_changes(&mut self) {
        self.changes.fill(W::ZERO);
    }

    /// An evaluator of no wires, left in a learner whose evaluator has been lent out.
    #[cfg(feature = "std")]
    pub(crate) fn empty() -> Self {
        Self {
            values: Vec::new(),
            changes: Vec::new(),
        }
    }
}

impl Netlist {
    /// Buffers sized for this netlist.
    #[must_use]
    pub fn evaluator<W: Word>(&self) -> Evaluator<W> {
        let wires = self.inputs as usize + self.gates.len();
        Evaluator {
            values: vec![W::ZERO; wires],
            changes: vec![W::ZERO; wires],
        }
    }

    /// Runs the circuit on `inputs` (one word per input wire: `W::LANES` examples at once)
    /// and writes `outputs`.
    ///
    /// # Errors
    /// `inputs`, `outputs` or the evaluator not sized for this netlist.
    pub fn forward<W: Word>(
        &self,
        ev: &mut Evaluator<W>,
        inputs: &[W],
        outputs: &mut [W],
    ) -> Result<(), NetlistError> {
        self.forward_from(ev, 0, inputs, outputs)
    }

    /// [`Netlist::forward`] with the first `first` inputs as the evaluator holds them from
    /// before (a learner's parameters, which change a few bits a step): only `rest`, the
    /// inputs from `first` on, is copied in.
    pub(crate) fn forward_from<W: Word>(
        &self,
        ev: &mut Evaluator<W>,
        first: usize,
        rest: &[W],
        outputs: &mut [W],
    ) -> Result<(), NetlistError> {
        NetlistError::check_width(
            "inputs",
            (self.inputs as usize).saturating_sub(first),
            rest.len(),
        )?;
        NetlistError::check_width("outputs", self.outputs.len(), outputs.len())?;
        let wires = self.inputs as usize + self.gates.len();
        NetlistError::check_width("evaluator wires", wires, ev.values.len())?;
        let v = &mut ev.values;
        v[first..first + rest.len()].copy_from_slice(rest);
        let lv = &self.levels;
        for g in &lv.groups {
            let r = g.start..g.end;
            let (a, b, c, out) = (
                &lv.a[r.clone()],
                &lv.b[r.clone()],
                &lv.c[r.clone()],
                &lv.out[r],
            );
            // One loop per kind: the match is outside the loop.
            macro_rules! each {
                (|$i:ident| $e:expr) => {
                    for $i in 0..out.len() {
                        v[out[$i] as usize] = $e;
                    }
                };
            }
            match g.kind {
                Kind::Const0 => each!(|i| W::ZERO),
                Kind::Const1 => each!(|i| W::ONES),
                Kind::Not => each!(|i| !v[a[i] as usize]),
                Kind::Xor => each!(|i| v[a[i] as usize] ^ v[b[i] as usize]),
                Kind::And => each!(|i| v[a[i] as usize] & v[b[i] as usize]),
                Kind::Or => each!(|i| v[a[i] as usize] | v[b[i] as usize]),
                Kind::Nand => each!(|i| !(v[a[i] as usize] & v[b[i] as usize])),
                Kind::Mux => each!(|i| {
                    let (s, x, y) = (v[a[i] as usize], v[b[i] as usize], v[c[i] as usize]);
                    y ^ (s & (x ^ y))
                }),
                Kind::Lut2 => each!(|i| {
                    let (x, y, t) = (v[a[i] as usize], v[b[i] as usize], c[i] as usize);
                    let lo = v[t] ^ (x & (v[t + 1] ^ v[t]));
                    let hi = v[t + 2] ^ (x & (v[t + 3] ^ v[t + 2]));
                    lo ^ (y & (hi ^ lo))
                }),
            }
        }
        for (o, &w) in outputs.iter_mut().zip(&self.outputs) {
            *o = v[w as usize];
        }
        Ok(())
    }

    /// The reverse derivative at the point of the last [`Netlist::forward`] on `ev`:
    /// pulls the output changes `d_outputs` back to the input changes `d_inputs`, by the Z2
    /// rules, level by level from the outputs.
    ///
    /// # Errors
    /// Slices or evaluator not sized for this netlist.
    pub fn reverse<W: Word>(
        &self,
        ev: &mut Evaluator<W>,
        d_outputs: &[W],
        d_inputs: &mut [W],
    ) -> Result<(), NetlistError> {
        NetlistError::check_width("input changes", self.inputs as usize, d_inputs.len())?;
        self.reverse_each(ev, d_outputs, |i, d| d_inputs[i] = d)
    }

    /// [`Netlist::reverse`] handing each input's change to `f(input, change)` instead of
    /// copying them out (a learner counts flip requests in the same pass).
    ///
    /// # Errors
    /// Slices or evaluator not sized for this netlist.
    pub fn reverse_each<W: Word>(
        &self,
        ev: &mut Evaluator<W>,
        d_outputs: &[W],
        mut f: impl FnMut(usize, W),
    ) -> Result<(), NetlistError> {
        self.reverse_sweep::<W, false>(ev, d_outputs, &mut [])?;
        // Consume the input changes: the buffer is all zero again for the next sweep.
        for (i, d) in ev.changes[..self.inputs as usize].iter_mut().enumerate() {
            f(i, *d);
            *d = W::ZERO;
        }
        Ok(())
    }

    /// [`Netlist::reverse`] for a learner: writes the number of lanes set in each of the
    /// first `counts.len()` input changes (the parameters' flip requests) and discards the
    /// other inputs' changes.
    ///
    /// # Errors
    /// Slices or evaluator not sized for this netlist, or more counts than inputs.
    pub fn reverse_counts<W: Word>(
        &self,
        ev: &mut Evaluator<W>,
        d_outputs: &[W],
        counts: &mut [u32],
    ) -> Result<(), NetlistError> {
        let inputs = self.inputs as usize;
        if counts.len() > inputs {
            return Err(NetlistError::Width {
                what: "counts (at most one per input)",
                expected: inputs,
                got: counts.len(),
            });
        }
        let n = counts.len();
        if n <= self.tables as usize {
            // Every counted input is a table bit read once: count where each gate is pulled
            // back, and never write (or read back) the parameters' change words. A step
            // reaches few gates' tables, and the change words of a large network's tables
            // are tens of megabytes.
            counts.fill(0);
            self.counting_sweep(ev, d_outputs, counts)?;
            ev.changes[n..inputs].fill(W::ZERO);
            return Ok(());
        }
        self.reverse_sweep::<W, false>(ev, d_outputs, &mut [])?;
        let (counted, rest) = ev.changes[..inputs].split_at_mut(n);
        crate::count::take_counts(counted, counts);
        rest.fill(W::ZERO);
        Ok(())
    }

    /// The sweep that counts table bits' flip requests, in its copy compiled for POPCNT
    /// where the CPU has it.
    fn counting_sweep<W: Word>(
        &self,
        ev: &mut Evaluator<W>,
        d_outputs: &[W],
        counts: &mut [u32],
    ) -> Result<(), NetlistError> {
        #[cfg(target_arch = "x86_64")]
        if lens_core::__cpu_has!("popcnt") {
            // SAFETY: the CPU has POPCNT, the only feature the copy enables.
            return unsafe { self.counting_sweep_popcnt(ev, d_outputs, counts) };
        }
        self.reverse_sweep::<W, true>(ev, d_outputs, counts)
    }

    /// The counting sweep compiled for POPCNT (the x86-64 baseline counts a word's bits in a
    /// dozen instructions).
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "popcnt")]
    fn counting_sweep_popcnt<W: Word>(
        &self,
        ev: &mut Evaluator<W>,
        d_outputs: &[W],
        counts: &mut [u32],
    ) -> Result<(), NetlistError> {
        self.reverse_sweep::<W, true>(ev, d_outputs, counts)
    }

    /// The sweep itself. The change buffer is all zero before it (a new evaluator is, and
    /// each sweep consumes what it writes): a gate's change is read once, when the gate is
    /// pulled back, and reset there; the inputs' changes are left for the caller to consume.
    /// So no pass clears the whole buffer.
    ///
    /// With `COUNT`, a `Lut2` whose table bits are below `counts.len()` writes their flip
    /// requests' counts there instead of their changes (the caller has checked that such
    /// bits are read by that gate alone, so their change is theirs whole).
    fn reverse_sweep<W: Word, const COUNT: bool>(
        &self,
        ev: &mut Evaluator<W>,
        d_outputs: &[W],
        counts: &mut [u32],
    ) -> Result<(), NetlistError> {
        NetlistError::check_width("output changes", self.outputs.len(), d_outputs.len())?;
        let wires = self.inputs as usize + self.gates.len();
        NetlistError::check_width("evaluator wires", wires, ev.changes.len())?;
        let (v, d) = (&ev.values, &mut ev.changes);
        for (&w, &dy) in self.outputs.iter().zip(d_outputs) {
            d[w as usize] = d[w as usize] ^ dy;
        }
        let lv = &self.levels;
        for g in lv.groups.iter().rev() {
            let r = g.start..g.end;
            let (a, b, c, out) = (
                &lv.a[r.clone()],
                &lv.b[r.clone()],
                &lv.c[r.clone()],
                &lv.out[r],
            );
            // One loop per kind: the match is outside the loop.
            // A gate whose output change is zero in every lane adds nothing to its inputs'
            // changes (every rule is linear in the change): it is skipped, which saves most
            // of the sweep where errors are sparse.
            macro_rules! each {
                (|$i:ident, $dy:ident| $body:block) => {
                    for $i in 0..out.len() {
                        let $dy = core::mem::replace(&mut d[out[$i] as usize], W::ZERO);
                        if $dy == W::ZERO {
                            continue;
                        }
                        $body
                    }
                };
            }
            match g.kind {
                Kind::Const0 | Kind::Const1 => each!(|i, dy| {
                    let _ = dy;
                }),
                Kind::Not => each!(|i, dy| {
                    let ai = a[i] as usize;
                    d[ai] = d[ai] ^ dy;
                }),
                Kind::Xor => each!(|i, dy| {
                    let (ai, bi) = (a[i] as usize, b[i] as usize);
                    d[ai] = d[ai] ^ dy;
                    d[bi] = d[bi] ^ dy;
                }),
                // NAND = NOT . AND, and NOT passes the change unchanged.
                Kind::And | Kind::Nand => each!(|i, dy| {
                    let (ai, bi) = (a[i] as usize, b[i] as usize);
                    let (x, y) = (v[ai], v[bi]);
                    d[ai] = d[ai] ^ (y & dy);
                    d[bi] = d[bi] ^ (x & dy);
                }),
                Kind::Or => each!(|i, dy| {
                    let (ai, bi) = (a[i] as usize, b[i] as usize);
                    let (x, y) = (v[ai], v[bi]);
                    d[ai] = d[ai] ^ (!y & dy);
                    d[bi] = d[bi] ^ (!x & dy);
                }),
                Kind::Mux => each!(|i, dy| {
                    let (ai, bi, ci) = (a[i] as usize, b[i] as usize, c[i] as usize);
                    let (s, x, y) = (v[ai], v[bi], v[ci]);
                    d[ai] = d[ai] ^ ((x ^ y) & dy);
                    d[bi] = d[bi] ^ (s & dy);
                    d[ci] = d[ci] ^ (!s & dy);
                }),
                // The reverse of mux(b, mux(a, t3, t2), mux(a, t1, t0)), fused.
                Kind::Lut2 => each!(|i, dy| {
                    let (ai, bi, t) = (a[i] as usize, b[i] as usize, c[i] as usize);
                    let (x, y) = (v[ai], v[bi]);
                    let (t0, t1, t2, t3) = (v[t], v[t + 1], v[t + 2], v[t + 3]);
                    let lo = t0 ^ (x & (t1 ^ t0));
                    let hi = t2 ^ (x & (t3 ^ t2));
                    let (d_hi, d_lo) = (y & dy, !y & dy);
                    d[ai] = d[ai] ^ (((t3 ^ t2) & d_hi) ^ ((t1 ^ t0) & d_lo));
                    d[bi] = d[bi] ^ ((hi ^ lo) & dy);
                    let dt = [!x & d_lo, x & d_lo, !x & d_hi, x & d_hi];
                    if COUNT && t < counts.len() {
                        // A table may straddle the end of the counted inputs.
                        for (k, dt) in dt.into_iter().enumerate() {
                            match counts.get_mut(t + k) {
                                Some(c) => *c = dt.popcount(),
                                None => d[t + k] = d[t + k] ^ dt,
                            }
                        }
                    } else {
                        for (k, dt) in dt.into_iter().enumerate() {
                            d[t + k] = d[t + k] ^ dt;
                        }
                    }
                }),
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use crate::models::gate_network;
    use crate::{Lanes, Word};

    #[test]
    fn the_portable_counting_sweep_equals_the_dispatched_one() {
        // `reverse_counts` takes the POPCNT copy on a CPU that has it; the portable sweep it
        // falls back to elsewhere must count the same.
        let net = gate_network(10, &[20, 6], 6, 3).unwrap().netlist;
        let n = 4 * 26;
        let word = |i: u64| Lanes::<2>([i.wrapping_mul(0x9e37_79b9_7f4a_7c15), !i << 3]);
        let inputs: Vec<_> = (0..net.inputs() as u64).map(word).collect();
        let d: Vec<_> = (100..106).map(word).collect();
        let mut ev = net.evaluator();
        let mut out = vec![Lanes::ZERO; 6];
        net.forward(&mut ev, &inputs, &mut out).unwrap();
        let mut dispatched = vec![0; n];
        net.reverse_counts(&mut ev, &d, &mut dispatched).unwrap();
        let mut portable = vec![0; n];
        net.reverse_sweep::<_, true>(&mut ev, &d, &mut portable)
            .unwrap();
        assert_eq!(portable, dispatched);
        assert!(portable.iter().any(|&c| c > 0));
    }
}
