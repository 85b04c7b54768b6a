//! MNIST learned with Boolean models by reverse derivative ascent.
//!
//! Digits 0 against 1: pixels thresholded at 32 (a pixel is on when its value exceeds 32),
//! the pseudo-linear model (a popcount threshold over a learned pixel mask) trained by votes
//! over batches, the threshold chosen on a validation split (the last 1000 training images).
//!
//! ```text
//! cargo run --release --example circuits_mnist -- --data ../shared/data/mnist
//! ```

use paralens::circuits::models::PseudoLinear;
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
    match zero_vs_one(&dir, true) {
        Ok(_) => {}
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(1);
        }
    }
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
