//! Logic gate networks learned through their smooth relaxation, then run as bit-sliced
//! Boolean circuits (`paralens::circuits::relaxed`).
//!
//! The images are binarised by thresholds (each pixel gives one input bit per threshold, as
//! the published logic gate networks do); three layers of two-input gates with fixed random
//! wiring, each gate a softmax over the 16 Boolean functions, learn by Adam through the
//! relaxation, with a group-sum head over the last layer's gates (the class with the largest
//! sum wins). Then each gate keeps its most probable function: the model becomes a netlist
//! evaluated 64 images per `u64` word, simplified (constants propagated, double negations and
//! dead gates removed; the same outputs on every test image, checked), its classes read by a
//! `GroupVote`. The example prints
//! the relaxed and the discrete test accuracy, the circuit's gates and depth, and the
//! discrete circuit's images per second on one core.
//!
//! Without `--data` it trains on the 8x8 digits shipped with the crate (192 inputs, three
//! layers of 1000 gates, a fifth of the digits held out); with `--data DIR` on MNIST or
//! Fashion-MNIST (1568 inputs, three layers of 8000 gates). `--gates walsh4` gives each gate
//! 4 parameters (the Walsh coefficients of its table's logits, `WalshLayer`) instead of 16
//! scores; `--layers 6` doubles the depth.
//!
//! ```text
//! cargo run --release --example logic_mnist
//! cargo run --release --example logic_mnist -- --data ../shared/data/mnist --epochs 10
//! cargo run --release --example logic_mnist -- --export-c digits.c --export-verilog digits.v
//! cargo run --release --example logic_mnist -- --gates walsh4 --layers 6
//! ```

use clap::Parser;
use paralens::circuits::models::GroupVote;
use paralens::circuits::relaxed::{Discretise, GroupSum, LogicLayer, WalshLayer, discretise};
use paralens::data::{digits, load_mnist, stratified_split};
use paralens::prelude::*;
use paralens::train::{Control, Eval, Fit, fit_sharded};
use paralens::{Para, ShardedLearner};
use std::path::PathBuf;
use std::time::Instant;

/// Images per shard of a step (the columns of one input matrix); a step has two shards.
const COLUMNS: usize = 32;
const SHARDS: usize = 2;
const CLASSES: usize = 10;

/// Logic gate networks learned through their relaxation, run as bit-sliced circuits.
#[derive(Parser, Debug)]
#[command(name = "logic_mnist", version)]
struct Args {
    /// The MNIST (or Fashion-MNIST) folder with the four IDX .gz files (in this project:
    /// ../shared/data/mnist); without it, the shipped 8x8 digits.
    #[arg(long, value_name = "DIR")]
    data: Option<PathBuf>,
    /// Passes over the training images.
    #[arg(long, value_name = "N", default_value_t = 40)]
    epochs: usize,
    /// Adam's step size.
    #[arg(long, value_name = "F", default_value_t = 0.05)]
    lr: f32,
    /// Threads for the steps (at most 2, one per shard; the result is the same whatever the
    /// number) [default: the machine's cores].
    #[arg(long, value_name = "N",
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    threads: Option<usize>,
    /// Write the discrete circuit as a C function (`void logic_mnist(const uint64_t in[],
    /// uint64_t out[])`, 64 images per word) to this file.
    #[arg(long, value_name = "FILE")]
    export_c: Option<PathBuf>,
    /// Write the discrete circuit as a combinational Verilog module to this file.
    #[arg(long, value_name = "FILE")]
    export_verilog: Option<PathBuf>,
    /// How a gate is parametrised.
    #[arg(long, value_enum, default_value_t = Gates::Softmax16)]
    gates: Gates,
    /// Layers of gates before the head.
    #[arg(long, value_enum, default_value_t = Layers::Three)]
    layers: Layers,
}

