//! Loss and accuracy curves of a [`History`] as an SVG file, through `plotters` (feature
//! `plot`, on by default): the training and held-out losses on the left, the held-out
//! accuracy on the right, one point per epoch, the best epoch marked.

use super::History;
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;
use std::path::Path;

/// Width and height of the picture, in pixels.
const SIZE: (u32, u32) = (960, 400);

/// Why a plot was not written.
#[derive(Debug)]
pub enum PlotError {
    /// The history has no epoch to draw.
    Empty,
    /// A value to draw is not finite (the epoch, and which curve).
    NotFinite {
        /// The epoch (from 1).
        epoch: usize,
        /// `"training loss"`, `"held-out loss"` or `"held-out accuracy"`.
        curve: &'static str,
    },
    /// Drawing or writing the file failed.
    Draw(String),
}

impl core::fmt::Display for PlotError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Self::Empty => write!(f, "nothing to plot: the history has no epoch"),
            Self::NotFinite { epoch, curve } => {
                write!(f, "cannot plot: the {curve} of epoch {epoch} is not finite")
            }
            Self::Draw(why) => write!(f, "cannot write the plot: {why}"),
        }
    }
}

impl std::error::Error for PlotError {}

impl History {
    /// Writes the loss and accuracy curves to `path` as SVG, titled `title`. A held-out
    /// loss that is NaN at every epoch (an evaluation that measures only the accuracy) is
    /// left out; so is an accuracy NaN at every epoch (a regression), the losses then taking
    /// the whole width and the best epoch marked on the held-out loss.
    ///
    /// ```
    /// use paralens::train::{EpochReport, Eval, History};
    /// let epoch = |n, loss, accuracy| EpochReport {
    ///     epoch: n,
    ///     train_loss: loss * 1.1,
    ///     eval: Eval { loss, accuracy },
    ///     best: n == 2,
    ///     seconds: 0.1,
    /// };
    /// let history = History {
    ///     epochs: vec![epoch(1, 0.9, 0.7), epoch(2, 0.5, 0.8)],
    ///     stopped_early: false,
    /// };
    /// let path = std::env::temp_dir().join("paralens_doc_curves.svg");
    /// history.plot(&path, "an example").unwrap();
    /// assert!(std::fs::read_to_string(&path).unwrap().starts_with("<svg"));
    /// ```
    ///
    /// # Errors
    /// An empty history, a non-finite value to draw (named with its epoch and curve), or a
    /// file that cannot be written.
    pub fn plot(&self, path: impl AsRef<Path>, title: &str) -> Result<(), PlotError> {
        let path = path.as_ref();
        if self.epochs.is_empty() {
            return Err(PlotError::Empty);
        }
        let eval_loss = self.measured_eval_loss();
        for e in &self.epochs {
            for (curve, v, drawn) in [
                ("training loss", e.train_loss, true),
                ("held-out loss", e.eval.loss, eval_loss),
                (
                    "held-out accuracy",
                    e.eval.accuracy,
                    self.measured_accuracy(),
                ),
            ] {
                if drawn && !v.is_finite() {
                    return Err(PlotError::NotFinite {
                        epoch: e.epoch,
                        curve,
                    });
                }
            }
        }
        self.draw(path, title)
            .map_err(|e| PlotError::Draw(format!("{}: {e}", path.display())))
    }

    /// Whether the held-out loss was measured: an evaluation that gives only an accuracy
    /// reports a NaN loss every epoch, and that curve is left out.
    fn measured_eval_loss(&self) -> bool {
        !self.epochs.iter().all(|e| e.eval.loss.is_nan())
    }

    /// Whether the accuracy was measured (see [`Self::measured_eval_loss`]).
    fn measured_accuracy(&self) -> bool {
        !self.epochs.iter().all(|e| e.eval.accuracy.is_nan())
    }

    fn draw(&self, path: &Path, title: &str) -> Result<(), Box<dyn std::error::Error>> {
        let root = SVGBackend::new(path, SIZE).into_drawing_area();
        root.fill(&WHITE)?;
        let root = root.titled(title, ("sans-serif", 20))?;
        let (left, right) = if self.measured_accuracy() {
            let (left, right) = root.split_horizontally(SIZE.0 / 2);
            (left, Some(right))
        } else {
            (root.clone(), None)
        };
        let epochs = self.epochs.len() as f64;
        let x_range = 0.5..epochs + 0.5;
        let at = |f: fn(&super::EpochReport) -> f64| -> Vec<(f64, f64)> {
            self.epochs.iter().map(|e| (e.epoch as f64, f(e))).collect()
        };

        let losses = if self.measured_eval_loss() {
            vec![
                (at(|e| e.train_loss), "training", BLUE),
                (at(|e| e.eval.loss), "held-out", RED),
            ]
        } else {
            vec![(at(|e| e.train_loss), "training", BLUE)]
        };
        let top = losses
            .iter()
            .flat_map(|l| &l.0)
            .map(|p| p.1)
            .fold(f64::MIN_POSITIVE, f64::max);
        let mut chart = ChartBuilder::on(&left)
            .caption("loss", ("sans-serif", 16))
            .margin(10)
            .x_label_area_size(30)
            .y_label_area_size(50)
            .build_cartesian_2d(x_range.clone(), 0.0..top * 1.05)?;
        epoch_mesh(&mut chart, self.epochs.len())?;
        for (points, name, color) in losses {
            chart
                .draw_series(LineSeries::new(points.iter().copied(), color))?
                .label(name)
                .legend(move |(x, y)| PathElement::new([(x, y), (x + 16, y)], color));
        }
        chart.configure_series_labels().border_style(BLACK).draw()?;
        let Some(right) = right else {
            // No accuracy: the best epoch on the held-out loss, which chose it.
            if let Some(best) = self.best().filter(|_| self.measured_eval_loss()) {
                chart.draw_series([Circle::new(
                    (best.epoch as f64, best.eval.loss),
                    5,
                    BLACK.filled(),
                )])?;
            }
            root.present()?;
            return Ok(());
        };

        let accuracy = at(|e| e.eval.accuracy);
        let (low, high) = accuracy
            .iter()
            .fold((f64::MAX, f64::MIN), |(l, h), p| (l.min(p.1), h.max(p.1)));
        let pad = ((high - low) * 0.1).max(1e-3);
        let mut chart = ChartBuilder::on(&right)
            .caption("held-out accuracy", ("sans-serif", 16))
            .margin(10)
            .x_label_area_size(30)
            .y_label_area_size(50)
            .build_cartesian_2d(x_range, low - pad..high + pad)?;
        epoch_mesh(&mut chart, self.epochs.len())?;
        chart.draw_series(LineSeries::new(accuracy.iter().copied(), GREEN))?;
        // The best epoch (the one `keep_best` puts back), as a circle.
        if let Some(best) = self.best() {
            chart.draw_series([Circle::new(
                (best.epoch as f64, best.eval.accuracy),
                5,
                BLACK.filled(),
            )])?;
        }
        root.present()?;
        Ok(())
    }
}

/// The grid and the epoch axis of a chart, labelled in whole epochs (`1, 2, 3`, where the
/// default read `10.0, 20.0`).
fn epoch_mesh(
    chart: &mut ChartContext<'_, SVGBackend<'_>, Cartesian2d<RangedCoordf64, RangedCoordf64>>,
    epochs: usize,
) -> Result<(), Box<dyn std::error::Error>> {
    chart
        .configure_mesh()
        .x_desc("epoch")
        .x_labels(epochs.min(10))
        .x_label_formatter(&|x| format!("{x:.0}"))
        .draw()?;
    Ok(())
}
