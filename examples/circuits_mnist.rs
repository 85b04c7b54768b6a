//! MNIST learned with Boolean models by reverse derivative ascent.
//!
//! Digits 0 against 1: pixels thresholded at 32 (a pixel is on when its value exceeds 32),
//! the pseudo-linear model (a popcount threshold over a learned pixel mask) trained by votes
//! over batches, the threshold chosen on a validation split (the last 1000 training images).
//!
//! Then all ten digits with a gate network trained only by Boolean reverse derivatives:
//! the pixel bits that vary (on in 10-90% of the training images), one hidden layer of
//! 32000 learned two-input gates, 200 output gates per digit (the digit with most gates on
//! wins), local-majority votes over batches of 512 in `Lanes<8>`, each output seeing its
//! positive examples and a random eighth of its negative ones, the best epoch chosen on
//! 5000 held-out training images: about 64%, far from the 90% the circuits issue aims at.
//! Measured on the way (test accuracy): all 784 pixels with 8000 hidden gates 44-46%; the
//! same 32000 hidden gates left random (only the output layer learning) 46.8%, so the hidden
//! layer does learn; thermometer codes (two or three thresholds) 63.0% and 59.5%; a second
//! hidden layer of 16000 gates 64.3%; 100 or 1000 output gates per digit 60.5% and 59.1%;
//! first-layer gates wired to pixel pairs at most 2 or 4 pixels apart 62.6% and 64.2%.
//!
//! ```text
//! cargo run --release --example circuits_mnist -- --data ../shared/data/mnist
//! ```

use paralens::circuits::models::{PseudoLinear, gate_network, random_tables};
use paralens::circuits::netlist::NetlistLearner;
use paralens::circuits::{Lanes, UpdateRule, Word};
use paralens::data::{Images, load_mnist};
use std::path::PathBuf;
use std::time::Instant;

const K: usize = 13; // 832 >= 784 feature bits

fn bits(images: &Images, i: usize) -> [u64; K] {
    let mut x = [0u64; K];
    for (p, &v) in images.image(i).iter().enumerate() {
        if v > 32 {
            x[p / 64] |= 1 << (p % 64);
        }
    }
    x
}

/// The 0/1 images of a split: features and labels (true for digit 1).
fn zeros_and_ones(images: &Images, labels: &[u8]) -> (Vec<[u64; K]>, Vec<bool>) {
    (0..labels.len())
        .filter(|&i| labels[i] <= 1)
        .map(|i| (bits(images, i), labels[i] == 1))
        .unzip()
}

fn accuracy(m: &PseudoLinear<K>, xs: &[[u64; K]], ys: &[bool]) -> f64 {
    let hits = xs
        .iter()
        .zip(ys)
        .filter(|(x, y)| m.predict(x) == **y)
        .count();
    hits as f64 / xs.len() as f64
}

/// Trains one model with threshold `theta`: `epochs` passes of votes over batches of 256,
/// keeping the mask that did best on the validation images (best-on-validation selection).
pub fn train(
    theta: u32,
    (xs, ys): (&[[u64; K]], &[bool]),
    (vx, vy): (&[[u64; K]], &[bool]),
    epochs: usize,
) -> (f64, PseudoLinear<K>) {
    let mut m = PseudoLinear::<K>::new(theta);
    let mut best = (accuracy(&m, vx, vy), m.clone());
    for _ in 0..epochs {
        for (bx, by) in xs.chunks(256).zip(ys.chunks(256)) {
            m.vote_step(bx, by, 2, 4);
            let v = accuracy(&m, vx, vy);
            if v > best.0 {
                best = (v, m.clone());
            }
        }
    }
    best
}

