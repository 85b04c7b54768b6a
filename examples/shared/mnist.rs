//! What the MNIST examples share: arguments, inputs and the training loop.

use paralens::data::{DataError, Images, Mnist, load_mnist};
use paralens::prelude::*;
use rand::{SeedableRng, rngs::StdRng, seq::SliceRandom};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// `--data DIR` and `--epochs N` from the command line; exits with `usage` on a bad argument.
pub fn args(usage: &str, default_epochs: usize) -> (PathBuf, usize) {
    let mut data = None;
    let mut epochs = default_epochs;
    let mut it = std::env::args().skip(1);
    while let Some(a) = it.next() {
        match a.as_str() {
            "--data" => data = it.next().map(PathBuf::from),
            "--epochs" => epochs = it.next().and_then(|v| v.parse().ok()).unwrap_or(epochs),
            other => {
                eprintln!("error: unknown argument `{other}`\nusage: {usage}");
                std::process::exit(2);
            }
        }
    }
    let Some(dir) = data else {
        eprintln!(
            "error: give the data folder with --data DIR (in this project: ../shared/data/mnist or ../shared/data/fashion-mnist)\nusage: {usage}"
        );
        std::process::exit(2);
    };
    (dir, epochs)
}

/// Pixels scaled to `0..=1`.
pub fn inputs(images: &Images) -> Vec<SVector<f32, 784>> {
    (0..images.count)
        .map(|i| SVector::from_iterator(images.image(i).iter().map(|&v| f32::from(v) / 255.0)))
        .collect()
}

/// Trains `model` one image per step with softmax cross-entropy and Adam (step size 1e-3,
/// divided by 3 every `decay_every` epochs); returns the test accuracy.
pub fn train<M>(model: M, m: &Mnist, epochs: usize, decay_every: usize, verbose: bool) -> f64
where
    M: Para<SVector<f32, 784>, Out = SVector<f32, 10>>
        + Init<Param = <M as Para<SVector<f32, 784>>>::Param>,
    <M as Para<SVector<f32, 784>>>::Param: Flat<f32>,
{
    let (xs, ts) = (inputs(&m.train_images), inputs(&m.test_images));
    let ys: Vec<usize> = m.train_labels.iter().map(|&l| l as usize).collect();
    let ty: Vec<usize> = m.test_labels.iter().map(|&l| l as usize).collect();
    let params = model.init(0);
    let mut learner = Learner::new(model, params, SoftmaxCrossEntropy, Adam::new(1e-3));
    let mut order: Vec<usize> = (0..xs.len()).collect();
    let mut rng = StdRng::seed_from_u64(0);
    for epoch in 1..=epochs {
        learner.optimizer_mut().lr = 1e-3 / 3f32.powi(((epoch - 1) / decay_every) as i32);
        order.shuffle(&mut rng);
        let start = Instant::now();
        let mut total = 0.0;
        for &i in &order {
            total += learner.step(&xs[i], &ys[i]);
        }
        if verbose {
            println!(
                "epoch {epoch}  train loss {:.4}  test accuracy {:.4}  ({:.1} s)",
                total / xs.len() as f32,
                learner.accuracy(&ts, &ty),
                start.elapsed().as_secs_f64()
            );
        }
    }
    learner.accuracy(&ts, &ty)
}

/// Runs `f` on a thread with a large stack: the models keep their activations, weights and
/// changes on the stack (a 784x128 layer is 400 KB).
pub fn with_large_stack<R: Send + 'static>(f: impl FnOnce() -> R + Send + 'static) -> R {
    std::thread::Builder::new()
        .stack_size(256 << 20)
        .spawn(f)
        .expect("a thread")
        .join()
        .expect("the training thread finished")
}

/// Loads the folder, or says why not.
///
/// # Errors
/// The data cannot be read.
pub fn load(dir: &Path) -> Result<Mnist, DataError> {
    load_mnist(dir)
}
