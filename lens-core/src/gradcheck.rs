//! Checking reverse derivatives against central finite differences.

use crate::Flat;
#[cfg(feature = "alloc")]
use alloc::vec;

/// The result of [`check_gradient`]: the largest discrepancy found.
#[derive(Clone, Debug, PartialEq)]
pub struct GradCheck {
    /// The largest `|reverse - numeric|` over all Jacobian entries checked.
    pub max_abs_error: f64,
    /// The largest error relative to `max(1, |reverse|, |numeric|)`.
    pub max_rel_error: f64,
    /// Where it was: (output index, input index, reverse value, numeric value).
    pub worst: (usize, usize, f64, f64),
}

impl GradCheck {
    /// `true` when every entry agrees within `tol` (relative to `max(1, |values|)`).
    #[must_use]
    pub fn passes(&self, tol: f64) -> bool {
        self.max_rel_error <= tol
    }
}

impl core::fmt::Display for GradCheck {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        let (o, i, r, n) = self.worst;
        write!(
            f,
            "max relative error {:.3e} (absolute {:.3e}) at output {o}, input {i}: reverse {r}, finite differences {n}",
            self.max_rel_error, self.max_abs_error
        )
    }
}

/// Compares a reverse derivative with central finite differences of the forward map, entry
/// by entry over the whole Jacobian.
///
/// For each output coordinate `o` the change `d = e_o` is pulled back with `rev(x, d)`, and
/// each input coordinate `i` of the result is compared with
/// `(f(x + h e_i)_o - f(x - h e_i)_o) / 2h`. Works for any [`Flat`] input and output
/// (scalars, matrices, tuples, parameter structs).
///
/// ```
/// use paralens::check_gradient;
/// // f(x) = x^3, f'(x) = 3x^2
/// let report = check_gradient(|x: f64| x * x * x, |x: f64, d: f64| 3.0 * x * x * d, 1.5, 1e-6);
/// assert!(report.passes(1e-6), "{report}");
/// ```
pub fn check_gradient<X, Y>(f: impl Fn(X) -> Y, rev: impl Fn(X, Y) -> X, x: X, h: f64) -> GradCheck
where
    X: Flat<f64>,
    Y: Flat<f64>,
{
    let n_in = x.flat_len();
    let y0 = f(x.clone());
    let n_out = y0.flat_len();
    let mut report = GradCheck {
        max_abs_error: 0.0,
        max_rel_error: 0.0,
        worst: (0, 0, 0.0, 0.0),
    };
    // Numeric Jacobian column by column (one pair of forward runs per input coordinate).
    let mut numeric = vec![0.0; n_in * n_out];
    for i in 0..n_in {
        let plus = f(perturb(&x, i, h));
        let minus = f(perturb(&x, i, -h));
        for (o, (a, b)) in flat(&plus).zip(flat(&minus)).enumerate() {
            numeric[o * n_in + i] = (a - b) / (2.0 * h);
        }
    }
    for o in 0..n_out {
        let mut d = Y::zeros();
        set(&mut d, o, 1.0);
        let r = rev(x.clone(), d);
        for (i, rv) in flat(&r).enumerate() {
            let nv = numeric[o * n_in + i];
            let abs = (rv - nv).abs();
            let rel = abs / 1f64.max(rv.abs()).max(nv.abs());
            if abs.is_nan() || rel > report.max_rel_error {
                report.max_rel_error = if abs.is_nan() { f64::INFINITY } else { rel };
                report.worst = (o, i, rv, nv);
            }
            report.max_abs_error = report.max_abs_error.max(abs);
        }
    }
    report
}

fn flat<X: Flat<f64>>(x: &X) -> impl Iterator<Item = f64> + '_ {
    x.slices().flatten().copied()
}

fn set<X: Flat<f64>>(x: &mut X, index: usize, value: f64) {
    let slot = x
        .slices_mut()
        .flatten()
        .nth(index)
        .expect("index within flat_len");
    *slot = value;
}

fn perturb<X: Flat<f64>>(x: &X, index: usize, h: f64) -> X {
    let mut y = x.clone();
    let slot = y
        .slices_mut()
        .flatten()
        .nth(index)
        .expect("index within flat_len");
    *slot += h;
    y
}