fn main() {
    let mut data = None;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--data" => data = args.next().map(PathBuf::from),
            other => {
                eprintln!("error: unknown argument `{other}`\nusage: circuits_mnist --data DIR");
                std::process::exit(2);
            }
        }
    }
    let Some(dir) = data else {
        eprintln!(
            "error: give the MNIST folder with --data DIR (it holds train-images-idx3-ubyte.gz, \
             train-labels-idx1-ubyte.gz, t10k-images-idx3-ubyte.gz, t10k-labels-idx1-ubyte.gz; \
             in this project: ../shared/data/mnist)"
        );
        std::process::exit(2);
    };
    if let Err(e) = zero_vs_one(&dir, true).and_then(|_| ten_digits(&dir, 4, true).map(|_| ())) {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

type L8 = Lanes<8>;
/// Output gates per digit.
const GROUP: usize = 200;
/// Learned gates in the hidden layer.
const HIDDEN: usize = 32_000;

/// The pixels that are on (above 32) in more than a tenth and less than nine tenths of the
/// images in `range`. The others say little about the digit, and a gate wired to two of
/// them learns nothing useful: on all pixels the network reached 44-46%, on these 58-64%.
fn informative_pixels(images: &Images, range: std::ops::Range<usize>) -> Vec<usize> {
    let mut on = [0usize; 784];
    let count = range.len();
    for i in range {
        for (c, &v) in on.iter_mut().zip(images.image(i)) {
            *c += usize::from(v > 32);
        }
    }
    (0..784)
        .filter(|&p| 10 * on[p] > count && 10 * on[p] < 9 * count)
        .collect()
}

/// Batches of 512 examples: pixel bits, one-hot output targets (a group of gates per digit)
/// and the valid lanes.
fn lane_batches(
    images: &Images,
    labels: &[u8],
    range: std::ops::Range<usize>,
    pixels: &[usize],
) -> Vec<(Vec<L8>, Vec<L8>, L8)> {
    let mut out = Vec::new();
    for start in range.clone().step_by(512) {
        let n = (range.end - start).min(512);
        let mut x = vec![L8::ZERO; pixels.len()];
        let mut y = vec![L8::ZERO; 10 * GROUP];
        let mut valid = L8::ZERO;
        for lane in 0..n {
            let i = start + lane;
            let img = images.image(i);
            for (w, &p) in x.iter_mut().zip(pixels) {
                if img[p] > 32 {
                    w.set_lane(lane, true);
                }
            }
            let c = labels[i] as usize;
            for g in 0..GROUP {
                y[c * GROUP + g].set_lane(lane, true);
            }
            valid.set_lane(lane, true);
        }
        out.push((x, y, valid));
    }
    out
}

/// The fraction of examples whose digit has the most output gates on.
fn vote_accuracy(
    l: &mut NetlistLearner<L8>,
    batches: &[(Vec<L8>, Vec<L8>, L8)],
    labels: &[u8],
) -> f64 {
    let mut out = vec![L8::ZERO; 10 * GROUP];
    let mut hits = 0;
    let mut seen = 0;
    for (x, _, valid) in batches {
        l.predict(x, &mut out).expect("sizes match");
        for lane in 0..valid.popcount() as usize {
            let score = |c: usize| {
                (0..GROUP)
                    .filter(|&g| out[c * GROUP + g].lane(lane))
                    .count()
            };
            let pred = (0..10)
                .max_by_key(|&c| (score(c), 10 - c))
                .expect("ten digits");
            hits += usize::from(pred == labels[seen] as usize);
            seen += 1;
        }
    }
    hits as f64 / seen as f64
}

/// The ten-digit gate network: returns the test accuracy of the best epoch on validation.
///
/// # Errors
/// The data cannot be read.
pub fn ten_digits(
    dir: &std::path::Path,
    epochs: usize,
    verbose: bool,
) -> Result<f64, paralens::data::DataError> {
    let m = load_mnist(dir)?;
    let n = m.train_labels.len();
    let pixels = informative_pixels(&m.train_images, 0..n - 5000);
    if verbose {
        println!(
            "ten digits: {} pixels on in 10-90% of the training images",
            pixels.len()
        );
    }
    let train = lane_batches(&m.train_images, &m.train_labels, 0..n - 5000, &pixels);
    let val = lane_batches(&m.train_images, &m.train_labels, n - 5000..n, &pixels);
    let test = lane_batches(
        &m.test_images,
        &m.test_labels,
        0..m.test_labels.len(),
        &pixels,
    );
    let net =
        gate_network(pixels.len(), &[HIDDEN, 10 * GROUP], 10 * GROUP, 1).expect("valid shape");
    let mut l = NetlistLearner::<L8>::new(net.netlist, net.params, UpdateRule::LocalMajority)
        .expect("parameters fit");
    l.set_params(&random_tables(net.params, 2))
        .expect("sizes match");
    let mut s = 0x1234_5678_9abc_def1u64;
    let mut rnd = move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s
    };
    let start = Instant::now();
    let mut best = (-1.0, l.params().to_vec());
    for epoch in 1..=epochs {
        for (x, y, v) in &train {
            // Each output takes part in its positive lanes and a random eighth of the others.
            let masks: Vec<L8> = y
                .iter()
                .map(|&yo| yo | Lanes(core::array::from_fn(|_| rnd() & rnd() & rnd())))
                .collect();
            l.step_masked(x, y, *v, Some(&masks)).expect("sizes match");
        }
        let acc = vote_accuracy(&mut l, &val, &m.train_labels[n - 5000..]);
        if verbose {
            println!("  epoch {epoch}: validation accuracy {:.1}%", 100.0 * acc);
        }
        if acc > best.0 {
            best = (acc, l.params().to_vec());
        }
    }
    let train_time = start.elapsed().as_secs_f64();
    l.set_params(&best.1).expect("sizes match");
    let acc = vote_accuracy(&mut l, &test, &m.test_labels);
    if verbose {
        println!(
            "ten digits, gate network ({HIDDEN} + {} learned gates): test accuracy {:.1}%, trained in {train_time:.1} s",
            10 * GROUP,
            100.0 * acc
        );
    }
    Ok(acc)
}

