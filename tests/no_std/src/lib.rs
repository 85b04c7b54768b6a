//! The Iris MLP (4-16-3, ReLU, softmax cross-entropy, Adam) trained in a `#![no_std]` library
//! with no allocator at all: the model is a `#[lens]` function with `#[param]` arguments, the
//! `Learner` holds its parameters inline (paralens without its `alloc` feature), and the data
//! is parsed from the CSV compiled into the binary.
//!
//! Nothing here can allocate: neither this crate nor any it depends on links `alloc`, so the
//! program in `main.rs`, which declares no global allocator, would not link otherwise.
#![no_std]

use paralens::optim::Adam;
use paralens::prelude::*;

/// Rows of the Iris data (150, of which every fifth is held out).
pub const ROWS: usize = 150;

/// The data, as shipped with lens-core (from scikit-learn; see its `data/README.md`).
const IRIS_CSV: &str = include_str!("../../../lens-core/data/iris.csv");

/// The model: two dense layers with a ReLU between them, differentiated by `#[lens]`.
#[lens(init = draw)]
pub fn iris_mlp(
    #[param] w1: SMatrix<f32, 16, 4>,
    #[param] b1: SVector<f32, 16>,
    #[param] w2: SMatrix<f32, 3, 16>,
    #[param] b2: SVector<f32, 3>,
    x: SVector<f32, 4>,
) -> SVector<f32, 3> {
    let h = relu(w1 * x + b1);
    w2 * h + b2
}

/// He-uniform weights, zero biases.
fn draw<R: paralens::rand::Rng + ?Sized>(
    rng: &mut R,
) -> (
    SMatrix<f32, 16, 4>,
    SVector<f32, 16>,
    SMatrix<f32, 3, 16>,
    SVector<f32, 3>,
) {
    // sqrt(6 / fan_in), for fan-in 4 and 16.
    let (l1, l2) = (1.224_745_f32, 0.612_372_f32);
    (
        SMatrix::from_fn(|_, _| rng.random_range(-l1..l1)),
        SVector::zeros(),
        SMatrix::from_fn(|_, _| rng.random_range(-l2..l2)),
        SVector::zeros(),
    )
}

/// Why the data could not be read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DataError {
    /// A row (1-based, after the header) does not have four numbers and a known species.
    BadRow(usize),
    /// The file has another number of rows than [`ROWS`].
    RowCount(usize),
}

/// The features (standardised per column) and labels of the 150 rows.
///
/// # Errors
/// A malformed row, or a count other than 150.
pub fn iris() -> Result<([SVector<f32, 4>; ROWS], [usize; ROWS]), DataError> {
    parse(IRIS_CSV)
}

/// [`iris`] from the text of a CSV file with a header line.
///
/// # Errors
/// A malformed row, or a count other than 150.
pub fn parse(csv: &str) -> Result<([SVector<f32, 4>; ROWS], [usize; ROWS]), DataError> {
    let mut xs = [SVector::<f32, 4>::zeros(); ROWS];
    let mut ys = [0usize; ROWS];
    let mut n = 0;
    for (i, line) in csv.lines().skip(1).filter(|l| !l.is_empty()).enumerate() {
        if n == ROWS {
            return Err(DataError::RowCount(n + 1));
        }
        let mut fields = line.split(',');
        for v in xs[n].iter_mut() {
            *v = fields
                .next()
                .and_then(|f| f.trim().parse().ok())
                .ok_or(DataError::BadRow(i + 1))?;
        }
        ys[n] = match fields.next().map(str::trim) {
            Some("setosa") => 0,
            Some("versicolor") => 1,
            Some("virginica") => 2,
            _ => return Err(DataError::BadRow(i + 1)),
        };
        n += 1;
    }
    if n != ROWS {
        return Err(DataError::RowCount(n));
    }
    for k in 0..4 {
        let mean = xs.iter().map(|x| x[k]).sum::<f32>() / ROWS as f32;
        let var = xs
            .iter()
            .map(|x| (x[k] - mean) * (x[k] - mean))
            .sum::<f32>()
            / ROWS as f32;
        let sd = paralens::nalgebra::ComplexField::sqrt(var);
        for x in &mut xs {
            x[k] = (x[k] - mean) / sd;
        }
    }
    Ok((xs, ys))
}

/// The chained Rosenbrock function over 8 variables, written with a loop and indexing: its
/// reverse keeps a tape of the iterations, which without `alloc` lives inline, on the stack.
#[lens]
pub fn chained_rosenbrock(x: SVector<f64, 8>) -> f64 {
    let mut s = 0.0;
    for i in 0..7 {
        let a = x[i + 1] - x[i] * x[i];
        let b = 1.0 - x[i];
        s += 100.0 * a * a + b * b;
    }
    s
}

