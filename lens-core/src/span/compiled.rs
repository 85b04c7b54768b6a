//! The compiled form of a span: its cells grouped by output, by input and by parameter
//! (compressed rows), so that each pass is a conflict-free gather.

use super::{Cell, Span};
use crate::Real;
#[cfg(feature = "alloc")]
use alloc::{vec, vec::Vec};

/// Cells grouped three ways. Row `r` of a grouping holds the cells whose index (output,
/// input or parameter) is `r`, so each pass writes every result exactly once.
#[derive(Clone, Debug)]
pub struct CompiledSpan<T> {
    inputs: usize,
    params: usize,
    outputs: usize,
    by_t: Rows<T>,
    by_s: Rows<T>,
    by_p: Rows<T>,
}

/// Compressed rows: the cells of row `r` are `start[r]..start[r + 1]`.
#[derive(Clone, Debug)]
struct Rows<T> {
    start: Vec<u32>,
    /// The other two indices of each cell (`u32::MAX` for "none") and its weight.
    a: Vec<u32>,
    b: Vec<u32>,
    mu: Vec<T>,
}

const NONE: u32 = u32::MAX;

fn group<T: Real>(
    cells: &[Cell],
    rows: usize,
    key: impl Fn(&Cell) -> Option<u32>,
    other: impl Fn(&Cell) -> (Option<u32>, Option<u32>),
) -> Rows<T> {
    let mut order: Vec<usize> = (0..cells.len())
        .filter(|&i| key(&cells[i]).is_some())
        .collect();
    order.sort_by_key(|&i| key(&cells[i]));
    let mut start = vec![0u32; rows + 1];
    for &i in &order {
        start[key(&cells[i]).expect("filtered") as usize + 1] += 1;
    }
    for r in 0..rows {
        start[r + 1] += start[r];
    }
    let (mut a, mut b, mut mu) = (Vec::new(), Vec::new(), Vec::new());
    for &i in &order {
        let (x, y) = other(&cells[i]);
        a.push(x.unwrap_or(NONE));
        b.push(y.unwrap_or(NONE));
        mu.push(T::cst(cells[i].mu));
    }
    Rows { start, a, b, mu }
}

/// Checks that the slice `name` of `method` holds at least the `n` entries it reads: a short
/// one panicked deep inside (an index out of bounds), a short output was filled in part.
#[inline]
#[track_caller]
fn need(method: &str, name: &str, len: usize, n: usize) {
    assert!(
        len >= n,
        "CompiledSpan::{method}: `{name}` has {len} entries, and the span reads {n}"
    );
}

#[inline]
fn at<T: Real>(v: &[T], i: u32) -> T {
    if i == NONE { T::one() } else { v[i as usize] }
}

impl<T: Real> CompiledSpan<T> {
    /// Compiles a span.
    ///
    /// # Panics
    /// If the span has an index out of range (see [`Span::validate`]) or more than `u32`
    /// cells.
    #[must_use]
    pub fn new(span: &Span) -> Self {
        if let Err(e) = span.validate() {
            panic!("{e}");
        }
        assert!(
            u32::try_from(span.cells.len()).is_ok(),
            "too many cells for u32 offsets"
        );
        Self {
            inputs: span.inputs,
            params: span.params,
            outputs: span.outputs,
            by_t: group(&span.cells, span.outputs, |c| Some(c.t), |c| (c.s, c.p)),
            by_s: group(&span.cells, span.inputs, |c| c.s, |c| (Some(c.t), c.p)),
            by_p: group(&span.cells, span.params, |c| c.p, |c| (c.s, Some(c.t))),
        }
    }

    /// The largest number of cells feeding one output (the fan-in, for initialisation).
    #[must_use]
    pub fn fan_in(&self) -> usize {
        self.by_t
            .start
            .windows(2)
            .map(|w| (w[1] - w[0]) as usize)
            .max()
            .unwrap_or(0)
    }

    /// Sizes: (inputs, parameters, outputs).
    #[must_use]
    pub fn sizes(&self) -> (usize, usize, usize) {
        (self.inputs, self.params, self.outputs)
    }

    /// `y[t] = sum over cells of t of mu x[s] w[p]`.
    ///
    /// # Panics
    /// If `x`, `w` or `y` is shorter than the span's inputs, parameters or outputs (entries
    /// past them are not read or written).
    #[inline]
    #[track_caller]
    pub fn forward(&self, x: &[T], w: &[T], y: &mut [T]) {
        need("forward", "x", x.len(), self.inputs);
        need("forward", "w", w.len(), self.params);
        need("forward", "y", y.len(), self.outputs);
        let r = &self.by_t;
        for (t, out) in y.iter_mut().enumerate().take(self.outputs) {
            let mut acc = T::zero();
            for c in r.start[t] as usize..r.start[t + 1] as usize {
                acc += r.mu[c] * at(x, r.a[c]) * at(w, r.b[c]);
            }
            *out = acc;
        }
    }

    /// `dx[s] = sum over cells of s of mu dy[t] w[p]` (the transposed layer).
    ///
    /// # Panics
    /// If `w`, `dy` or `dx` is shorter than the span's parameters, outputs or inputs.
    #[inline]
    #[track_caller]
    pub fn reverse_input(&self, w: &[T], dy: &[T], dx: &mut [T]) {
        need("reverse_input", "w", w.len(), self.params);
        need("reverse_input", "dy", dy.len(), self.outputs);
        need("reverse_input", "dx", dx.len(), self.inputs);
        let r = &self.by_s;
        for (s, out) in dx.iter_mut().enumerate().take(self.inputs) {
            let mut acc = T::zero();
            for c in r.start[s] as usize..r.start[s + 1] as usize {
                acc += r.mu[c] * dy[r.a[c] as usize] * at(w, r.b[c]);
            }
            *out = acc;
        }
    }

    /// `dw[p] = sum over cells of p of mu x[s] dy[t]`.
    ///
    /// # Panics
    /// If `x`, `dy` or `dw` is shorter than the span's inputs, outputs or parameters.
    #[inline]
    #[track_caller]
    pub fn reverse_param(&self, x: &[T], dy: &[T], dw: &mut [T]) {
        need("reverse_param", "dw", dw.len(), self.params);
        dw.iter_mut().take(self.params).for_each(|v| *v = T::zero());
        self.add_reverse_param(x, dy, dw);
    }

    /// `dw[p] += sum over cells of p of mu x[s] dy[t]` (for sums over a batch).
    ///
    /// # Panics
    /// If `x`, `dy` or `dw` is shorter than the span's inputs, outputs or parameters.
    #[inline]
    #[track_caller]
    pub fn add_reverse_param(&self, x: &[T], dy: &[T], dw: &mut [T]) {
        need("add_reverse_param", "x", x.len(), self.inputs);
        need("add_reverse_param", "dy", dy.len(), self.outputs);
        need("add_reverse_param", "dw", dw.len(), self.params);
        let r = &self.by_p;
        for (p, out) in dw.iter_mut().enumerate().take(self.params) {
            let mut acc = T::zero();
            for c in r.start[p] as usize..r.start[p + 1] as usize {
                acc += r.mu[c] * at(x, r.a[c]) * dy[r.b[c] as usize];
            }
            *out += acc;
        }
    }
}
