//! A netlist simplified: constants propagated, double negations removed, gates reading one
//! wire twice folded, and gates no output depends on dropped.

use super::{Gate, Netlist, NetlistBuilder, NetlistError, Wire};
use alloc::vec;
use alloc::vec::Vec;

/// What a wire of the original became: a constant, or a wire of the new netlist (with the
/// wire it negates, if it is a `Not`).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Value {
    Const(bool),
    Wire(Wire),
}

struct Simplifier {
    b: NetlistBuilder,
    /// For each new wire that is a `Not`, the wire it negates.
    negates: Vec<Option<Wire>>,
    inputs: u32,
}

impl Simplifier {
    fn push(&mut self, g: Gate) -> Value {
        let w = self.b.gate(g);
        let k = (w - self.inputs) as usize;
        if self.negates.len() <= k {
            self.negates.resize(k + 1, None);
        }
        self.negates[k] = match g {
            Gate::Not(a) => Some(a),
            _ => None,
        };
        Value::Wire(w)
    }

    fn not(&mut self, a: Value) -> Value {
        match a {
            Value::Const(c) => Value::Const(!c),
            Value::Wire(w) => match w
                .checked_sub(self.inputs)
                .and_then(|k| self.negates[k as usize])
            {
                Some(inner) => Value::Wire(inner),
                None => self.push(Gate::Not(w)),
            },
        }
    }

    fn and(&mut self, a: Value, b: Value) -> Value {
        match (a, b) {
            (Value::Const(false), _) | (_, Value::Const(false)) => Value::Const(false),
            (Value::Const(true), x) | (x, Value::Const(true)) => x,
            (Value::Wire(x), Value::Wire(y)) if x == y => a,
            (Value::Wire(x), Value::Wire(y)) => self.push(Gate::And(x, y)),
        }
    }

    fn or(&mut self, a: Value, b: Value) -> Value {
        match (a, b) {
            (Value::Const(true), _) | (_, Value::Const(true)) => Value::Const(true),
            (Value::Const(false), x) | (x, Value::Const(false)) => x,
            (Value::Wire(x), Value::Wire(y)) if x == y => a,
            (Value::Wire(x), Value::Wire(y)) => self.push(Gate::Or(x, y)),
        }
    }

    fn xor(&mut self, a: Value, b: Value) -> Value {
        match (a, b) {
            (Value::Const(c), Value::Const(d)) => Value::Const(c ^ d),
            (Value::Const(false), x) | (x, Value::Const(false)) => x,
            (Value::Const(true), x) | (x, Value::Const(true)) => self.not(x),
            (Value::Wire(x), Value::Wire(y)) if x == y => Value::Const(false),
            (Value::Wire(x), Value::Wire(y)) => self.push(Gate::Xor(x, y)),
        }
    }

    fn nand(&mut self, a: Value, b: Value) -> Value {
        match (a, b) {
            (Value::Wire(x), Value::Wire(y)) if x != y => self.push(Gate::Nand(x, y)),
            _ => {
                let v = self.and(a, b);
                self.not(v)
            }
        }
    }

    fn mux(&mut self, s: Value, a: Value, b: Value) -> Value {
        match (s, a, b) {
            (Value::Const(true), a, _) => a,
            (Value::Const(false), _, b) => b,
            (_, a, b) if a == b => a,
            (s, Value::Const(true), Value::Const(false)) => s,
            (s, Value::Const(false), Value::Const(true)) => self.not(s),
            (Value::Wire(s), Value::Wire(a), Value::Wire(b)) => self.push(Gate::Mux(s, a, b)),
            (s, a, b) => {
                // A constant data input: the mux as and/or of the select.
                let ns = self.not(s);
                let l = self.and(s, a);
                let r = self.and(ns, b);
                self.or(l, r)
            }
        }
    }
}

