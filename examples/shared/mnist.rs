//! What the MNIST examples share: arguments, inputs and the training loop.

use paralens::data::{DataError, Images, Mnist, load_mnist};
use paralens::prelude::*;
use paralens::train::{Control, EpochReport, Eval, Fit, History, fit};
use std::path::{Path, PathBuf};

/// The command line of an MNIST example.
pub struct Args {
    /// `--data DIR`.
    pub dir: PathBuf,
    /// `--epochs N`.
    pub epochs: usize,
    /// `--save PATH`: write the trained parameters as a safetensors checkpoint.
    pub save: Option<PathBuf>,
    /// `--load PATH`: predict with saved parameters instead of training.
    pub load: Option<PathBuf>,
    /// `--plot PATH`: write the loss and accuracy curves as SVG.
    pub plot: Option<PathBuf>,
}

/// `--data DIR`, `--epochs N`, `--save PATH`, `--load PATH` and `--plot PATH` from the
/// command line; exits with `usage` on a bad argument.
pub fn args(usage: &str, default_epochs: usize) -> Args {
    parse_args(std::env::args().skip(1), default_epochs).unwrap_or_else(|e| {
        eprintln!("error: {e}\nusage: {usage}");
        std::process::exit(2);
    })
}

/// [`args`] from the arguments `it` (after the program's name).
///
/// # Errors
/// An unknown flag, a flag without its value or with a malformed one (`--epochs abc` ran the
/// default number of epochs, `--save` alone saved nothing), no `--data`, or a file to write
/// in a folder that does not exist (refused now, not after training).
pub fn parse_args(
    it: impl IntoIterator<Item = String>,
    default_epochs: usize,
) -> Result<Args, String> {
    let mut data = None;
    let mut epochs = default_epochs;
    let (mut save, mut load, mut plot) = (None, None, None);
    let mut it = it.into_iter();
    while let Some(a) = it.next() {
        let flag = a.as_str();
        if !["--data", "--epochs", "--save", "--load", "--plot"].contains(&flag) {
            return Err(format!("unknown argument `{flag}`"));
        }
        let Some(v) = it.next() else {
            return Err(format!("`{flag}` takes a value"));
        };
        match flag {
            "--data" => data = Some(PathBuf::from(v)),
            "--epochs" => {
                epochs = v.parse().map_err(|_| {
                    format!("`--epochs {v}`: the number of epochs is a whole number, 0 or more")
                })?;
            }
            "--save" => save = Some(PathBuf::from(v)),
            "--load" => load = Some(PathBuf::from(v)),
            _ => plot = Some(PathBuf::from(v)),
        }
    }
    let dir = data.ok_or("give the data folder with --data DIR (in this project: ../shared/data/mnist or ../shared/data/fashion-mnist)")?;
    for path in [&save, &plot].into_iter().flatten() {
        let parent = path.parent().filter(|p| !p.as_os_str().is_empty());
        if parent.is_some_and(|p| !p.is_dir()) {
            return Err(format!(
                "cannot write {}: its folder does not exist",
                path.display()
            ));
        }
    }
    Ok(Args {
        dir,
        epochs,
        save,
        load,
        plot,
    })
}

/// Pixels scaled to `0..=1`.
pub fn inputs(images: &Images) -> Vec<SVector<f32, 784>> {
    (0..images.count)
        .map(|i| SVector::from_iterator(images.image(i).iter().map(|&v| f32::from(v) / 255.0)))
        .collect()
}

/// The examples `order[at[j]]` as the columns of one batch matrix (zeros where `at[j]` is past
/// the end of `order`) and their labels. The batch lives on the heap (100 KB at 32 images), as
/// do the models' activations.
fn batch<const B: usize>(
    xs: &[SVector<f32, 784>],
    ys: &[usize],
    order: &[usize],
    at: &[usize],
) -> (HeapMatrix<f32, 784, B>, [usize; B]) {
    let pick = |j: usize| order.get(at[j]).copied();
    let x = HeapMatrix::<f32, 784, B>::from_fn(|r, j| pick(j).map_or(0.0, |i| xs[i][r]));
    let y = core::array::from_fn(|j| pick(j).map_or(0, |i| ys[i]));
    (x, y)
}

