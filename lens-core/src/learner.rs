//! The learner: one training step is one composite lens run forward and back.

use crate::held::{Held, held, held_zeros, unheld};
use crate::optim::Optimizer;
use crate::{Batch, Flat, Lens, Loss, Para, Real, StepError, Tangent};
use core::marker::PhantomData;
use nalgebra::SVector;

#[cfg(feature = "std")]
mod sharded;
#[cfg(feature = "std")]
pub use sharded::ShardedLearner;

/// Supervised learning as composition: `model ; loss ; learning rate`, with the optimizer
/// on the parameter port.
///
/// A step runs the composite forward (the optimizer's view of the parameters, the model, the
/// loss, the learning-rate lens) and back (the learning rate emits `-eta`, the loss and the
/// model pull it back to a parameter change), then the optimizer puts the new parameters
/// and state. Nothing is allocated after construction.
///
/// ```
/// use paralens::{optim::Adam, Dense, Init, Learner, ParaExt, Relu, SoftmaxCrossEntropy};
/// use paralens::nalgebra::SVector;
///
/// let model = Dense::<2, 8>::new().then(Relu).then(Dense::<8, 2>::glorot());
/// let params = model.init(0);
/// let mut learner = Learner::new(model, params, SoftmaxCrossEntropy, Adam::new(0.05));
/// let data = [(SVector::<f32, 2>::new(1.0, 0.0), 0), (SVector::<f32, 2>::new(0.0, 1.0), 1)];
/// for _ in 0..100 {
///     for (x, y) in &data {
///         learner.step(x, y);
///     }
/// }
/// assert_eq!(learner.predict_class(&data[1].0), 1);
/// assert!(learner.try_step(&data[0].0, &7).is_err()); // label out of range
/// ```
pub struct Learner<M, X, L, O>
where
    M: Para<X>,
    O: Optimizer<M::Param>,
{
    model: M,
    // Parameters, their change and the optimizer state are boxed: a 784x128 layer is 400 KB,
    // and a learner must fit on an ordinary stack wherever the caller keeps it.
    params: Held<M::Param>,
    /// The parameter change of a step: the pullbacks add into it. Zero between steps: built
    /// as zeros, cleared by the optimizer as it reads it (or after a refused step).
    change: Held<M::Param>,
    loss: L,
    optimizer: O,
    state: Held<O::State>,
    /// Where a look-ahead optimizer writes the parameters the model sees (`None` otherwise).
    scratch: Option<Held<M::Param>>,
    _input: PhantomData<fn(X)>,
}

/// The model, the loss and the optimizer (not the parameters, their change or the
/// optimizer's state, megabytes for a model of MNIST size: [`Learner::params`] has them).
impl<M, X, L, O> core::fmt::Debug for Learner<M, X, L, O>
where
    M: Para<X> + core::fmt::Debug,
    L: core::fmt::Debug,
    O: Optimizer<M::Param> + core::fmt::Debug,
{
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Learner")
            .field("model", &self.model)
            .field("loss", &self.loss)
            .field("optimizer", &self.optimizer)
            .finish_non_exhaustive()
    }
}

/// A second learner where the first is, to train apart (its storage allocated anew).
impl<M, X, L, O> Clone for Learner<M, X, L, O>
where
    M: Para<X> + Clone,
    M::Param: Clone,
    L: Clone,
    O: Optimizer<M::Param> + Clone,
    O::State: Clone,
{
    fn clone(&self) -> Self {
        Self {
            model: self.model.clone(),
            params: self.params.clone(),
            change: self.change.clone(),
            loss: self.loss.clone(),
            optimizer: self.optimizer.clone(),
            state: self.state.clone(),
            scratch: self.scratch.clone(),
            _input: PhantomData,
        }
    }
}