/// The network's depth.
#[derive(Clone, Copy, Debug, clap::ValueEnum)]
enum Layers {
    /// Three layers (of 1000 gates on the digits, 8000 on MNIST).
    #[value(name = "3")]
    Three,
    /// Six layers, as the published "small" MNIST network.
    #[value(name = "6")]
    Six,
}

/// A gate's parameters.
#[derive(Clone, Copy, Debug, clap::ValueEnum)]
enum Gates {
    /// 16 scores, a softmax over the 16 functions (`LogicLayer`).
    Softmax16,
    /// 4 Walsh coefficients of the table's logits (`WalshLayer`).
    Walsh4,
}

/// What a run gives.
#[derive(Clone, Copy, Debug)]
pub struct Report {
    /// The relaxed network's test accuracy.
    pub relaxed: f64,
    /// The discretised circuit's test accuracy.
    pub discrete: f64,
    /// The circuit's gates and depth.
    pub gates: usize,
    /// The circuit's depth in levels.
    pub depth: usize,
    /// Test images the circuit classifies per second on one core.
    pub images_per_second: f64,
    /// Seconds of training.
    pub seconds: f64,
}

/// Where to write the circuit, if anywhere.
#[derive(Clone, Debug, Default)]
pub struct Export {
    /// The C file.
    pub c: Option<PathBuf>,
    /// The Verilog file.
    pub verilog: Option<PathBuf>,
}

/// Binarised examples: `bits[i]` is example `i`'s inputs, 0 or 1.
pub struct Bits {
    /// The inputs.
    pub bits: Vec<Vec<bool>>,
    /// The labels.
    pub labels: Vec<usize>,
}

/// Thresholds each pixel value against `thresholds` (one bit each).
fn binarise(pixels: impl Iterator<Item = f64> + Clone, thresholds: &[f64]) -> Vec<bool> {
    thresholds
        .iter()
        .flat_map(|&t| pixels.clone().map(move |v| v > t))
        .collect()
}

/// The shipped digits, a fifth held out (stratified): 3 thresholds of the 0..16 pixels.
#[must_use]
pub fn digit_bits() -> (Bits, Bits) {
    let d = digits();
    let (train, test) = stratified_split(&d.labels, 0.2, 0);
    let take = |idx: &[usize]| Bits {
        bits: idx
            .iter()
            .map(|&i| binarise(d.images[i].iter().copied(), &[4.0, 8.0, 12.0]))
            .collect(),
        labels: idx.iter().map(|&i| d.labels[i]).collect(),
    };
    (take(&train), take(&test))
}

/// MNIST from `dir`: 2 thresholds of the 0..255 pixels.
///
/// # Errors
/// The data cannot be read.
pub fn mnist_bits(dir: &std::path::Path) -> Result<(Bits, Bits), paralens::data::DataError> {
    let m = load_mnist(dir)?;
    let take = |images: &paralens::data::Images, labels: &[u8]| Bits {
        bits: (0..labels.len())
            .map(|i| {
                binarise(
                    images.image(i).iter().map(|&v| f64::from(v)),
                    &[85.0, 170.0],
                )
            })
            .collect(),
        labels: labels.iter().map(|&l| usize::from(l)).collect(),
    };
    Ok((
        take(&m.train_images, &m.train_labels),
        take(&m.test_images, &m.test_labels),
    ))
}

/// The input batch of a step's shard.
type Input<const N: usize> = HeapMatrix<f32, N, COLUMNS>;

/// The head's temperature for `H` gates: the scores range over `0..=H/10` gates, and a
/// thirtieth of that (inputs of the softmax within 30) did best on the digits against a
/// tenth, a third, a fiftieth and a hundredth (0.944 discrete, against 0.936 to 0.894).
fn temperature<const H: usize>() -> f32 {
    (H / CLASSES) as f32 / 30.0
}