/// The fraction of `ts` a batched model classifies right (the last batch padded).
pub fn batch_accuracy<M, const B: usize>(
    model: &M,
    params: &M::Param,
    ts: &[SVector<f32, 784>],
    ty: &[usize],
) -> f64
where
    M: Para<HeapMatrix<f32, 784, B>, Out = HeapMatrix<f32, 10, B>>,
{
    let order: Vec<usize> = (0..ts.len()).collect();
    let mut right = 0;
    for k in 0..ts.len().div_ceil(B) {
        let at: Vec<usize> = (k * B..(k + 1) * B).collect();
        let (x, y) = batch::<B>(ts, ty, &order, &at);
        let out = model.forward(params, x);
        right += (0..B)
            .filter(|&j| k * B + j < ts.len() && out.column(j).argmax().0 == y[j])
            .count();
    }
    right as f64 / ts.len() as f64
}

/// Trains a model of `B`-image batches (matrix columns) with the mean softmax cross-entropy
/// and Adam (step size `lr`, divided by 3 every `decay_every` epochs); returns the test
/// accuracy.
pub fn train_batched<M, const B: usize>(
    model: M,
    m: &Mnist,
    epochs: usize,
    lr: f32,
    decay_every: usize,
    verbose: bool,
) -> f64
where
    M: Para<HeapMatrix<f32, 784, B>, Out = HeapMatrix<f32, 10, B>>
        + Init<Param = <M as Para<HeapMatrix<f32, 784, B>>>::Param>,
    <M as Para<HeapMatrix<f32, 784, B>>>::Param: Flat<f32>,
{
    train_batched_keep(model, m, epochs, lr, decay_every, verbose).0
}

/// [`train_batched`], returning the trained parameters and the history too.
pub fn train_batched_keep<M, const B: usize>(
    model: M,
    m: &Mnist,
    epochs: usize,
    lr: f32,
    decay_every: usize,
    verbose: bool,
) -> (f64, <M as Para<HeapMatrix<f32, 784, B>>>::Param, History)
where
    M: Para<HeapMatrix<f32, 784, B>, Out = HeapMatrix<f32, 10, B>>
        + Init<Param = <M as Para<HeapMatrix<f32, 784, B>>>::Param>,
    <M as Para<HeapMatrix<f32, 784, B>>>::Param: Flat<f32>,
{
    let (xs, ts) = (inputs(&m.train_images), inputs(&m.test_images));
    let ys: Vec<usize> = m.train_labels.iter().map(|&l| l as usize).collect();
    let ty: Vec<usize> = m.test_labels.iter().map(|&l| l as usize).collect();
    let params = model.init(0);
    let mut learner = Learner::new(model, params, PerColumn(SoftmaxCrossEntropy), Adam::new(lr));
    // The library's loop: seeded shuffles, whole batches (60,000 is 1,875 of 32), the test
    // accuracy after each epoch, the step size divided by 3 every `decay_every` epochs.
    let cfg = Fit {
        epochs,
        batch: B,
        seed: 0,
        patience: None,
        keep_best: false,
        progress: verbose,
    };
    let all: Vec<usize> = (0..B).collect();
    let history = fit(
        &mut learner,
        xs.len(),
        &cfg,
        |idx| batch::<B>(&xs, &ys, idx, &all),
        |l| Eval {
            loss: f64::NAN,
            accuracy: batch_accuracy(l.model(), l.params(), &ts, &ty),
        },
        |l, e| {
            l.optimizer_mut().lr = lr / 3f32.powi((e.epoch / decay_every) as i32);
            if verbose {
                print_epoch(e);
            }
            Control::Continue
        },
    )
    .unwrap_or_else(|e| panic!("training stopped: {e}"));
    let acc = batch_accuracy(learner.model(), learner.params(), &ts, &ty);
    (acc, learner.params().clone(), history)
}

