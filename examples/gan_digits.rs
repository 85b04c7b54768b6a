//! A Wasserstein GAN on the 8x8 digits (shipped with the crate): the same composite lens as
//! `gan_mixture`, `generator.par(Identity).then(Critic::new(critic))`, with images of 64
//! pixels in [0, 1] (the generator ends in a sigmoid) in batches of 64.
//!
//! The samples are scored by the digits CNN of `digits_cnn`, trained first: over 1,000
//! samples, the entropy of the classes it predicts (ln 10 = 2.30 when all ten classes come
//! out equally often; lower means fewer kinds of digit) and its mean confidence (the
//! probability of its predicted class). The same two figures for 1,000 real test digits are
//! printed beside them. `--out DIR` writes a 10x10 grid of samples as `DIR/gan_digits.png`.
//!
//! ```text
//! cargo run --release --example gan_digits -- --out target/gan_digits
//! ```

#[allow(dead_code)]
#[path = "digits_cnn.rs"]
pub mod digits_cnn;
#[path = "shared/image.rs"]
mod image;

use clap::Parser;
use paralens::data::digits;
use paralens::gan::Adversarial;
use paralens::optim::RmsProp;
use paralens::prelude::*;
use paralens::rand::rngs::StdRng;
use paralens::rand::{Rng, SeedableRng};
use std::path::{Path, PathBuf};

/// Examples per step.
pub const B: usize = 64;
/// Noise dimension.
pub const Z: usize = 16;
/// Hidden width.
pub const H: usize = 128;

type Noise = SMatrix<f32, Z, B>;
type Images = SMatrix<f32, 64, B>;

/// A standard normal draw (Box-Muller).
fn normal(rng: &mut StdRng) -> f32 {
    let u: f32 = rng.random_range(f32::EPSILON..1.0);
    let v: f32 = rng.random();
    (-2.0 * u.ln()).sqrt() * (std::f32::consts::TAU * v).cos()
}

/// A batch of noise.
pub fn noise(rng: &mut StdRng) -> Noise {
    Noise::from_fn(|_, _| normal(rng))
}

/// The trained GAN.
pub struct TrainedGan {
    /// Generator, critic and their optimizers.
    pub gan: Adversarial<Generator, Critic, RmsProp<f32>, RmsProp<f32>>,
}

/// The generator's type.
pub type Generator = impl_generator::G;
/// The critic's type.
pub type Critic = impl_generator::D;

/// Names for the two networks' types (a `type` cannot name an `impl Trait` return).
pub mod impl_generator {
    use super::*;
    /// The generator.
    pub type G = paralens::Then<
        paralens::Then<
            paralens::Then<paralens::Then<paralens::Then<Dense<Z, H>, Relu>, Dense<H, H>>, Relu>,
            Dense<H, 64>,
        >,
        Sigmoid,
    >;
    /// The critic.
    pub type D = paralens::Then<
        paralens::Then<paralens::Then<paralens::Then<Dense<64, H>, Relu>, Dense<H, H>>, Relu>,
        Dense<H, 1>,
    >;
}

/// Trains the GAN for `iterations` generator steps, five critic steps each.
pub fn train(iterations: usize, seed: u64) -> TrainedGan {
    let data = digits();
    let images: Vec<SVector<f32, 64>> = data
        .images
        .iter()
        .map(|im| SVector::from_fn(|j, _| im[j] as f32 / 16.0))
        .collect();
    let mut rng = StdRng::seed_from_u64(seed);
    let batch = |rng: &mut StdRng| {
        let mut m = Images::zeros();
        for j in 0..B {
            m.set_column(j, &images[rng.random_range(0..images.len())]);
        }
        m
    };
    let g: Generator = Dense::<Z, H>::new()
        .then(Relu)
        .then(Dense::<H, H>::new())
        .then(Relu)
        .then(Dense::<H, 64>::new())
        .then(Sigmoid);
    let d: Critic = Dense::<64, H>::new()
        .then(Relu)
        .then(Dense::<H, H>::new())
        .then(Relu)
        .then(Dense::<H, 1>::new());
    let mut gan = Adversarial::new(g, d, RmsProp::new(5e-4), RmsProp::new(5e-4), 0.05, seed);
    for it in 0..iterations {
        let left = ((iterations - it) as f32 / (iterations as f32 / 2.0)).min(1.0);
        let (og, od) = gan.optimizers_mut();
        og.lr = 5e-4 * left;
        od.lr = 5e-4 * left;
        for _ in 0..5 {
            let (z, x) = (noise(&mut rng), batch(&mut rng));
            gan.step_critic(z, x)
                .unwrap_or_else(|e| panic!("critic step: {e}"));
        }
        let (z, x) = (noise(&mut rng), batch(&mut rng));
        gan.step(z, x).unwrap_or_else(|e| panic!("step: {e}"));
    }
    TrainedGan { gan }
}