/// Three layers of `H` gates, each a softmax over the 16 functions, and the group-sum head.
#[must_use]
pub fn softmax_model<const N: usize, const H: usize>() -> impl Model<N> {
    LogicLayer::<N, H>::new(1)
        .then(LogicLayer::<H, H>::new(2))
        .then(LogicLayer::<H, H>::new(3))
        .then(GroupSum::<H, CLASSES>::new(temperature::<H>()))
}

/// The same network with 4 Walsh coefficients a gate (`WalshLayer`) instead of 16 scores.
#[must_use]
pub fn walsh_model<const N: usize, const H: usize>() -> impl Model<N> {
    WalshLayer::<N, H>::new(1)
        .then(WalshLayer::<H, H>::new(2))
        .then(WalshLayer::<H, H>::new(3))
        .then(GroupSum::<H, CLASSES>::new(temperature::<H>()))
}

/// Six layers of `H` gates, each a softmax over the 16 functions, and the group-sum head
/// (the depth of the published "small" MNIST network).
#[must_use]
pub fn deep_softmax_model<const N: usize, const H: usize>() -> impl Model<N> {
    LogicLayer::<N, H>::new(1)
        .then(LogicLayer::<H, H>::new(2))
        .then(LogicLayer::<H, H>::new(3))
        .then(LogicLayer::<H, H>::new(4))
        .then(LogicLayer::<H, H>::new(5))
        .then(LogicLayer::<H, H>::new(6))
        .then(GroupSum::<H, CLASSES>::new(temperature::<H>()))
}

/// [`deep_softmax_model`] with 4 Walsh coefficients a gate.
#[must_use]
pub fn deep_walsh_model<const N: usize, const H: usize>() -> impl Model<N> {
    WalshLayer::<N, H>::new(1)
        .then(WalshLayer::<H, H>::new(2))
        .then(WalshLayer::<H, H>::new(3))
        .then(WalshLayer::<H, H>::new(4))
        .then(WalshLayer::<H, H>::new(5))
        .then(WalshLayer::<H, H>::new(6))
        .then(GroupSum::<H, CLASSES>::new(temperature::<H>()))
}

/// A relaxed network of `N` inputs and `CLASSES` scores that trains on shards and
/// discretises: what [`run`] needs of a model.
pub trait Model<const N: usize>:
    Para<Input<N>, Out = HeapMatrix<f32, CLASSES, COLUMNS>, Param = Self::P>
    + Init<Param = Self::P>
    + Discretise<Params = Self::P>
    + Sync
{
    /// The parameters.
    type P: paralens::Flat<f32> + Clone + Send + Sync;
}

impl<const N: usize, M, P> Model<N> for M
where
    M: Para<Input<N>, Out = HeapMatrix<f32, CLASSES, COLUMNS>, Param = P>
        + Init<Param = P>
        + Discretise<Params = P>
        + Sync,
    P: paralens::Flat<f32> + Clone + Send + Sync,
{
    type P = P;
}

/// The examples `idx` as the columns of one batch (zeros past its end) and their labels.
fn batch<const N: usize>(
    data: &Bits,
    idx: &[usize],
) -> (HeapMatrix<f32, N, COLUMNS>, [usize; COLUMNS]) {
    let mut x = HeapMatrix::<f32, N, COLUMNS>::zeros();
    let xs = x.as_mut_slice();
    for (j, &i) in idx.iter().take(COLUMNS).enumerate() {
        for (r, &b) in data.bits[i].iter().enumerate() {
            xs[N * j + r] = f32::from(u8::from(b));
        }
    }
    (
        x,
        core::array::from_fn(|j| idx.get(j).map_or(0, |&i| data.labels[i])),
    )
}