/// The 0-vs-1 experiment on the MNIST folder `dir`: returns the test accuracy.
///
/// # Errors
/// The data cannot be read.
pub fn zero_vs_one(dir: &std::path::Path, verbose: bool) -> Result<f64, paralens::data::DataError> {
    let mnist = load_mnist(dir)?;
    let (xs, ys) = zeros_and_ones(&mnist.train_images, &mnist.train_labels);
    let (tx, ty) = zeros_and_ones(&mnist.test_images, &mnist.test_labels);
    let split = xs.len() - 1000;
    let (train_x, val_x) = xs.split_at(split);
    let (train_y, val_y) = ys.split_at(split);
    if verbose {
        println!(
            "MNIST 0 vs 1: {} training, 1000 validation, {} test images; pixels > 32 are on",
            train_x.len(),
            tx.len()
        );
    }
    let start = Instant::now();
    let mut best: Option<(f64, PseudoLinear<K>)> = None;
    for theta in [2, 3, 4, 6, 8, 12, 16] {
        let (v, m) = train(theta, (train_x, train_y), (val_x, val_y), 10);
        if verbose {
            println!(
                "  threshold {theta:2}: validation accuracy {:.2}%",
                100.0 * v
            );
        }
        if best.as_ref().is_none_or(|(b, _)| v > *b) {
            best = Some((v, m));
        }
    }
    let (_, m) = best.expect("at least one threshold");
    let elapsed = start.elapsed();
    let acc = accuracy(&m, &tx, &ty);
    if verbose {
        println!(
            "pseudo-linear, threshold {}: test accuracy {:.2}% ({} of {}), {} mask bits on, trained in {:.2} s",
            m.theta,
            100.0 * acc,
            (acc * tx.len() as f64).round(),
            tx.len(),
            m.mask.iter().map(|w| w.count_ones()).sum::<u32>(),
            elapsed.as_secs_f64()
        );
    }
    Ok(acc)
}