/// Entropy of the predicted classes and mean confidence of a classifier over images.
pub fn scores(t: &digits_cnn::Trained, images: &[SVector<f32, 64>]) -> (f64, f64) {
    let mut counts = [0usize; 10];
    let mut confidence = 0.0;
    for x in images {
        let p = softmax(t.model.forward(&t.params, *x));
        let (c, v) = p.argmax();
        counts[c] += 1;
        confidence += f64::from(v);
    }
    let n = images.len() as f64;
    let entropy = counts
        .iter()
        .filter(|&&c| c > 0)
        .map(|&c| {
            let q = c as f64 / n;
            -q * q.ln()
        })
        .sum();
    (entropy, confidence / n)
}

/// `n` samples of the generator.
pub fn samples(gan: &TrainedGan, n: usize, seed: u64) -> Vec<SVector<f32, 64>> {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut out = Vec::with_capacity(n);
    while out.len() < n {
        let imgs = gan.gan.generate(noise(&mut rng));
        for j in 0..B.min(n - out.len()) {
            out.push(imgs.column(j).into_owned());
        }
    }
    out
}

/// Writes images as a grid of `cols` columns, each 8x8 image as 32x32 pixels (0 black, 1
/// white), with a grey gap between them.
pub fn write_grid(path: &Path, images: &[SVector<f32, 64>], cols: usize) -> std::io::Result<()> {
    let grid = image::Grid {
        cols,
        scale: 4,
        gap: 2,
    };
    image::write_digits(path, images, grid, |_, v| v)
}

/// The figures the example prints.
#[derive(Debug, Clone, Copy)]
pub struct Report {
    /// Entropy of the predicted classes over 1,000 samples, and of 1,000 real images.
    pub entropy: (f64, f64),
    /// Mean confidence over the same, samples and real images.
    pub confidence: (f64, f64),
}

/// Trains the classifier and the GAN, and scores the samples.
pub fn run(iterations: usize, seed: u64, out: Option<&Path>) -> Report {
    let classifier = digits_cnn::train(seed, 10, false);
    let gan = train(iterations, seed);
    let fake = samples(&gan, 1000, seed + 1);
    let data = digits();
    let real: Vec<SVector<f32, 64>> = data.images[..1000]
        .iter()
        .map(|im| SVector::from_fn(|j, _| im[j] as f32 / 16.0))
        .collect();
    if let Some(dir) = out {
        let path = dir.join("gan_digits.png");
        match std::fs::create_dir_all(dir).and_then(|()| write_grid(&path, &fake[..100], 10)) {
            Ok(()) => println!("wrote {}", path.display()),
            Err(e) => eprintln!("could not write {}: {e}", path.display()),
        }
    }
    let (ef, cf) = scores(&classifier, &fake);
    let (er, cr) = scores(&classifier, &real);
    Report {
        entropy: (ef, er),
        confidence: (cf, cr),
    }
}

/// A Wasserstein GAN on the 8x8 digits, its samples scored by the digits CNN (class
/// entropy and mean confidence, beside the same figures for real test digits).
#[derive(Parser, Debug)]
#[command(name = "gan_digits", version)]
struct Args {
    /// Write a 10x10 grid of samples as DIR/gan_digits.png.
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Generator steps.
    #[arg(long, value_name = "N", default_value_t = 6_000)]
    iterations: usize,
}

fn main() {
    let Args { out, iterations } = Args::parse();
    let t = std::time::Instant::now();
    let r = run(iterations, 0, out.as_deref());
    println!(
        "1,000 samples: class entropy {:.3} (ln 10 = 2.303), mean confidence {:.3}; 1,000 real digits: {:.3}, {:.3}; {:.1} s",
        r.entropy.0,
        r.confidence.0,
        r.entropy.1,
        r.confidence.1,
        t.elapsed().as_secs_f64()
    );
}