/// The relaxed network's accuracy on `data`.
fn relaxed_accuracy<const N: usize, M: Model<N>>(m: &M, p: &M::P, data: &Bits) -> f64 {
    let idx: Vec<usize> = (0..data.labels.len()).collect();
    let mut right = 0;
    for chunk in idx.chunks(COLUMNS) {
        let (x, y) = batch::<N>(data, chunk);
        let s = m.forward(p, x);
        for (j, &want) in y.iter().enumerate().take(chunk.len()) {
            let best = (0..CLASSES).fold(0, |b, c| if s[(c, j)] > s[(b, j)] { c } else { b });
            right += usize::from(best == want);
        }
    }
    right as f64 / data.labels.len() as f64
}

/// Trains `m`, a network of `N` inputs whose last layer has `H` gates, on `train`, and
/// reports on `test`.
pub fn run<const N: usize, const H: usize, M: Model<N>>(
    m: M,
    (train, test): (&Bits, &Bits),
    epochs: usize,
    lr: f32,
    threads: Option<usize>,
    verbose: bool,
    export: &Export,
) -> Report {
    let params = m.init(0);
    let learner = Learner::new(m, params, PerColumn(SoftmaxCrossEntropy), Adam::new(lr));
    let mut learner = match threads {
        Some(n) => ShardedLearner::with_threads(learner, SHARDS, n),
        None => ShardedLearner::new(learner, SHARDS),
    };
    let cfg = Fit {
        epochs,
        batch: SHARDS * COLUMNS,
        seed: 0,
        patience: None,
        keep_best: false,
        progress: false,
    };
    let start = Instant::now();
    fit_sharded(
        &mut learner,
        train.labels.len(),
        &cfg,
        |idx| batch::<N>(train, idx),
        |l| Eval {
            loss: f64::NAN,
            accuracy: relaxed_accuracy(l.model(), l.params(), test),
        },
        |_, e| {
            if verbose {
                println!(
                    "epoch {:>3}: loss {:.4}, relaxed test accuracy {:.4}, {:.2} s",
                    e.epoch, e.train_loss, e.eval.accuracy, e.seconds
                );
            }
            Control::Continue
        },
    )
    .unwrap_or_else(|e| panic!("training stopped: {e}"));
    let seconds = start.elapsed().as_secs_f64();
    let threads = learner.threads();
    let l = learner.learner();
    let relaxed = relaxed_accuracy(l.model(), l.params(), test);
    let raw = discretise(l.model(), l.params(), N).expect("a model's circuit is well formed");
    // Constants propagated, double negations and dead gates removed; checked below to give
    // the same outputs on every test image.
    let net = raw.simplified().expect("as above");
    let write = |path: &Option<PathBuf>, text: String| {
        if let Some(path) = path {
            match std::fs::write(path, text) {
                Ok(()) if verbose => println!("wrote {}", path.display()),
                Ok(()) => {}
                Err(e) => eprintln!("error: cannot write {}: {e}", path.display()),
            }
        }
    };
    write(&export.c, net.to_c("logic_mnist"));
    write(&export.verilog, net.to_verilog("logic_mnist"));
    // The test set in words of 64 images: word w of input r holds bit r of images 64 w ...
    let words = test.labels.len().div_ceil(64);
    let packed: Vec<Vec<u64>> = (0..words)
        .map(|w| {
            (0..N)
                .map(|r| {
                    (0..64).fold(0u64, |acc, lane| {
                        let i = 64 * w + lane;
                        acc | (u64::from(i < test.labels.len() && test.bits[i][r]) << lane)
                    })
                })
                .collect()
        })
        .collect();
    let mut ev = net.evaluator::<u64>();
    let mut vote = GroupVote::<u64>::new(CLASSES, H / CLASSES);
    let mut out = vec![0u64; H];
    let mut classes = [0usize; 64];
    let mut right = 0;
    for (w, x) in packed.iter().enumerate() {
        net.forward(&mut ev, x, &mut out)
            .expect("the widths are the circuit's");
        vote.predict(&out, &mut classes)
            .expect("the widths are the vote's");
        for (lane, &c) in classes.iter().enumerate() {
            let i = 64 * w + lane;
            right += usize::from(i < test.labels.len() && c == test.labels[i]);
        }
    }
    let discrete = right as f64 / test.labels.len() as f64;
    let mut ev_raw = raw.evaluator::<u64>();
    let mut out_raw = vec![0u64; H];
    let same = packed.iter().all(|x| {
        net.forward(&mut ev, x, &mut out).expect("as above");
        raw.forward(&mut ev_raw, x, &mut out_raw).expect("as above");
        out == out_raw
    });
    assert!(
        same,
        "the simplified circuit differs from the discretised one"
    );
    // Images per second on this thread: whole passes over the test words for about 0.2 s.
    let (mut passes, t) = (0usize, Instant::now());
    while t.elapsed().as_secs_f64() < 0.2 {
        for x in &packed {
            net.forward(&mut ev, x, &mut out).expect("as above");
            vote.predict(&out, &mut classes).expect("as above");
        }
        passes += 1;
    }
    let images_per_second = (passes * words * 64) as f64 / t.elapsed().as_secs_f64();
    let gates = net
        .gates()
        .iter()
        .filter(|g| !matches!(g, paralens::circuits::netlist::Gate::Const(_)))
        .count();
    if verbose {
        println!(
            "{} images a step: {SHARDS} shards of {COLUMNS}, on {threads} thread(s)",
            SHARDS * COLUMNS
        );
        println!("relaxed test accuracy  {relaxed:.4}");
        println!("discrete test accuracy {discrete:.4} (each gate its most probable function)");
        println!(
            "circuit: {gates} gates after simplification ({} before; the same outputs on every test image), depth {}, {:.0} images/s on one core",
            raw.gates().len(),
            net.depth(),
            images_per_second
        );
        println!("training: {seconds:.1} s");
    }
    Report {
        relaxed,
        discrete,
        gates,
        depth: net.depth(),
        images_per_second,
        seconds,
    }
}

