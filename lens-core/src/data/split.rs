//! Seeded stratified splits and feature standardisation.

use rand::{SeedableRng, rngs::StdRng, seq::SliceRandom};

/// Splits example indices into (train, test) so that each class keeps its proportion: from
/// each class, `round(n_class * test_fraction)` examples go to the test set. Deterministic
/// for a given `seed`; both lists are in increasing order.
///
/// ```
/// let labels = [0, 0, 0, 0, 0, 1, 1, 1, 1, 1];
/// let (train, test) = paralens::data::stratified_split(&labels, 0.2, 1);
/// assert_eq!((train.len(), test.len()), (8, 2));
/// assert_eq!(test.iter().filter(|&&i| labels[i] == 1).count(), 1);
/// ```
///
/// # Panics
/// If `test_fraction` is not in `[0, 1]`.
#[must_use]
pub fn stratified_split(
    labels: &[usize],
    test_fraction: f64,
    seed: u64,
) -> (Vec<usize>, Vec<usize>) {
    assert!(
        (0.0..=1.0).contains(&test_fraction),
        "test_fraction must be in [0, 1], got {test_fraction}"
    );
    let mut rng = StdRng::seed_from_u64(seed);
    // The classes that occur, in increasing order (not `0..=max`: a label of 300 million
    // made that loop scan the labels 300 million times, and `usize::MAX` overflowed).
    let mut classes = labels.to_vec();
    classes.sort_unstable();
    classes.dedup();
    let (mut train, mut test) = (Vec::new(), Vec::new());
    for c in classes {
        let mut idx: Vec<usize> = (0..labels.len()).filter(|&i| labels[i] == c).collect();
        idx.shuffle(&mut rng);
        let n_test = (idx.len() as f64 * test_fraction).round() as usize;
        test.extend_from_slice(&idx[..n_test]);
        train.extend_from_slice(&idx[n_test..]);
    }
    train.sort_unstable();
    test.sort_unstable();
    (train, test)
}

/// Per-feature standardisation `(x - mean) / std`, fitted on training data only.
#[derive(Clone, Debug, PartialEq)]
pub struct Standardizer<const N: usize> {
    /// Per-feature mean.
    pub mean: [f64; N],
    /// Per-feature standard deviation (1 where a feature is constant).
    pub std: [f64; N],
}

impl<const N: usize> Standardizer<N> {
    /// Fits means and standard deviations to `rows`.
    ///
    /// ```
    /// use paralens::data::Standardizer;
    /// let s = Standardizer::fit(&[[1.0], [3.0]]);
    /// assert_eq!(s.apply(&[3.0]), [1.0]);
    /// ```
    ///
    /// # Panics
    /// If `rows` is empty (there is nothing to fit: it gave the identity, silently).
    #[must_use]
    pub fn fit(rows: &[[f64; N]]) -> Self {
        assert!(
            !rows.is_empty(),
            "Standardizer::fit of no rows: there is nothing to fit (is the training split empty?)"
        );
        let n = rows.len() as f64;
        let mut mean = [0.0; N];
        let mut std = [0.0; N];
        for r in rows {
            for j in 0..N {
                mean[j] += r[j] / n;
            }
        }
        for r in rows {
            for j in 0..N {
                std[j] += (r[j] - mean[j]).powi(2) / n;
            }
        }
        for s in &mut std {
            *s = if *s > 0.0 { s.sqrt() } else { 1.0 };
        }
        Self { mean, std }
    }

    /// Standardises one row.
    #[must_use]
    pub fn apply(&self, row: &[f64; N]) -> [f64; N] {
        core::array::from_fn(|j| (row[j] - self.mean[j]) / self.std[j])
    }
}