impl<M, X, L, O, T> Learner<M, X, L, O>
where
    T: Real,
    X: Clone,
    M: Para<X>,
    M::Param: Flat<T>,
    L: Loss<M::Out, Scalar = T>,
    M::Out: Clone,
    O: Optimizer<M::Param, Scalar = T>,
{
    /// Builds a learner from a model, its initial parameters, a loss and an optimizer.
    ///
    /// The parameters' type is the model's (`P` is `M::Param`, by the bound): named by a
    /// type parameter, a model that cannot take its input (a composite whose stages do not
    /// fit) is one error at `model`, not a second at `params`, whose type `M::Param` rustc
    /// could not name either.
    pub fn new<P>(model: M, params: P, loss: L, optimizer: O) -> Self
    where
        M: Para<X, Param = P>,
    {
        let params = held(params);
        let state = held(optimizer.init_state(&params));
        // Built as zeros, never cloned: a boxed matrix's `clone` passes through the stack in
        // a debug build, zeros are written in the allocation (`Tangent::boxed_zeros`).
        let scratch = optimizer.looks_ahead().then(held_zeros::<M::Param>);
        let change = held_zeros::<M::Param>();
        Self {
            model,
            params,
            change,
            loss,
            optimizer,
            state,
            scratch,
            _input: PhantomData,
        }
    }

    /// The current parameters.
    pub fn params(&self) -> &M::Param {
        &self.params
    }

    /// The current parameters, mutably (e.g. to load saved weights).
    pub fn params_mut(&mut self) -> &mut M::Param {
        &mut self.params
    }

    /// Puts the optimizer's state back to where it starts (moments and step counts at zero),
    /// keeping the parameters: a new phase of training, or after loading parameters saved
    /// without their optimizer state.
    pub fn reset_optimizer(&mut self) {
        *self.state = self.optimizer.init_state(&self.params);
    }

    /// The model.
    pub fn model(&self) -> &M {
        &self.model
    }

    /// The optimizer, mutably (e.g. to lower its step size on a schedule).
    pub fn optimizer_mut(&mut self) -> &mut O {
        &mut self.optimizer
    }

    /// The optimizer's state.
    pub fn optimizer_state(&self) -> &O::State {
        &self.state
    }

    /// The optimizer's state, to restore it (from a checkpoint) or reset it.
    pub fn optimizer_state_mut(&mut self) -> &mut O::State {
        &mut self.state
    }

    /// Gives back the model and the parameters.
    pub fn into_parts(self) -> (M, M::Param) {
        (self.model, unheld(self.params))
    }

    /// The model's output at the current parameters.
    pub fn predict(&self, x: &X) -> M::Out {
        self.model.forward(&self.params, x.clone())
    }

    /// The loss of one example at the current parameters.
    ///
    /// # Errors
    /// [`StepError::Label`] for a label the loss cannot take.
    pub fn try_loss(&self, x: &X, label: &L::Label) -> Result<T, StepError> {
        check(&self.loss, 0, label)?;
        Ok(self.loss.loss(&self.predict(x), label))
    }

    /// One training step on one example; returns the loss before the step.
    ///
    /// # Errors
    /// A label the loss cannot take, a non-finite loss or a non-finite parameter change.
    /// On error the parameters and optimizer state are unchanged.
    pub fn try_step(&mut self, x: &X, label: &L::Label) -> Result<T, StepError> {
        check(&self.loss, 0, label)?;
        self.step_checked(x.clone(), label)
    }

    /// [`Learner::try_step`] on an input the caller gives away: no copy of it is made (the
    /// model's pullback keeps the input it needs, and `try_step` has to clone a borrowed
    /// one; for a batch of 32 MNIST images that is a 100 KB copy per step).
    ///
    /// # Errors
    /// As [`Learner::try_step`].
    pub fn try_step_owned(&mut self, x: X, label: &L::Label) -> Result<T, StepError> {
        check(&self.loss, 0, label)?;
        self.step_checked(x, label)
    }

    /// A step on a label already checked (by `try_step` or `try_step_owned`, once).
    fn step_checked(&mut self, x: X, label: &L::Label) -> Result<T, StepError> {
        let p = seen(
            &self.optimizer,
            &self.state,
            &self.params,
            &mut self.scratch,
        );
        // Forward through model ; loss ; learning rate.
        // The input is data: its change is never wanted (`vjp_params`).
        let (y, pull_model) = self.model.vjp_params(p, x);
        let (loss, pull_loss) = self.loss.vjp(y, label);
        let rate = self.optimizer.rate();
        let ((), pull_rate) = rate.apply_vjp(loss);
        // Backward: the learning rate emits -eta, which lands on the parameter port.
        // The change buffer is zero here: built as zeros, and cleared after every step.
        pull_model(pull_loss(pull_rate(())), &mut self.change);
        self.put(loss)?;
        Ok(loss)
    }

    /// One training step on one example; returns the loss before the step.
    ///
    /// # Panics
    /// With the message of [`Learner::try_step`]'s error.
    pub fn step(&mut self, x: &X, label: &L::Label) -> T {
        self.try_step(x, label).unwrap_or_else(|e| panic!("{e}"))
    }

    /// [`Learner::step`] on an input the caller gives away (see [`Learner::try_step_owned`]).
    ///
    /// # Panics
    /// With the message of [`Learner::try_step`]'s error.
    pub fn step_owned(&mut self, x: X, label: &L::Label) -> T {
        self.try_step_owned(x, label)
            .unwrap_or_else(|e| panic!("{e}"))
    }

    /// One step on a minibatch of exactly `B` examples (the model batched with [`Batch`]);
    /// the loss is the batch mean. Returns the mean loss before the step.
    ///
    /// # Errors
    /// A batch whose length is not `B`, a label the loss cannot take (with its position), a
    /// non-finite loss or parameter change. On error nothing is changed.
    pub fn try_step_batch<const B: usize>(
        &mut self,
        xs: &[X],
        labels: &[L::Label],
    ) -> Result<T, StepError>
    where
        M::Param: Tangent,
        M::Out: Tangent,
    {
        if xs.len() != B || labels.len() != B || B == 0 {
            return Err(StepError::BatchSize {
                expected: B,
                inputs: xs.len(),
                labels: labels.len(),
            });
        }
        for (i, label) in labels.iter().enumerate() {
            check(&self.loss, i, label)?;
        }
        let p = seen(
            &self.optimizer,
            &self.state,
            &self.params,
            &mut self.scratch,
        );
        let batch = Batch::<&M, B>::new(&self.model);
        let (ys, pull_model) = batch.vjp_params(p, core::array::from_fn(|i| xs[i].clone()));
        let mean = T::one() / T::cst(B as f64);
        let rate = self.optimizer.rate();
        let ((), pull_rate) = rate.apply_vjp(T::zero());
        let dl = pull_rate(()) * mean;
        let mut total = T::zero();
        let mut i = 0;
        let dys = ys.map(|y| {
            let (l, pull_loss) = self.loss.vjp(y, &labels[i]);
            i += 1;
            total += l;
            pull_loss(dl)
        });
        pull_model(dys, &mut self.change);
        let loss = total * mean;
        self.put(loss)?;
        Ok(loss)
    }

    /// One step on a minibatch of exactly `B` examples.
    ///
    /// # Panics
    /// With the message of [`Learner::try_step_batch`]'s error.
    pub fn step_batch<const B: usize>(&mut self, xs: &[X], labels: &[L::Label]) -> T
    where
        M::Param: Tangent,
        M::Out: Tangent,
    {
        self.try_step_batch::<B>(xs, labels)
            .unwrap_or_else(|e| panic!("{e}"))
    }

    /// The mean loss over a data set at the current parameters.
    ///
    /// # Errors
    /// Inputs and labels of different lengths, a label the loss cannot take, or no examples
    /// ([`StepError::NoExamples`]: the mean of none is not a number).
    pub fn try_mean_loss(&self, xs: &[X], labels: &[L::Label]) -> Result<T, StepError> {
        same_len(xs.len(), labels.len())?;
        if xs.is_empty() {
            return Err(StepError::NoExamples);
        }
        let mut total = T::zero();
        for (i, (x, label)) in xs.iter().zip(labels).enumerate() {
            check(&self.loss, i, label)?;
            total += self.loss.loss(&self.predict(x), label);
        }
        Ok(total / T::cst(xs.len() as f64))
    }

    /// Optimises an *input* with the parameters fixed: the input port of the composite is
    /// opened and the optimizer is put there instead (deep dreaming, adversarial examples).
    /// Runs `steps` steps from `x` towards `label` and returns the learned input.
    ///
    /// # Errors
    /// A label the loss cannot take, or a non-finite loss or input change.
    pub fn try_learn_input<O2>(
        &self,
        x: X,
        label: &L::Label,
        optimizer: &O2,
        steps: usize,
    ) -> Result<X, StepError>
    where
        X: Flat<T>,
        O2: Optimizer<X, Scalar = T>,
    {
        check(&self.loss, 0, label)?;
        optimizer.check().map_err(StepError::Setting)?;
        let mut x = x;
        let mut state = optimizer.init_state(&x);
        let mut scratch = x.clone();
        // The parameters are fixed: their change goes to a buffer that is never read.
        let mut unused = held_zeros::<M::Param>();
        for _ in 0..steps {
            let seen = optimizer.view(&state, &x, &mut scratch).clone();
            let (y, pull_model) = self.model.vjp(&self.params, seen);
            let (loss, pull_loss) = self.loss.vjp(y, label);
            if !loss.finite() {
                return Err(StepError::NonFiniteLoss {
                    loss: loss.to_f64(),
                });
            }
            let rate = optimizer.rate();
            let ((), pull_rate) = rate.apply_vjp(loss);
            let dx = pull_model(pull_loss(pull_rate(())), &mut unused);
            if !dx.all_finite() {
                return Err(StepError::NonFiniteGradient);
            }
            optimizer.update(&mut state, &mut x, &dx);
        }
        Ok(x)
    }

    /// Lets the optimizer put the step's change (in `self.change`) onto the parameters, and
    /// leaves the change buffer at zero for the next step (on a refused step too).
    fn put(&mut self, loss: T) -> Result<(), StepError> {
        put(
            &self.optimizer,
            &mut self.state,
            &mut self.params,
            &mut self.change,
            loss,
        )
    }
}