/// The largest difference between the generated gradient of [`chained_rosenbrock`] and
/// central finite differences (step `1e-6`), at a point away from the minimum.
#[must_use]
pub fn loop_gradient_error() -> f64 {
    let x = SVector::<f64, 8>::from_fn(|i, _| 0.3 + 0.1 * i as f64 - 0.05 * (i % 3) as f64);
    let grad = chained_rosenbrock_rev(x, 1.0);
    let h = 1e-6;
    (0..8)
        .map(|i| {
            let (mut up, mut down) = (x, x);
            up[i] += h;
            down[i] -= h;
            let numeric = (chained_rosenbrock(up) - chained_rosenbrock(down)) / (2.0 * h);
            (numeric - grad[i]).abs()
        })
        .fold(0.0, f64::max)
}

/// What a run measured.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Report {
    /// Mean training loss over the first epoch.
    pub first_loss: f32,
    /// Mean training loss over the last epoch.
    pub last_loss: f32,
    /// Accuracy on the held-out rows (every fifth) after training.
    pub held_out_accuracy: f32,
}

/// Trains the MLP for `epochs` epochs on four rows in five (one example per step, Adam at
/// 0.01) and measures it on the fifth.
///
/// # Errors
/// The data could not be read, or a step failed (a NaN loss).
pub fn train(epochs: usize, seed: u64) -> Result<Report, &'static str> {
    let (xs, ys) = iris().map_err(|_| "the shipped iris.csv could not be read")?;
    let params = IrisMlp.init(seed);
    let mut learner = Learner::new(IrisMlp, params, SoftmaxCrossEntropy, Adam::new(0.01));
    let (mut first_loss, mut last_loss) = (0.0, 0.0);
    for epoch in 0..epochs {
        let mut total = 0.0;
        let mut count = 0;
        for i in (0..ROWS).filter(|i| i % 5 != 0) {
            total += learner
                .try_step(&xs[i], &ys[i])
                .map_err(|_| "a training step failed")?;
            count += 1;
        }
        let mean = total / count as f32;
        if epoch == 0 {
            first_loss = mean;
        }
        last_loss = mean;
    }
    let held: [usize; ROWS / 5] = core::array::from_fn(|j| 5 * j);
    let right = held
        .iter()
        .filter(|&&i| learner.predict(&xs[i]).argmax().0 == ys[i])
        .count();
    Ok(Report {
        first_loss,
        last_loss,
        held_out_accuracy: right as f32 / held.len() as f32,
    })
}

#[cfg(test)]
mod tests {
    // The test harness runs on `std`; paralens is still built without `alloc` here, so these
    // tests check the allocation-free configuration (inline storage, inline tapes).
    extern crate std;

    #[test]
    fn the_loop_gradient_matches_finite_differences() {
        let err = super::loop_gradient_error();
        assert!(err < 1e-5, "gradient off by {err}");
    }

    #[test]
    fn the_mlp_learns_iris() {
        let r = super::train(40, 7).expect("training runs");
        assert!(r.held_out_accuracy >= 0.9, "{r:?}");
        assert!(r.last_loss < 0.5 * r.first_loss, "{r:?}");
    }

    /// The inline tape (paralens without `alloc`): last in, first out through its extra slot,
    /// and the values still on it dropped with it, once each.
    #[test]
    fn the_inline_tape_pops_in_reverse_and_drops_what_it_holds() {
        use paralens::__private::Tape;
        use std::rc::Rc;
        let mut t = Tape::<usize, 2>::new();
        for i in 0..3 {
            t.push(i);
        }
        assert_eq!(
            [t.pop(), t.pop(), t.pop(), t.pop()],
            [Some(2), Some(1), Some(0), None]
        );
        let counted = Rc::new(());
        let mut t = Tape::<Rc<()>, 4>::new();
        for _ in 0..5 {
            t.push(counted.clone());
        }
        drop(t.pop());
        assert_eq!(Rc::strong_count(&counted), 5);
        drop(t);
        assert_eq!(Rc::strong_count(&counted), 1);
    }

    #[test]
    fn a_malformed_row_is_an_error_naming_it() {
        let csv = "h\n5.1,3.5,1.4,0.2,setosa\n4.9,x,1.4,0.2,setosa\n";
        assert_eq!(super::parse(csv).err(), Some(super::DataError::BadRow(2)));
        let csv = "h\n5.1,3.5,1.4,0.2,tulip\n";
        assert_eq!(super::parse(csv).err(), Some(super::DataError::BadRow(1)));
        let csv = "h\n5.1,3.5,1.4,0.2,setosa\n";
        assert_eq!(super::parse(csv).err(), Some(super::DataError::RowCount(1)));
    }
}
