//! Learning the parameter inputs of a netlist by reverse derivative ascent.

use super::{Evaluator, Netlist, NetlistError};
use crate::Word;
use crate::learn::{Decision, StepReport, UpdateRule};
use alloc::{vec, vec::Vec};

/// Learns a netlist whose first `params` inputs are parameters (one bit each, shared by
/// every example) and whose other inputs are data. A step runs a batch forward, takes the
/// output change `e = f(p, x) ^ y` on the valid lanes, pulls it back, and flips parameter
/// bits by the [`UpdateRule`]. All buffers are allocated at construction.
///
/// ```
/// use paralens::circuits::netlist::NetlistLearner;
/// use paralens::circuits::{NetlistBuilder, UpdateRule};
/// // y = p ^ x: learn p so that y = !x.
/// let mut b = NetlistBuilder::new(2);
/// let y = b.xor(0, 1);
/// b.output(y);
/// let mut l = NetlistLearner::<u64>::new(b.build().unwrap(), 1, UpdateRule::Majority).unwrap();
/// let x = 0x00ff_00ff_u64;
/// l.step(&[x], &[!x], u64::MAX).unwrap();
/// assert_eq!(l.params(), [true]);
/// ```
pub struct NetlistLearner<W: Word> {
    pub(super) net: Netlist,
    pub(super) n_params: usize,
    pub(super) params: Vec<bool>,
    pub(super) rule: UpdateRule,
    pub(super) ev: Evaluator<W>,
    outputs: Vec<W>,
    changes: Vec<W>,
    pub(super) counts: Vec<u32>,
    pub(super) scratch: Vec<u32>,
    /// The targets [`NetlistLearner::step_by`] has chosen (allocated once).
    wanted: Vec<W>,
    audience: Vec<W>,
    pub(super) frozen: usize,
}

impl<W: Word> NetlistLearner<W> {
    /// A learner with all parameters 0.
    ///
    /// # Errors
    /// More parameters than the netlist has inputs.
    pub fn new(net: Netlist, params: usize, rule: UpdateRule) -> Result<Self, NetlistError> {
        if params > net.inputs() {
            return Err(NetlistError::Width {
                what: "parameters (at most the netlist's inputs)",
                expected: net.inputs(),
                got: params,
            });
        }
        Ok(Self {
            ev: net.evaluator(),
            outputs: vec![W::ZERO; net.outputs()],
            changes: vec![W::ZERO; net.outputs()],
            wanted: vec![W::ZERO; net.outputs()],
            audience: vec![W::ZERO; net.outputs()],
            counts: vec![0; params],
            scratch: vec![0; params],
            params: vec![false; params],
            frozen: 0,
            n_params: params,
            rule,
            net,
        })
    }

    /// The parameter bits.
    #[must_use]
    pub fn params(&self) -> &[bool] {
        &self.params
    }

    /// Sets the parameter bits.
    ///
    /// # Errors
    /// A slice of the wrong length.
    pub fn set_params(&mut self, p: &[bool]) -> Result<(), NetlistError> {
        NetlistError::check_width("parameters", self.n_params, p.len())?;
        self.params.copy_from_slice(p);
        for (w, &b) in self.ev.inputs_mut(self.n_params).iter_mut().zip(p) {
            *w = W::splat(b);
        }
        Ok(())
    }

    /// Keeps the first `n` parameters fixed: steps never flip them (for example the hidden
    /// layers of a gate network, left as random features while the last layer learns).
    pub fn freeze_first(&mut self, n: usize) {
        self.frozen = n.min(self.n_params);
    }

    /// The netlist.
    #[must_use]
    pub fn netlist(&self) -> &Netlist {
        &self.net
    }

    /// The outputs for a batch of data inputs (one word per data input).
    ///
    /// # Errors
    /// Slices of the wrong length.
    pub fn predict(&mut self, data: &[W], out: &mut [W]) -> Result<(), NetlistError> {
        forward(&self.net, &mut self.ev, self.n_params, data, out)
    }

    /// One step on the examples in the lanes where `valid` is set.
    ///
    /// # Errors
    /// Slices of the wrong length.
    pub fn step(&mut self, data: &[W], labels: &[W], valid: W) -> Result<StepReport, NetlistError> {
        self.step_masked(data, labels, valid, None)
    }

