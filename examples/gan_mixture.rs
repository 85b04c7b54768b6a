//! A Wasserstein GAN on the standard mode-collapse test: eight 2-D Gaussians (standard
//! deviation 0.02) evenly spaced on a circle of radius 2. The generator and the critic are
//! parametric lenses; one training step is the composite
//! `generator.par(Identity).then(Critic::new(critic))` run forward and back. The generator
//! descends the Wasserstein loss and the critic ascends it; the critic's weights are clipped
//! (`paralens::gan`).
//!
//! Reported on 10,000 samples: the modes covered (a mode counts if at least 1% of the samples
//! fall within 3 standard deviations of it) and the share of high-quality samples (within 3
//! standard deviations of some mode).
//!
//! ```text
//! cargo run --release --example gan_mixture
//! ```

use clap::Parser;
use paralens::gan::Adversarial;
use paralens::optim::RmsProp;
use paralens::prelude::*;
use paralens::rand::rngs::StdRng;
use paralens::rand::{Rng, SeedableRng};

/// Examples per step.
pub const B: usize = 128;
/// Noise dimension.
pub const Z: usize = 4;
/// Hidden width of both networks.
pub const H: usize = 64;
/// The mixture: 8 modes on a circle of this radius, with this standard deviation.
pub const MODES: usize = 8;
pub const RADIUS: f32 = 2.0;
pub const STD: f32 = 0.02;

type Noise = SMatrix<f32, Z, B>;
type Points = SMatrix<f32, 2, B>;

/// The generator: noise to points.
pub fn generator() -> impl Para<Noise, Out = Points, Param = GenParams> + Init<Param = GenParams> {
    Dense::<Z, H>::new()
        .then(Relu)
        .then(Dense::<H, H>::new())
        .then(Relu)
        .then(Dense::<H, 2>::new())
}

/// The critic: a point to a score.
pub fn critic()
-> impl Para<Points, Out = SMatrix<f32, 1, B>, Param = CriticParams> + Init<Param = CriticParams> {
    Dense::<2, H>::new()
        .then(Relu)
        .then(Dense::<H, H>::new())
        .then(Relu)
        .then(Dense::<H, 1>::new())
}

type Three<const I: usize, const O: usize> = DenseParams<f32, I, O>;
/// The generator's parameters.
pub type GenParams = ((((Three<Z, H>, ()), Three<H, H>), ()), Three<H, 2>);
/// The critic's parameters.
pub type CriticParams = ((((Three<2, H>, ()), Three<H, H>), ()), Three<H, 1>);

/// The centre of mode `k`.
pub fn centre(k: usize) -> (f32, f32) {
    let a = k as f32 * std::f32::consts::TAU / MODES as f32;
    (RADIUS * a.cos(), RADIUS * a.sin())
}

/// A standard normal draw (Box-Muller).
fn normal(rng: &mut StdRng) -> f32 {
    let u: f32 = rng.random_range(f32::EPSILON..1.0);
    let v: f32 = rng.random();
    (-2.0 * u.ln()).sqrt() * (std::f32::consts::TAU * v).cos()
}

/// A batch of real samples.
pub fn real_batch(rng: &mut StdRng) -> Points {
    let mut p = Points::zeros();
    for j in 0..B {
        let (cx, cy) = centre(rng.random_range(0..MODES));
        p[(0, j)] = cx + STD * normal(rng);
        p[(1, j)] = cy + STD * normal(rng);
    }
    p
}

/// A batch of noise.
pub fn noise(rng: &mut StdRng) -> Noise {
    Noise::from_fn(|_, _| normal(rng))
}

/// What the trained generator does, on 10,000 samples.
#[derive(Debug, Clone, Copy)]
pub struct Report {
    /// Modes with at least 1% of the samples within 3 standard deviations.
    pub modes: usize,
    /// Share of samples within 3 standard deviations of some mode.
    pub quality: f64,
    /// Wasserstein estimate of the critic at the end (mean over the last 100 steps).
    pub w: f32,
}

/// Scores 10,000 generated samples.
pub fn score<F: FnMut(&mut StdRng) -> Points>(mut sample: F, rng: &mut StdRng) -> (usize, f64) {
    let mut per_mode = [0usize; MODES];
    let mut good = 0usize;
    let mut n = 0usize;
    while n < 10_000 {
        let p = sample(rng);
        for j in 0..B.min(10_000 - n) {
            let (x, y) = (p[(0, j)], p[(1, j)]);
            for (k, count) in per_mode.iter_mut().enumerate() {
                let (cx, cy) = centre(k);
                if ((x - cx).powi(2) + (y - cy).powi(2)).sqrt() <= 3.0 * STD {
                    *count += 1;
                    good += 1;
                }
            }
            n += 1;
        }
    }
    let modes = per_mode.iter().filter(|&&c| c >= 100).count();
    (modes, good as f64 / n as f64)
}

/// Trains for `iterations` generator steps (each after `critic_steps` critic steps);
/// `trace` prints the scores every 1,000 iterations.
pub fn run(iterations: usize, critic_steps: usize, seed: u64, trace: bool) -> Report {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut gan = Adversarial::new(
        generator(),
        critic(),
        RmsProp::new(5e-4),
        RmsProp::new(5e-4),
        0.1,
        seed,
    );
    let mut recent = Vec::with_capacity(100);
    let (glr, dlr) = (gan.optimizers_mut().0.lr, gan.optimizers_mut().1.lr);
    for it in 0..iterations {
        // Step sizes fall linearly to zero over the last half: the samples settle.
        let left = ((iterations - it) as f32 / (iterations as f32 / 2.0)).min(1.0);
        let (og, od) = gan.optimizers_mut();
        og.lr = glr * left;
        od.lr = dlr * left;
        for _ in 0..critic_steps {
            let (z, x) = (noise(&mut rng), real_batch(&mut rng));
            gan.step_critic(z, x)
                .unwrap_or_else(|e| panic!("critic step: {e}"));
        }
        let (z, x) = (noise(&mut rng), real_batch(&mut rng));
        let w = gan.step(z, x).unwrap_or_else(|e| panic!("step: {e}"));
        if it + 100 >= iterations {
            recent.push(w);
        }
        if trace && it % 1000 == 0 {
            let (m, q) = score(|r| gan.generate(noise(r)), &mut StdRng::seed_from_u64(1));
            eprintln!("{it:6}: W {w:.4}  modes {m}  quality {q:.3}");
        }
    }
    let (modes, quality) = score(|r| gan.generate(noise(r)), &mut rng);
    Report {
        modes,
        quality,
        w: recent.iter().sum::<f32>() / recent.len().max(1) as f32,
    }
}

/// A Wasserstein GAN on eight 2-D Gaussians on a circle (the standard mode-collapse test):
/// the modes covered and the share of high-quality samples among 10,000.
#[derive(Parser, Debug)]
#[command(name = "gan_mixture", version)]
struct Args {
    /// Generator steps.
    #[arg(long, value_name = "N", default_value_t = 24_000)]
    iterations: usize,
    /// Print the scores every 1,000 iterations.
    #[arg(long)]
    trace: bool,
}

fn main() {
    let Args { iterations, trace } = Args::parse();
    let t = std::time::Instant::now();
    let r = run(iterations, 5, 7, trace);
    println!(
        "modes covered: {} of {MODES}; high-quality samples: {:.1}%; critic's W estimate {:.4}; {:.1} s",
        r.modes,
        100.0 * r.quality,
        r.w,
        t.elapsed().as_secs_f64()
    );
}