/// The `--load PATH` path of an example: the parameters saved at `path`, loaded into the
/// model's (names, shapes and dtype checked), and the fraction of `ts` they classify right.
///
/// # Errors
/// The file cannot be read or does not hold this model's parameters.
pub fn predict_saved<M, const B: usize>(
    model: &M,
    path: &Path,
    ts: &[SVector<f32, 784>],
    ty: &[usize],
) -> Result<f64, paralens::checkpoint::CheckpointError>
where
    M: Para<HeapMatrix<f32, 784, B>, Out = HeapMatrix<f32, 10, B>>
        + Init<Param = <M as Para<HeapMatrix<f32, 784, B>>>::Param>,
    <M as Para<HeapMatrix<f32, 784, B>>>::Param: Clone + paralens::checkpoint::Tensors<f32>,
{
    let mut params = model.init(0);
    paralens::checkpoint::load_model(path, model, &mut params)?;
    Ok(batch_accuracy(model, &params, ts, ty))
}

/// An MNIST example's `main`: reads `--data DIR [--epochs N] [--save PATH | --load PATH]
/// [--plot PATH]`,
/// trains `model()` (or loads its parameters and only predicts) and prints the test
/// accuracy, or the error and exits 1.
pub fn main<M, const B: usize>(
    name: &str,
    default_epochs: usize,
    model: fn() -> M,
    lr: f32,
    decay_every: usize,
) where
    M: Para<HeapMatrix<f32, 784, B>, Out = HeapMatrix<f32, 10, B>>
        + Init<Param = <M as Para<HeapMatrix<f32, 784, B>>>::Param>,
    <M as Para<HeapMatrix<f32, 784, B>>>::Param:
        Flat<f32> + Clone + paralens::checkpoint::Tensors<f32>,
{
    let a = args(
        &format!("{name} --data DIR [--epochs N] [--save PATH | --load PATH] [--plot PATH]"),
        default_epochs,
    );
    let fail = |e: &dyn std::fmt::Display| -> ! {
        eprintln!("error: {e}");
        std::process::exit(1)
    };
    let m = load(&a.dir).unwrap_or_else(|e| fail(&e));
    if let Some(path) = &a.load {
        let ty: Vec<usize> = m.test_labels.iter().map(|&l| l as usize).collect();
        let acc = predict_saved(&model(), path, &inputs(&m.test_images), &ty)
            .unwrap_or_else(|e| fail(&e.to_string()));
        println!("loaded {}; test accuracy {acc:.4}", path.display());
        return;
    }
    let (acc, params, history) = train_batched_keep(model(), &m, a.epochs, lr, decay_every, true);
    println!("test accuracy {acc:.4}");
    if let Some(path) = &a.plot {
        plot(&history, path, name).unwrap_or_else(|e| fail(&e));
    }
    if let Some(path) = &a.save {
        paralens::checkpoint::save_model(path, &model(), &params)
            .unwrap_or_else(|e| fail(&e.to_string()));
        println!("saved the parameters to {}", path.display());
    }
}

/// The line an MNIST example prints after each epoch.
pub fn print_epoch(e: &EpochReport) {
    println!(
        "epoch {}  train loss {:.4}  test accuracy {:.4}  ({:.1} s)",
        e.epoch, e.train_loss, e.eval.accuracy, e.seconds
    );
}

/// Writes the curves of `history` to `path` and says so.
///
/// # Errors
/// The plot cannot be written (the message names the file).
pub fn plot(history: &History, path: &Path, name: &str) -> Result<(), String> {
    history
        .plot(path, &format!("{name} on MNIST"))
        .map_err(|e| format!("{}: {e}", path.display()))?;
    println!("wrote the curves to {}", path.display());
    Ok(())
}

/// Loads the folder, or says why not.
///
/// # Errors
/// The data cannot be read.
pub fn load(dir: &Path) -> Result<Mnist, DataError> {
    load_mnist(dir)
}
