//! Binarisers: real features into bits.

/// Per feature, the midpoint of its range: after min-max normalisation, a bit is set where
/// the value exceeds 0.5 (the encoding of the reverse-derivative-ascent Iris experiments).
#[derive(Clone, Debug, PartialEq)]
pub struct Midpoint<const N: usize> {
    /// Per-feature minimum.
    pub min: [f64; N],
    /// Per-feature maximum.
    pub max: [f64; N],
}

impl<const N: usize> Midpoint<N> {
    /// Fits the ranges to `rows`.
    ///
    /// ```
    /// use paralens::circuits::binarise::Midpoint;
    /// let b = Midpoint::fit(&[[0.0, 10.0], [4.0, 20.0]]);
    /// assert_eq!(b.encode(&[3.0, 12.0]), 0b01); // 0.75 > 0.5, 0.2 <= 0.5
    /// ```
    ///
    /// # Panics
    /// If `rows` is empty (there is nothing to fit: it gave infinite ranges, silently).
    #[must_use]
    pub fn fit(rows: &[[f64; N]]) -> Self {
        assert!(
            !rows.is_empty(),
            "fitting a binary code to no rows: there is nothing to fit (is the training split empty?)"
        );
        let mut min = [f64::INFINITY; N];
        let mut max = [f64::NEG_INFINITY; N];
        for r in rows {
            for j in 0..N {
                min[j] = min[j].min(r[j]);
                max[j] = max[j].max(r[j]);
            }
        }
        Self { min, max }
    }

    /// The bits of one row: bit `j` is feature `j` above the middle of its range (a constant
    /// feature gives 0).
    ///
    /// # Panics
    /// If `N > 64`.
    #[must_use]
    pub fn encode(&self, row: &[f64; N]) -> u64 {
        assert!(N <= 64, "a midpoint code of {N} bits does not fit a u64");
        (0..N).fold(0, |bits, j| {
            let span = self.max[j] - self.min[j];
            let on = span > 0.0 && (row[j] - self.min[j]) / span > 0.5;
            bits | (u64::from(on) << j)
        })
    }
}

/// Thermometer code: `L` thresholds per feature, evenly spaced inside its range; bit
/// `j * L + t` is set where feature `j` exceeds threshold `t` (so a larger value sets more
/// bits, and the code keeps order).
#[derive(Clone, Debug, PartialEq)]
pub struct Thermometer<const N: usize, const L: usize> {
    /// The thresholds of each feature.
    pub thresholds: [[f64; L]; N],
}

impl<const N: usize, const L: usize> Thermometer<N, L> {
    /// Fits thresholds at `min + (t + 1) / (L + 1) * (max - min)`.
    ///
    /// ```
    /// use paralens::circuits::binarise::Thermometer;
    /// let t = Thermometer::<1, 3>::fit(&[[0.0], [4.0]]); // thresholds 1, 2, 3
    /// assert_eq!(t.encode(&[2.5]), 0b011);
    /// ```
    ///
    /// # Panics
    /// If `rows` is empty, as [`Midpoint::fit`].
    #[must_use]
    pub fn fit(rows: &[[f64; N]]) -> Self {
        let m = Midpoint::fit(rows);
        Self {
            thresholds: core::array::from_fn(|j| {
                core::array::from_fn(|t| {
                    m.min[j] + (t + 1) as f64 / (L + 1) as f64 * (m.max[j] - m.min[j])
                })
            }),
        }
    }

    /// The `N * L` bits of one row (at most 64).
    ///
    /// # Panics
    /// If `N * L > 64`.
    #[must_use]
    pub fn encode(&self, row: &[f64; N]) -> u64 {
        assert!(
            N * L <= 64,
            "a thermometer code of {} bits does not fit a u64",
            N * L
        );
        let mut bits = 0;
        for (j, (v, ts)) in row.iter().zip(&self.thresholds).enumerate() {
            for (t, th) in ts.iter().enumerate() {
                bits |= u64::from(v > th) << (j * L + t);
            }
        }
        bits
    }
}
