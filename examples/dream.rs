//! Deep dreaming and adversarial inputs: the trained digits CNN (`digits_cnn`) with its
//! parameters fixed and its *input* port opened.
//!
//! - Dreams: from a blank image, the dot-product loss `-<y, onehot(c)>` and a positive rate
//!   on the input (`Learner::try_learn_input` with plain gradient descent) raise the score of
//!   class `c` until the classifier is sure of it. The ten dreams are written as one PNG.
//! - Adversarial examples: the same input port with a bounded step. Projected gradient
//!   ascent on the cross-entropy of the true label, each step `eps / 4` along the sign of the
//!   input change, projected back into the L-infinity ball of radius `eps` around the image
//!   and into [0, 1]; reported as the share of correctly classified test images it flips.
//!
//! ```text
//! cargo run --release --example dream -- --out target/dream
//! ```

#[allow(dead_code)]
#[path = "digits_cnn.rs"]
pub mod digits_cnn;
#[path = "shared/image.rs"]
mod image;

use clap::Parser;
use paralens::prelude::*;
use std::path::{Path, PathBuf};

/// Classes.
const CLASSES: usize = 10;

/// The classifier's probabilities for an image.
fn probabilities(t: &digits_cnn::Trained, x: SVector<f32, 64>) -> SVector<f32, 10> {
    softmax(t.model.forward(&t.params, x))
}

/// The ten dreams and the classifier's confidence in each one's target.
pub struct Dreams {
    /// One image per class.
    pub images: Vec<SVector<f32, 64>>,
    /// The probability the classifier gives the target class on its dream.
    pub confidence: Vec<f32>,
}

/// Dreams one image per class from a blank one, in `steps` steps of rate `rate`.
pub fn dream(t: &digits_cnn::Trained, steps: usize, rate: f32) -> Dreams {
    let dreamer = Learner::new(
        t.model.clone(),
        t.params.clone(),
        DotProduct,
        Sgd::new(rate),
    );
    let mut images = Vec::new();
    let mut confidence = Vec::new();
    for c in 0..CLASSES {
        let target = SVector::<f32, CLASSES>::from_fn(|i, _| if i == c { 1.0 } else { 0.0 });
        let x = dreamer
            .try_learn_input(SVector::zeros(), &target, &Sgd::new(rate), steps)
            .expect("the target vector is finite and the dream's loss stays finite");
        confidence.push(probabilities(t, x)[c]);
        images.push(x);
    }
    Dreams { images, confidence }
}

/// Projected gradient ascent within the L-infinity ball of radius `eps`; returns the share
/// of correctly classified test images whose class it changes.
pub fn flipped_share(t: &digits_cnn::Trained, eps: f32, steps: usize) -> f64 {
    let (xs, ys) = &t.test;
    let (mut correct, mut flipped) = (0, 0);
    // The parameters are fixed: their change goes to one buffer nobody reads.
    let mut unused = <digits_cnn::DigitsCnnParams as Tangent>::zeros();
    for (x0, &label) in xs.iter().zip(ys) {
        if probabilities(t, *x0).argmax().0 != label {
            continue;
        }
        correct += 1;
        let mut x = *x0;
        for _ in 0..steps {
            let (y, pull_model) = t.model.vjp(&t.params, x);
            let (_, pull_loss) = SoftmaxCrossEntropy.vjp(y, &label);
            let dx = pull_model(pull_loss(1.0), &mut unused);
            x = x.zip_map(&dx, |v, g| v + eps / 4.0 * g.signum());
            x = x.zip_map(x0, |v, o| v.clamp(o - eps, o + eps).clamp(0.0, 1.0));
        }
        if probabilities(t, x).argmax().0 != label {
            flipped += 1;
        }
    }
    f64::from(flipped) / f64::from(correct)
}

/// The dreams side by side as one PNG, 8x scaled, each stretched to its own range.
///
/// # Errors
/// The file cannot be written.
pub fn write_png(path: &Path, images: &[SVector<f32, 64>]) -> std::io::Result<()> {
    let grid = image::Grid {
        cols: images.len(),
        scale: 8,
        gap: 0,
    };
    image::write_digits(path, images, grid, |img, v| {
        let (lo, hi) = (img.min(), img.max());
        (v - lo) / if hi > lo { hi - lo } else { 1.0 }
    })
}

/// Deep dreaming and adversarial inputs: the trained digits CNN with its parameters fixed and
/// its input port opened. Writes the ten dreams as one PNG and reports the share of test
/// images that bounded adversarial steps flip.
#[derive(Parser, Debug)]
#[command(name = "dream", version)]
struct Args {
    /// The folder to write dreams.png in (created if missing).
    #[arg(long, value_name = "DIR", default_value = "target/dream")]
    out: PathBuf,
    /// Seed of the CNN's split and weights.
    #[arg(long, value_name = "N", default_value_t = 0)]
    seed: u64,
}

fn main() {
    let Args { out, seed } = Args::parse();
    println!("training the digits CNN (seed {seed}, 10 epochs)...");
    let t = digits_cnn::train(seed, 10, false);
    println!("test accuracy {:.3}", t.report.test_accuracy);
    let d = dream(&t, 200, 0.05);
    for (c, p) in d.confidence.iter().enumerate() {
        println!("dream of {c}: the classifier gives it {:.4}", p);
    }
    if let Err(e) = std::fs::create_dir_all(&out) {
        eprintln!("error: cannot create {}: {e}", out.display());
        std::process::exit(1);
    }
    let path = out.join("dreams.png");
    match write_png(&path, &d.images) {
        Ok(()) => println!("wrote {}", path.display()),
        Err(e) => {
            eprintln!("error: cannot write {}: {e}", path.display());
            std::process::exit(1);
        }
    }
    for eps in [0.1, 0.2] {
        println!(
            "adversarial, L-infinity radius {eps}: {:.1}% of the correctly classified test images flipped (10 projected steps)",
            100.0 * flipped_share(&t, eps, 10)
        );
    }
}
