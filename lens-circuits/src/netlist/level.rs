//! Levelizing: gates grouped by level (longest path from the inputs) and by kind, as
//! struct-of-arrays, so the interpreters run one tight loop per (level, kind).

use super::{Gate, NetlistError, Wire};
use alloc::{vec, vec::Vec};

/// The kinds of gate, in the order groups are stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Kind {
    Const0,
    Const1,
    Not,
    Xor,
    And,
    Or,
    Nand,
    Mux,
    Lut2,
}

impl Kind {
    fn of(g: &Gate) -> Self {
        match g {
            Gate::Const(false) => Self::Const0,
            Gate::Const(true) => Self::Const1,
            Gate::Not(_) => Self::Not,
            Gate::Xor(..) => Self::Xor,
            Gate::And(..) => Self::And,
            Gate::Or(..) => Self::Or,
            Gate::Nand(..) => Self::Nand,
            Gate::Mux(..) => Self::Mux,
            Gate::Lut2(..) => Self::Lut2,
        }
    }
}

/// A run of gates of one kind in one level: `a[range]`, `b[range]`, `c[range]` are their
/// input wires and `out[range]` the wires they drive.
#[derive(Clone, Debug)]
pub struct Group {
    pub kind: Kind,
    pub start: usize,
    pub end: usize,
}

/// Struct-of-arrays of all gates, sorted by (level, kind).
#[derive(Clone, Debug, Default)]
pub struct Levels {
    pub a: Vec<Wire>,
    pub b: Vec<Wire>,
    pub c: Vec<Wire>,
    pub out: Vec<Wire>,
    /// Groups in forward order; `level_ends[l]` is the end of level `l`'s groups.
    pub groups: Vec<Group>,
    pub level_ends: Vec<usize>,
}

impl Levels {
    pub fn depth(&self) -> usize {
        self.level_ends.len()
    }
}

/// Checks every wire and computes levels by an iterative depth-first search (so deep
/// circuits do not overflow the stack), reporting a cycle when a gate is reached again
/// while on the current path.
pub fn levelize(inputs: u32, gates: &[Gate], outputs: &[Wire]) -> Result<Levels, NetlistError> {
    let wires = (inputs as usize)
        .checked_add(gates.len())
        .filter(|&w| w <= u32::MAX as usize)
        .ok_or(NetlistError::TooLarge)?;
    for (k, g) in gates.iter().enumerate() {
        let (reads, n) = g.reads();
        if let Some(&w) = reads[..n].iter().find(|&&w| w as usize >= wires) {
            return Err(NetlistError::DanglingWire {
                gate: k,
                wire: w,
                wires,
            });
        }
    }
    if let Some((i, &w)) = outputs
        .iter()
        .enumerate()
        .find(|(_, w)| **w as usize >= wires)
    {
        return Err(NetlistError::DanglingOutput {
            output: i,
            wire: w,
            wires,
        });
    }
    // level[k]: 0 = not visited, u32::MAX = on the current path, else 1 + longest path.
    const ON_PATH: u32 = u32::MAX;
    let mut level = vec![0u32; gates.len()];
    let gate_of = |w: Wire| (w >= inputs).then(|| (w - inputs) as usize);
    let mut stack: Vec<(usize, usize)> = Vec::new();
    for root in 0..gates.len() {
        if level[root] != 0 {
            continue;
        }
        level[root] = ON_PATH;
        stack.push((root, 0));
        while let Some(&mut (k, ref mut next)) = stack.last_mut() {
            let (reads, n) = gates[k].reads();
            if *next < n {
                let w = reads[*next];
                *next += 1;
                if let Some(j) = gate_of(w) {
                    match level[j] {
                        ON_PATH => return Err(NetlistError::Cycle { gate: j }),
                        0 => {
                            level[j] = ON_PATH;
                            stack.push((j, 0));
                        }
                        _ => {}
                    }
                }
            } else {
                let deepest = reads[..n]
                    .iter()
                    .filter_map(|&w| gate_of(w).map(|j| level[j]))
                    .max()
                    .unwrap_or(0);
                level[k] = deepest + 1;
                stack.pop();
            }
        }
    }
    let mut order: Vec<usize> = (0..gates.len()).collect();
    order.sort_by_key(|&k| (level[k], Kind::of(&gates[k])));
    let mut lv = Levels::default();
    for &k in &order {
        let (reads, _) = gates[k].reads();
        lv.a.push(reads[0]);
        lv.b.push(reads[1]);
        lv.c.push(reads[2]);
        lv.out.push(inputs + k as u32);
    }
    let mut i = 0;
    while i < order.len() {
        let (l, kind) = (level[order[i]], Kind::of(&gates[order[i]]));
        let mut j = i;
        while j < order.len() && level[order[j]] == l && Kind::of(&gates[order[j]]) == kind {
            j += 1;
        }
        lv.groups.push(Group {
            kind,
            start: i,
            end: j,
        });
        let last_of_level = j == order.len() || level[order[j]] != l;
        if last_of_level {
            lv.level_ends.push(lv.groups.len());
        }
        i = j;
    }
    Ok(lv)
}