/// Lets `optimizer` put `change` onto `params` and `state` after a step whose loss was
/// `loss`, or refuses the step (a setting out of range, a non-finite loss or change) with
/// nothing changed; either way `change` is left at zero for the next step.
fn put<T: Real, P: Flat<T>, O: Optimizer<P, Scalar = T>>(
    optimizer: &O,
    state: &mut O::State,
    params: &mut P,
    change: &mut P,
    loss: T,
) -> Result<(), StepError> {
    let refused = if let Err(bad) = optimizer.check() {
        Some(StepError::Setting(bad))
    } else if !loss.finite() {
        Some(StepError::NonFiniteLoss {
            loss: loss.to_f64(),
        })
    } else if !change.all_finite() {
        Some(StepError::NonFiniteGradient)
    } else {
        None
    };
    if let Some(e) = refused {
        zero(change, params);
        return Err(e);
    }
    optimizer.update_and_clear(state, params, change);
    Ok(())
}

impl<M, X, L, O, T> Learner<M, X, L, O>
where
    T: Real,
    X: Clone,
    M: Para<X>,
    M::Param: Flat<T>,
    L: Loss<M::Out, Scalar = T>,
    M::Out: Clone + Argmax,
    O: Optimizer<M::Param, Scalar = T>,
{
    /// The predicted class: the index of the largest output (0 for an output of NaN only,
    /// which names no class: [`Argmax::class`] of [`Learner::predict`] tells).
    pub fn predict_class(&self, x: &X) -> usize {
        self.predict(x).argmax()
    }

    /// The fraction of examples whose predicted class equals the label (an output of NaN
    /// only is a miss, whatever the label). NaN for no examples: a share of none is not a
    /// number, and [`crate::train::Eval`] reads NaN as "not measured" where a made-up 0 would
    /// be a measured failure.
    ///
    /// # Panics
    /// If `xs` and `labels` have different lengths.
    pub fn accuracy(&self, xs: &[X], labels: &[usize]) -> f64 {
        same_len(xs.len(), labels.len()).unwrap_or_else(|e| panic!("{e}"));
        if xs.is_empty() {
            return f64::NAN;
        }
        let hits = xs
            .iter()
            .zip(labels)
            .filter(|(x, y)| self.predict(x).class() == Some(**y))
            .count();
        hits as f64 / xs.len() as f64
    }
}