    /// One step where output `o` takes part only in the lanes of `masks[o]` (within
    /// `valid`): for example to balance rare positive labels against common negative ones.
    ///
    /// # Errors
    /// Slices of the wrong length.
    pub fn step_masked(
        &mut self,
        data: &[W],
        labels: &[W],
        valid: W,
        masks: Option<&[W]>,
    ) -> Result<StepReport, NetlistError> {
        if let Some(m) = masks {
            NetlistError::check_width("output masks", self.net.outputs(), m.len())?;
        }
        NetlistError::check_width("labels", self.net.outputs(), labels.len())?;
        self.run(data)?;
        self.pull_back(labels, valid, masks)
    }

    /// One step whose targets are chosen from the batch's outputs: runs the batch forward,
    /// calls `targets(outputs, wanted, audience)` (with `wanted` all zero and `audience` all
    /// `valid`), then learns as [`NetlistLearner::step_masked`] does from `wanted` with
    /// `audience` as the masks. The batch runs forward once, where choosing the targets
    /// from [`NetlistLearner::predict`] would run it twice. Allocates nothing.
    ///
    /// ```
    /// use paralens::circuits::netlist::NetlistLearner;
    /// use paralens::circuits::{NetlistBuilder, UpdateRule};
    /// // y = p ^ x, and the target is to turn every output on: p learns 1 where x is 0.
    /// let mut b = NetlistBuilder::new(2);
    /// let y = b.xor(0, 1);
    /// b.output(y);
    /// let mut l = NetlistLearner::<u64>::new(b.build().unwrap(), 1, UpdateRule::Majority).unwrap();
    /// let report = l
    ///     .step_by(&[0], u64::MAX, |outputs, wanted, _audience| {
    ///         assert_eq!(outputs, [0]);
    ///         wanted[0] = u64::MAX;
    ///         Ok(())
    ///     })
    ///     .unwrap();
    /// assert_eq!((report.wrong_bits, l.params()), (64, &[true][..]));
    /// ```
    ///
    /// # Errors
    /// `data` of the wrong length, or the error `targets` returns.
    pub fn step_by(
        &mut self,
        data: &[W],
        valid: W,
        targets: impl FnOnce(&[W], &mut [W], &mut [W]) -> Result<(), NetlistError>,
    ) -> Result<StepReport, NetlistError> {
        self.run(data)?;
        // Taken out for the call (moving a Vec allocates nothing) and put back after.
        let (mut wanted, mut audience) = (
            core::mem::take(&mut self.wanted),
            core::mem::take(&mut self.audience),
        );
        wanted.fill(W::ZERO);
        audience.fill(valid);
        let result = targets(&self.outputs, &mut wanted, &mut audience)
            .and_then(|()| self.pull_back(&wanted, valid, Some(&audience)));
        (self.wanted, self.audience) = (wanted, audience);
        result
    }

    /// Runs a batch forward into the learner's output buffer.
    fn run(&mut self, data: &[W]) -> Result<(), NetlistError> {
        forward(
            &self.net,
            &mut self.ev,
            self.n_params,
            data,
            &mut self.outputs,
        )
    }

    /// The learning half of a step, after the forward pass: the output changes, their
    /// pullback to flip requests (and audiences), and the flips.
    fn pull_back(
        &mut self,
        labels: &[W],
        valid: W,
        masks: Option<&[W]>,
    ) -> Result<StepReport, NetlistError> {
        let wrong = count_requests(
            &self.net,
            &mut self.ev,
            Requests {
                outputs: &self.outputs,
                labels,
                valid,
                masks,
            },
            &mut self.changes,
            &mut self.counts,
            self.rule.is_local().then_some(&mut self.scratch[..]),
        )?;
        let mut decision =
            Decision::new(self.rule, &self.counts, &mut self.scratch, valid.popcount());
        let mut flipped = 0;
        let (params, inputs) = (&mut self.params, self.ev.inputs_mut(self.n_params));
        decision.each_flip(&self.counts, &self.scratch, self.frozen, |j| {
            params[j] = !params[j];
            inputs[j] = W::splat(params[j]);
            flipped += 1;
        });
        Ok(StepReport {
            wrong_bits: wrong,
            flipped,
        })
    }
}

