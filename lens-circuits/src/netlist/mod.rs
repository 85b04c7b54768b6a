//! Netlists: circuits built at run time, for models too large to write as `#[lens]`
//! functions.
//!
//! A netlist has `inputs` input wires (numbered `0..inputs`) and gates; gate `k` drives wire
//! `inputs + k`. [`Netlist::new`] checks it (every wire exists, no cycles) and levelizes it
//! into struct-of-arrays grouped by level and gate kind, which the bit-sliced interpreters
//! ([`Netlist::forward`], [`Netlist::reverse`]) run over any [`crate::Word`].
//!
//! ```
//! use paralens::circuits::{NetlistBuilder, Word};
//!
//! // y = (x0 & x1) ^ x2
//! let mut b = NetlistBuilder::new(3);
//! let a = b.and(0, 1);
//! let y = b.xor(a, 2);
//! b.output(y);
//! let net = b.build().unwrap();
//! let mut ev = net.evaluator::<u64>();
//! let mut out = [0u64];
//! net.forward(&mut ev, &[0b1100, 0b1010, 0b0001], &mut out).unwrap();
//! assert_eq!(out[0], 0b1001);
//! let mut dx = [0u64; 3];
//! net.reverse(&mut ev, &[u64::MAX], &mut dx).unwrap();
//! assert_eq!(dx, [0b1010, 0b1100, u64::MAX]); // (x1 & d, x0 & d, d)
//! ```

mod build;
mod error;
mod eval;
mod export;
mod learn;
mod level;
#[cfg(feature = "std")]
mod sharded;
mod simplify;

pub use build::NetlistBuilder;
pub use error::NetlistError;
pub use eval::Evaluator;
pub use learn::{NetlistLearner, NetlistTarget};
#[cfg(feature = "std")]
pub use sharded::{ShardTargets, ShardedNetlistLearner};

use alloc::{vec, vec::Vec};
use level::Levels;

/// A wire: an input (`0..inputs`) or the output of gate `w - inputs`.
pub type Wire = u32;

/// A gate and the wires it reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Gate {
    /// `a ^ b`
    Xor(Wire, Wire),
    /// `a & b`
    And(Wire, Wire),
    /// `a | b`
    Or(Wire, Wire),
    /// `!(a & b)`
    Nand(Wire, Wire),
    /// `!a`
    Not(Wire),
    /// `s ? a : b`
    Mux(Wire, Wire, Wire),
    /// A two-input lookup: `t[a + 2b]`, the table being the four wires `t..t + 4`. The
    /// circuit is `mux(b, mux(a, t3, t2), mux(a, t1, t0))`, fused into one gate.
    Lut2(Wire, Wire, Wire),
    /// A constant.
    Const(bool),
}

impl Gate {
    /// The wires this gate reads, in order (the first `n` of the array are meaningful).
    #[must_use]
    pub fn reads(&self) -> ([Wire; 6], usize) {
        match *self {
            Self::Xor(a, b) | Self::And(a, b) | Self::Or(a, b) | Self::Nand(a, b) => {
                ([a, b, 0, 0, 0, 0], 2)
            }
            Self::Not(a) => ([a, 0, 0, 0, 0, 0], 1),
            Self::Mux(s, a, b) => ([s, a, b, 0, 0, 0], 3),
            Self::Lut2(a, b, t) => {
                let t = |k| t.saturating_add(k);
                ([a, b, t(0), t(1), t(2), t(3)], 6)
            }
            Self::Const(_) => ([0; 6], 0),
        }
    }
}

/// A checked, levelized circuit.
#[derive(Clone, Debug)]
pub struct Netlist {
    inputs: u32,
    gates: Vec<Gate>,
    outputs: Vec<Wire>,
    levels: Levels,
    /// The inputs `0..tables` are each read once, as a table bit of a `Lut2` whose four
    /// table bits are all below `tables` (a gate network's parameters): their flip requests
    /// can be counted where the gate is pulled back.
    tables: u32,
}

impl Netlist {
    /// Checks and levelizes a circuit: `inputs` input wires, `gates` (gate `k` drives wire
    /// `inputs + k`; a gate may read any wire, including later gates, as long as there is
    /// no cycle) and the output wires.
    ///
    /// # Errors
    /// A wire that does not exist (dangling), a cycle, or more wires than a `u32` numbers.
    pub fn new(inputs: u32, gates: Vec<Gate>, outputs: Vec<Wire>) -> Result<Self, NetlistError> {
        let levels = level::levelize(inputs, &gates, &outputs)?;
        let tables = table_prefix(inputs, &gates);
        Ok(Self {
            inputs,
            gates,
            outputs,
            levels,
            tables,
        })
    }

    /// The number of input wires.
    #[must_use]
    pub fn inputs(&self) -> usize {
        self.inputs as usize
    }

    /// The number of outputs.
    #[must_use]
    pub fn outputs(&self) -> usize {
        self.outputs.len()
    }

    /// The gates, in the order given.
    #[must_use]
    pub fn gates(&self) -> &[Gate] {
        &self.gates
    }

    /// The output wires.
    #[must_use]
    pub fn output_wires(&self) -> &[Wire] {
        &self.outputs
    }

    /// The depth: the number of levels of gates.
    #[must_use]
    pub fn depth(&self) -> usize {
        self.levels.depth()
    }
}

/// The largest `n` such that every input below `n` is read exactly once, as a table bit of
/// a `Lut2` whose four table bits are all below `n`.
fn table_prefix(inputs: u32, gates: &[Gate]) -> u32 {
    // Per input: 0 unread, 1 read once as a table bit, 2 read otherwise or more than once.
    let mut seen = vec![0u8; inputs as usize];
    for g in gates {
        let (reads, n) = g.reads();
        let tables = if matches!(g, Gate::Lut2(..)) {
            2..n
        } else {
            n..n
        };
        for (k, &w) in reads[..n].iter().enumerate() {
            if let Some(s) = seen.get_mut(w as usize) {
                *s = if tables.contains(&k) && *s == 0 { 1 } else { 2 };
            }
        }
    }
    let mut n = seen.iter().position(|&s| s != 1).unwrap_or(seen.len()) as u32;
    // A table straddling the prefix's end is not counted there: end the prefix before it.
    // (Its bits are read only by it, so no other table straddles the new end.)
    for g in gates {
        if let Gate::Lut2(_, _, t) = *g
            && t < n
            && t.saturating_add(3) >= n
        {
            n = t;
        }
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_prefix_ends_at_the_first_input_that_is_not_one_table_bit() {
        let lut = |t| Gate::Lut2(20, 21, t);
        // Two tables over inputs 0..8: all eight counted.
        assert_eq!(table_prefix(22, &[lut(0), lut(4)]), 8);
        // Input 5 read twice: the prefix ends before the table holding it.
        assert_eq!(table_prefix(22, &[lut(0), lut(4), Gate::Not(5)]), 4);
        // Input 8 unread: the prefix ends there.
        assert_eq!(table_prefix(22, &[lut(0), lut(4), lut(9)]), 8);
        // A table at 2..6 after a gap at 0..2: nothing counted.
        assert_eq!(table_prefix(22, &[lut(2)]), 0);
        // A table bit read as a data input too.
        assert_eq!(table_prefix(22, &[lut(0), Gate::Lut2(1, 21, 4)]), 0);
        // A table straddling the end of the run of once-read bits: cut before it.
        assert_eq!(table_prefix(22, &[lut(0), lut(4), Gate::Xor(6, 21)]), 4);
        assert_eq!(table_prefix(3, &[]), 0);
    }
}