/// The parameters the model runs with: the optimizer's view where it has one.
fn seen<'p, P, O: Optimizer<P>>(
    optimizer: &O,
    state: &O::State,
    params: &'p P,
    scratch: &'p mut Option<Held<P>>,
) -> &'p P {
    match scratch {
        Some(s) => optimizer.view(state, params, s),
        None => params,
    }
}

/// Sets a change buffer to zero in place. It walks the buffer beside `shape` (any value of
/// its type) with `zip2_slices`, which recurses through the structure so each slice's fixed
/// length stays visible and the fill compiles to plain stores; `slices_mut` would call
/// `memset` once per array (measured: a tenth of an Iris step's instructions).
fn zero<T: Real, P: Flat<T>>(p: &mut P, shape: &P) {
    p.zip2_slices(shape, &mut |c, _| c.fill(T::zero()));
}

fn check<Y: Clone, L: Loss<Y>>(loss: &L, index: usize, label: &L::Label) -> Result<(), StepError> {
    loss.check_labels(label)
        .map_err(|(k, error)| StepError::Label {
            index: index + k,
            error,
        })
}

fn same_len(inputs: usize, labels: usize) -> Result<(), StepError> {
    if inputs == labels {
        Ok(())
    } else {
        Err(StepError::BatchSize {
            expected: inputs,
            inputs,
            labels,
        })
    }
}