fn main() {
    let a = Args::parse();
    let export = Export {
        c: a.export_c.clone(),
        verilog: a.export_verilog.clone(),
    };
    let data = match &a.data {
        None => None,
        Some(dir) => match mnist_bits(dir) {
            Ok(d) => Some(d),
            Err(e) => {
                eprintln!("error: {e}");
                std::process::exit(1);
            }
        },
    };
    let (e, lr, t) = (a.epochs, a.lr, a.threads);
    // One monomorphised run per data set, gate form and depth.
    macro_rules! with {
        ($n:literal, $h:literal, $model:ident, $train:expr, $test:expr) => {
            run::<$n, $h, _>($model::<$n, $h>(), ($train, $test), e, lr, t, true, &export)
        };
    }
    let (digits_train, digits_test);
    let ((train, test), n) = match &data {
        Some((train, test)) => ((train, test), 1568),
        None => {
            (digits_train, digits_test) = digit_bits();
            ((&digits_train, &digits_test), 192)
        }
    };
    match (n, a.gates, a.layers) {
        (192, Gates::Softmax16, Layers::Three) => with!(192, 1000, softmax_model, train, test),
        (192, Gates::Walsh4, Layers::Three) => with!(192, 1000, walsh_model, train, test),
        (192, Gates::Softmax16, Layers::Six) => with!(192, 1000, deep_softmax_model, train, test),
        (192, Gates::Walsh4, Layers::Six) => with!(192, 1000, deep_walsh_model, train, test),
        (_, Gates::Softmax16, Layers::Three) => with!(1568, 8000, softmax_model, train, test),
        (_, Gates::Walsh4, Layers::Three) => with!(1568, 8000, walsh_model, train, test),
        (_, Gates::Softmax16, Layers::Six) => with!(1568, 8000, deep_softmax_model, train, test),
        (_, Gates::Walsh4, Layers::Six) => with!(1568, 8000, deep_walsh_model, train, test),
    };
}
