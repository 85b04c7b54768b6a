//! Building a netlist gate by gate.

use super::{Gate, Netlist, NetlistError, Wire};
use alloc::vec::Vec;

/// Builds a netlist: each gate method adds a gate and returns the wire it drives.
#[derive(Clone, Debug, Default)]
pub struct NetlistBuilder {
    inputs: u32,
    gates: Vec<Gate>,
    outputs: Vec<Wire>,
}

impl NetlistBuilder {
    /// A netlist with `inputs` input wires, numbered `0..inputs`.
    #[must_use]
    pub fn new(inputs: u32) -> Self {
        Self {
            inputs,
            gates: Vec::new(),
            outputs: Vec::new(),
        }
    }

    /// Adds any gate; returns its output wire.
    pub fn gate(&mut self, g: Gate) -> Wire {
        self.gates.push(g);
        self.inputs + (self.gates.len() as u32 - 1)
    }

    /// `a ^ b`
    pub fn xor(&mut self, a: Wire, b: Wire) -> Wire {
        self.gate(Gate::Xor(a, b))
    }

    /// `a & b`
    pub fn and(&mut self, a: Wire, b: Wire) -> Wire {
        self.gate(Gate::And(a, b))
    }

    /// `a | b`
    pub fn or(&mut self, a: Wire, b: Wire) -> Wire {
        self.gate(Gate::Or(a, b))
    }

    /// `!(a & b)`
    pub fn nand(&mut self, a: Wire, b: Wire) -> Wire {
        self.gate(Gate::Nand(a, b))
    }

    /// `!a`
    pub fn not(&mut self, a: Wire) -> Wire {
        self.gate(Gate::Not(a))
    }

    /// `s ? a : b`
    pub fn mux(&mut self, s: Wire, a: Wire, b: Wire) -> Wire {
        self.gate(Gate::Mux(s, a, b))
    }

    /// `t[a + 2b]` with the table on wires `t..t + 4`.
    pub fn lut2(&mut self, a: Wire, b: Wire, t: Wire) -> Wire {
        self.gate(Gate::Lut2(a, b, t))
    }

    /// A constant.
    pub fn constant(&mut self, bit: bool) -> Wire {
        self.gate(Gate::Const(bit))
    }

    /// Marks `w` as the next output.
    pub fn output(&mut self, w: Wire) {
        self.outputs.push(w);
    }

    /// The gates so far (the outputs dropped).
    pub(super) fn into_gates(self) -> Vec<Gate> {
        self.gates
    }

    /// Checks and levelizes the netlist.
    ///
    /// # Errors
    /// As [`Netlist::new`].
    pub fn build(self) -> Result<Netlist, NetlistError> {
        Netlist::new(self.inputs, self.gates, self.outputs)
    }
}
