//! Best-on-validation selection: Boolean steps do not descend a loss, so a step can make a
//! model worse, and a training run keeps the parameters that scored best on held-out data.
use alloc::borrow::ToOwned;

/// The parameters that scored best so far, with their score (higher is better).
///
/// A copy is taken only when a score beats every earlier one (a tie keeps the earlier
/// parameters, and a NaN score never wins), into the storage of the previous copy where it
/// can (`ToOwned::clone_into`).
///
/// ```
/// use paralens::circuits::BestOnValidation;
/// let mut best = BestOnValidation::<[bool]>::new();
/// assert!(best.offer(0.50, &[false, true]));
/// assert!(best.offer(0.75, &[true, true]));
/// assert!(!best.offer(0.75, &[true, false])); // a tie keeps the earlier
/// assert!(!best.offer(f64::NAN, &[false, false]));
/// assert_eq!(best.score(), Some(0.75));
/// assert_eq!(best.params(), Some(&[true, true][..]));
/// ```
#[derive(Clone, Debug)]
pub struct BestOnValidation<P: ToOwned + ?Sized> {
    best: Option<(f64, P::Owned)>,
}

impl<P: ToOwned + ?Sized> Default for BestOnValidation<P> {
    fn default() -> Self {
        Self::new()
    }
}

impl<P: ToOwned + ?Sized> BestOnValidation<P> {
    /// Nothing offered yet.
    #[must_use]
    pub fn new() -> Self {
        Self { best: None }
    }

    /// Offers `params` with their validation `score`; keeps a copy and returns `true` if the
    /// score beats every earlier one.
    pub fn offer(&mut self, score: f64, params: &P) -> bool {
        match &mut self.best {
            Some((best, kept)) if score > *best => {
                *best = score;
                params.clone_into(kept);
                true
            }
            Some(_) => false,
            None if score.is_nan() => false,
            None => {
                self.best = Some((score, params.to_owned()));
                true
            }
        }
    }

    /// The best score so far.
    #[must_use]
    pub fn score(&self) -> Option<f64> {
        self.best.as_ref().map(|(s, _)| *s)
    }

    /// The parameters that scored it.
    #[must_use]
    pub fn params(&self) -> Option<&P> {
        use core::borrow::Borrow;
        self.best.as_ref().map(|(_, p)| p.borrow())
    }

    /// The best score and its parameters.
    #[must_use]
    pub fn into_best(self) -> Option<(f64, P::Owned)> {
        self.best
    }
}
