//! Netlists: circuits built at run time, for models too large to write as `#[lens]`
//! functions.
//!
//! A netlist has `inputs` input wires (numbered `0..inputs`) and gates; gate `k` drives wire
//! `inputs + k`. [`Netlist::new`] checks it (every wire exists, no cycles) and levelizes it
//! into struct-of-arrays grouped by level and gate kind, which the bit-sliced interpreters
//! ([`Netlist::forward`], [`Netlist::reverse`]) run over any [`crate::Word`].
//!
//! ```
//! use lens_circuits::{NetlistBuilder, Word};
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
mod learn;
mod level;

pub use build::NetlistBuilder;
pub use error::NetlistError;
pub use eval::Evaluator;
pub use learn::{NetlistLearner, NetlistTarget};

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
        Ok(Self {
            inputs,
            gates,
            outputs,
            levels,
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