/// What one batch asks of its parameters, after its forward pass: the outputs, the wanted
/// outputs, the lanes that hold examples, and each output's lanes (within `valid`).
pub(super) struct Requests<'a, W> {
    pub(super) outputs: &'a [W],
    pub(super) labels: &'a [W],
    pub(super) valid: W,
    pub(super) masks: Option<&'a [W]>,
}

/// The per-batch half of a step, after the forward pass left the batch's values in `ev`:
/// the output changes `(o ^ y) & mask`, pulled back to each parameter's number of flip
/// requests in `counts`, and, for a local rule, each parameter's audience (the lanes whose
/// output it can change) in `audience`. Returns the number of wrong output bits. Every
/// count is a sum over lanes, so the counts of a batch split into shards add up to the
/// counts of the whole batch.
pub(super) fn count_requests<W: Word>(
    net: &Netlist,
    ev: &mut Evaluator<W>,
    r: Requests<'_, W>,
    changes: &mut [W],
    counts: &mut [u32],
    audience: Option<&mut [u32]>,
) -> Result<u32, NetlistError> {
    let mut wrong = 0;
    for (j, ((c, &o), &y)) in changes.iter_mut().zip(r.outputs).zip(r.labels).enumerate() {
        let mask = r.masks.map_or(r.valid, |m| m[j] & r.valid);
        *c = (o ^ y) & mask;
        wrong += c.popcount();
    }
    net.reverse_counts(ev, changes, counts)?;
    if let Some(audience) = audience {
        // The audience: the lanes each output takes part in.
        for (j, c) in changes.iter_mut().enumerate() {
            *c = r.masks.map_or(r.valid, |m| m[j] & r.valid);
        }
        net.reverse_counts(ev, changes, audience)?;
    }
    Ok(wrong)
}

/// Runs a batch forward. The parameter words stay in the evaluator's input wires (splatted,
/// and rewritten only when a bit flips): only the data is copied in, where copying every
/// input would move all the parameter words each pass (38 MB for the ten-digit network of
/// `circuits_mnist` in `Lanes<8>`).
pub(super) fn forward<W: Word>(
    net: &Netlist,
    ev: &mut Evaluator<W>,
    n_params: usize,
    data: &[W],
    out: &mut [W],
) -> Result<(), NetlistError> {
    NetlistError::check_width("data inputs", net.inputs() - n_params, data.len())?;
    net.forward_from(ev, n_params, data, out)
}

/// What a netlist learner's step learns from: the wanted output bits (one word per output)
/// and the lanes that hold examples.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NetlistTarget<W> {
    /// The wanted outputs, one word per output of the netlist.
    pub labels: Vec<W>,
    /// The lanes that hold examples.
    pub valid: W,
}

/// The netlist learner in the shape every learner shares ([`lens_core::Learn`]): the input is
/// the data words (one per data input), a step is [`NetlistLearner::step`], the output is
/// [`NetlistLearner::predict`] into a new vector (a step allocates nothing; an output does).
///
/// ```
/// use paralens::circuits::netlist::{NetlistLearner, NetlistTarget};
/// use paralens::circuits::{NetlistBuilder, UpdateRule};
/// use paralens::Learn;
/// let mut b = NetlistBuilder::new(2);
/// let y = b.xor(0, 1);
/// b.output(y);
/// let mut l = NetlistLearner::<u64>::new(b.build().unwrap(), 1, UpdateRule::Majority).unwrap();
/// let x = 0x00ff_00ff_u64;
/// let target = NetlistTarget { labels: vec![!x], valid: u64::MAX };
/// l.learn(&[x][..], &target).unwrap();
/// assert_eq!(l.output(&[x][..]).unwrap(), vec![!x]);
/// ```
impl<W: Word> lens_core::Learn<[W]> for NetlistLearner<W> {
    type Target = NetlistTarget<W>;
    type Out = Result<Vec<W>, NetlistError>;
    type Report = StepReport;
    type Error = NetlistError;

    fn learn(&mut self, x: &[W], t: &NetlistTarget<W>) -> Result<StepReport, NetlistError> {
        self.step(x, &t.labels, t.valid)
    }

    fn output(&mut self, x: &[W]) -> Result<Vec<W>, NetlistError> {
        let mut out = vec![W::ZERO; self.net.outputs()];
        self.predict(x, &mut out)?;
        Ok(out)
    }
}
