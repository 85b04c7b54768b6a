//! The relaxed model as a Boolean circuit: each gate keeps its most probable function.

use super::{GroupSum, LogicLayer, WalshLayer};
use crate::netlist::{Netlist, NetlistBuilder, NetlistError, Wire};
use alloc::vec::Vec;
use lens_core::{HeapMatrix, Real, Then};

/// A stage of a relaxed model that has a Boolean circuit: its gates appended to a builder.
pub trait Discretise {
    /// The stage's parameters.
    type Params;

    /// Appends the stage's gates reading the wires `inputs` to `b`; returns its output
    /// wires.
    fn discretise(&self, p: &Self::Params, inputs: &[Wire], b: &mut NetlistBuilder) -> Vec<Wire>;
}

impl<const I: usize, const O: usize, T: Real> Discretise for LogicLayer<I, O, T> {
    type Params = HeapMatrix<T, 16, O>;

    /// Function `k` (the largest score; the first on a tie) of each gate, as at most two
    /// gates of the netlist: a pass-through (`a`, `b`) is a wire, a constant is shared.
    fn discretise(&self, p: &Self::Params, inputs: &[Wire], b: &mut NetlistBuilder) -> Vec<Wire> {
        let w = p.as_slice();
        layer::<I>(self.wires(), inputs, b, |g| {
            let scores = &w[16 * g..16 * (g + 1)];
            (0..16).fold(0, |best, k| if scores[k] > scores[best] { k } else { best })
        })
    }
}

impl<const I: usize, const O: usize, T: Real> Discretise for WalshLayer<I, O, T> {
    type Params = HeapMatrix<T, 4, O>;

    /// Each gate's function: corner `j` of its table true where its logit is positive; as
    /// at most two gates of the netlist, as [`LogicLayer`]'s.
    fn discretise(&self, p: &Self::Params, inputs: &[Wire], b: &mut NetlistBuilder) -> Vec<Wire> {
        let w = p.as_slice();
        layer::<I>(self.wires(), inputs, b, |g| {
            super::walsh::function(&w[4 * g..4 * (g + 1)])
        })
    }
}

/// A layer of gates reading `wires` of `inputs`, gate `g` computing function `function(g)`:
/// what both gate forms share, whatever their parameters.
fn layer<const I: usize>(
    wires: &[[u32; 2]],
    inputs: &[Wire],
    b: &mut NetlistBuilder,
    function: impl Fn(usize) -> usize,
) -> Vec<Wire> {
    assert_eq!(
        inputs.len(),
        I,
        "a logic layer of {I} inputs given {} wires",
        inputs.len()
    );
    let mut constants: [Option<Wire>; 2] = [None, None];
    wires
        .iter()
        .enumerate()
        .map(|(g, &[ia, ib])| {
            let (x, y) = (inputs[ia as usize], inputs[ib as usize]);
            gate(b, function(g), x, y, &mut constants)
        })
        .collect()
}

/// Function `k` of the wires `a`, `b` (see [`super::NAMES`]).
fn gate(
    b: &mut NetlistBuilder,
    k: usize,
    x: Wire,
    y: Wire,
    constants: &mut [Option<Wire>; 2],
) -> Wire {
    let mut constant = |b: &mut NetlistBuilder, v: bool| {
        *constants[usize::from(v)].get_or_insert_with(|| b.constant(v))
    };
    match k {
        0 => constant(b, false),
        1 => {
            let o = b.or(x, y);
            b.not(o)
        }
        2 => {
            let ny = b.not(y);
            b.and(x, ny)
        }
        3 => b.not(y),
        4 => {
            let nx = b.not(x);
            b.and(nx, y)
        }
        5 => b.not(x),
        6 => b.xor(x, y),
        7 => b.nand(x, y),
        8 => b.and(x, y),
        9 => {
            let e = b.xor(x, y);
            b.not(e)
        }
        10 => x,
        11 => {
            let ny = b.not(y);
            b.or(x, ny)
        }
        12 => y,
        13 => {
            let nx = b.not(x);
            b.or(nx, y)
        }
        14 => b.or(x, y),
        _ => constant(b, true),
    }
}

impl<const I: usize, const C: usize, T: Real> Discretise for GroupSum<I, C, T> {
    type Params = ();

    /// The gates themselves: a [`GroupVote`](crate::models::GroupVote) of `C` classes of
    /// `I / C` gates reads the classes off them.
    fn discretise(&self, (): &(), inputs: &[Wire], _: &mut NetlistBuilder) -> Vec<Wire> {
        inputs.to_vec()
    }
}

impl<A: Discretise, B: Discretise> Discretise for Then<A, B> {
    type Params = (A::Params, B::Params);

    fn discretise(&self, p: &Self::Params, inputs: &[Wire], b: &mut NetlistBuilder) -> Vec<Wire> {
        let mid = self.a.discretise(&p.0, inputs, b);
        self.b.discretise(&p.1, &mid, b)
    }
}

/// The circuit of `model` at `params` on `inputs` input wires: each gate's most probable
/// function; its outputs are the last stage's gates (for a [`GroupSum`] head, read by a
/// `GroupVote` of the head's classes).
///
/// # Errors
/// As [`NetlistBuilder::build`].
pub fn discretise<M: Discretise>(
    model: &M,
    params: &M::Params,
    inputs: usize,
) -> Result<Netlist, NetlistError> {
    let mut b = NetlistBuilder::new(u32::try_from(inputs).map_err(|_| NetlistError::TooLarge)?);
    let wires: Vec<Wire> = (0..inputs as u32).collect();
    for w in model.discretise(params, &wires, &mut b) {
        b.output(w);
    }
    b.build()
}