/// Outputs that name a class: the index of their largest entry.
///
/// ```
/// use paralens::Argmax;
/// use paralens::nalgebra::SVector;
///
/// let out = SVector::<f32, 3>::new(0.2, f32::NAN, 0.7);
/// assert_eq!(Argmax::argmax(&out), 2);
/// assert_eq!(out.class(), Some(2));
/// // An output of NaN only names no class; `argmax` then says 0.
/// let lost = SVector::<f32, 3>::repeat(f32::NAN);
/// assert_eq!((lost.class(), Argmax::argmax(&lost)), (None, 0));
/// ```
pub trait Argmax {
    /// The index of the largest entry (the first on ties; a NaN entry is never chosen over
    /// a number; 0 when every entry is NaN, see [`Argmax::class`]).
    fn argmax(&self) -> usize;

    /// The class the output names: the index of its largest entry, `None` when it names
    /// none (every entry NaN). The default is [`Argmax::argmax`], for outputs that always
    /// name one.
    fn class(&self) -> Option<usize> {
        Some(self.argmax())
    }
}

impl<T: Real, const N: usize> Argmax for SVector<T, N> {
    fn argmax(&self) -> usize {
        self.class().unwrap_or(0)
    }

    fn class(&self) -> Option<usize> {
        let mut best: Option<usize> = None;
        for i in 0..N {
            if !self[i].is_nan_value() && best.is_none_or(|b| self[i] > self[b]) {
                best = Some(i);
            }
        }
        best
    }
}

/// The smooth learner's step: the target is the loss's label, the report the loss before
/// the step.
impl<M, X, L, O, T> crate::Learn<X> for Learner<M, X, L, O>
where
    T: Real,
    X: Clone,
    M: Para<X>,
    M::Param: Flat<T>,
    L: Loss<M::Out, Scalar = T>,
    M::Out: Clone,
    O: Optimizer<M::Param, Scalar = T>,
{
    type Target = L::Label;
    type Out = M::Out;
    type Report = T;
    type Error = StepError;

    fn learn(&mut self, x: &X, label: &L::Label) -> Result<T, StepError> {
        self.try_step(x, label)
    }

    fn output(&mut self, x: &X) -> M::Out {
        self.predict(x)
    }
}