impl Netlist {
    /// The same circuit simplified: constants propagated through every gate, `!!x` read as
    /// `x`, `x & x`, `x | x`, `x ^ x` and `s ? a : a` folded, a `Lut2` whose table is
    /// constant replaced by its function, and the gates no output depends on dropped.
    /// Inputs and outputs are the same, in the same order.
    ///
    /// ```
    /// use paralens::circuits::NetlistBuilder;
    /// let mut b = NetlistBuilder::new(2);
    /// let one = b.constant(true);
    /// let a = b.and(0, one); // x0
    /// let n = b.not(a);
    /// let y = b.not(n); // x0 again
    /// let z = b.xor(y, 1);
    /// b.output(z);
    /// let net = b.build().unwrap();
    /// assert_eq!(net.gates().len(), 5);
    /// assert_eq!(net.simplified().unwrap().gates().len(), 1);
    /// ```
    ///
    /// # Errors
    /// As [`Netlist::new`] (only for a circuit too large to number).
    pub fn simplified(&self) -> Result<Netlist, NetlistError> {
        let inputs = self.inputs;
        let mut s = Simplifier {
            b: NetlistBuilder::new(inputs),
            negates: Vec::new(),
            inputs,
        };
        let mut value: Vec<Option<Value>> = vec![None; self.gates.len()];
        let read = |value: &[Option<Value>], w: Wire| {
            if w < inputs {
                Value::Wire(w)
            } else {
                value[(w - inputs) as usize].expect("a gate is read after it, in topological order")
            }
        };
        for g in self.topological_order() {
            let v = match self.gates[g] {
                Gate::Xor(a, b) => s.xor(read(&value, a), read(&value, b)),
                Gate::And(a, b) => s.and(read(&value, a), read(&value, b)),
                Gate::Or(a, b) => s.or(read(&value, a), read(&value, b)),
                Gate::Nand(a, b) => s.nand(read(&value, a), read(&value, b)),
                Gate::Not(a) => s.not(read(&value, a)),
                Gate::Mux(c, a, b) => s.mux(read(&value, c), read(&value, a), read(&value, b)),
                Gate::Const(c) => Value::Const(c),
                Gate::Lut2(a, b, t) => {
                    let table = [0, 1, 2, 3].map(|k| read(&value, t + k));
                    let (a, b) = (read(&value, a), read(&value, b));
                    let in_place = table == [0, 1, 2, 3].map(|k| Value::Wire(t + k));
                    match (a, b) {
                        // Its table still the inputs it was (a gate network's parameters).
                        (Value::Wire(a), Value::Wire(b)) if in_place && t < inputs => {
                            s.push(Gate::Lut2(a, b, t))
                        }
                        // t[a + 2b] = b ? (a ? t3 : t2) : (a ? t1 : t0), constants folded.
                        _ => {
                            let hi = s.mux(a, table[3], table[2]);
                            let lo = s.mux(a, table[1], table[0]);
                            s.mux(b, hi, lo)
                        }
                    }
                }
            };
            value[g] = Some(v);
        }
        let outputs: Vec<Value> = self.outputs.iter().map(|&w| read(&value, w)).collect();
        // Constants the outputs need, then the gates they depend on.
        let mut consts: [Option<Wire>; 2] = [None, None];
        let mut outs = Vec::with_capacity(outputs.len());
        for v in outputs {
            outs.push(match v {
                Value::Wire(w) => w,
                Value::Const(c) => {
                    *consts[usize::from(c)].get_or_insert_with(|| s.b.gate(Gate::Const(c)))
                }
            });
        }
        let gates = s.b.into_gates();
        // Keep what the outputs reach, renumbered in order.
        let mut live = vec![false; gates.len()];
        let mut stack: Vec<Wire> = outs.iter().copied().filter(|&w| w >= inputs).collect();
        while let Some(w) = stack.pop() {
            let k = (w - inputs) as usize;
            if live[k] {
                continue;
            }
            live[k] = true;
            let (reads, n) = gates[k].reads();
            stack.extend(reads[..n].iter().copied().filter(|&r| r >= inputs));
        }
        let mut new_index = vec![0 as Wire; gates.len()];
        let mut kept = Vec::new();
        for (k, g) in gates.iter().enumerate() {
            if live[k] {
                new_index[k] = inputs + kept.len() as Wire;
                kept.push(*g);
            }
        }
        let map = |w: Wire| {
            if w < inputs {
                w
            } else {
                new_index[(w - inputs) as usize]
            }
        };
        let kept = kept.into_iter().map(|g| remap(g, map)).collect();
        Netlist::new(inputs, kept, outs.into_iter().map(map).collect())
    }
}

fn remap(g: Gate, m: impl Fn(Wire) -> Wire) -> Gate {
    match g {
        Gate::Xor(a, b) => Gate::Xor(m(a), m(b)),
        Gate::And(a, b) => Gate::And(m(a), m(b)),
        Gate::Or(a, b) => Gate::Or(m(a), m(b)),
        Gate::Nand(a, b) => Gate::Nand(m(a), m(b)),
        Gate::Not(a) => Gate::Not(m(a)),
        Gate::Mux(s, a, b) => Gate::Mux(m(s), m(a), m(b)),
        // Tables are inputs, never renumbered.
        Gate::Lut2(a, b, t) => Gate::Lut2(m(a), m(b), t),
        Gate::Const(c) => Gate::Const(c),
    }
}
