//! Gate networks: layers of two-input gates with fixed random wiring, each gate's 4-bit
//! truth table learned.

use crate::netlist::{Netlist, NetlistBuilder, NetlistError, Wire};
use alloc::vec::Vec;
use rand::{Rng, SeedableRng, rngs::StdRng};

/// A gate network compiled to a netlist whose first `params` inputs are the truth tables
/// (4 bits per gate) and whose remaining inputs are the data bits.
#[derive(Clone, Debug)]
pub struct GateNetwork {
    /// The netlist: parameters first, then data inputs.
    pub netlist: Netlist,
    /// The number of parameter inputs (4 per gate).
    pub params: usize,
}

/// Builds a gate network over `inputs` data bits: `layers[l]` gates in layer `l`, each
/// reading two distinct wires of the layer before (the data for the first), chosen by a
/// generator seeded with `seed`. The outputs are the first `outputs` gates of the last layer.
/// Gate `g` computes `t[g][a + 2b]` from its inputs `a`, `b` and its truth table `t[g]`
/// ([`crate::Gate::Lut2`]: the circuit `mux(b, mux(a, t3, t2), mux(a, t1, t0))`, so each
/// table bit is read once).
///
/// ```
/// use paralens::circuits::models::gate_network;
/// let net = gate_network(8, &[16, 4], 2, 7).unwrap();
/// assert_eq!(net.params, 4 * 20);
/// assert_eq!(net.netlist.outputs(), 2);
/// ```
///
/// # Errors
/// No layers, a layer of zero gates, fewer than two wires to choose from (fewer than two data
/// inputs, a layer of one gate before another layer), more outputs than the last layer has
/// gates, or more wires than a netlist holds ([`NetlistError::TooLarge`]).
pub fn gate_network(
    inputs: usize,
    layers: &[usize],
    outputs: usize,
    seed: u64,
) -> Result<GateNetwork, NetlistError> {
    let bad = |what: &'static str, expected: usize, got: usize| NetlistError::Width {
        what,
        expected,
        got,
    };
    let last = *layers.last().ok_or(bad("layers (at least one)", 1, 0))?;
    if outputs > last || outputs == 0 {
        return Err(bad(
            "outputs (1 up to the last layer's gates)",
            last,
            outputs,
        ));
    }
    if let Some(&z) = layers.iter().find(|&&g| g == 0) {
        return Err(bad("gates per layer (at least one)", 1, z));
    }
    if inputs < 2 {
        return Err(bad("data inputs (at least two)", 2, inputs));
    }
    // Each gate reads two distinct wires of the layer before: a layer of one gate cannot feed
    // another layer.
    if let Some(&one) = layers[..layers.len() - 1].iter().find(|&&g| g < 2) {
        return Err(bad(
            "gates in a layer that feeds another (at least two)",
            2,
            one,
        ));
    }
    let params = layers
        .iter()
        .try_fold(inputs, |n, &g| {
            g.checked_mul(4).and_then(|p| n.checked_add(p))
        })
        .ok_or(NetlistError::TooLarge)?
        - inputs;
    let total = u32::try_from(params + inputs).map_err(|_| NetlistError::TooLarge)?;
    let mut b = NetlistBuilder::new(total);
    let mut rng = StdRng::seed_from_u64(seed);
    let mut prev: Vec<Wire> = (params as u32..total).collect();
    let mut g = 0u32;
    for &width in layers {
        let mut next = Vec::with_capacity(width);
        for _ in 0..width {
            let i = rng.random_range(0..prev.len());
            let mut j = rng.random_range(0..prev.len() - 1);
            if j >= i {
                j += 1;
            }
            let (a, bb) = (prev[i], prev[j]);
            next.push(b.lut2(a, bb, 4 * g));
            g += 1;
        }
        prev = next;
    }
    for &w in &prev[..outputs] {
        b.output(w);
    }
    Ok(GateNetwork {
        netlist: b.build()?,
        params,
    })
}

/// A random starting point for a gate network's tables, seeded.
#[must_use]
pub fn random_tables(params: usize, seed: u64) -> Vec<bool> {
    let mut rng = StdRng::seed_from_u64(seed);
    (0..params).map(|_| rng.random()).collect()
}
