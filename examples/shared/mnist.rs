//! What the MNIST examples share: arguments, inputs and the training loop.

use paralens::ShardedLearner;
use paralens::data::{DataError, Images, Mnist, load_mnist};
use paralens::prelude::*;
use paralens::train::{Control, EpochReport, Eval, Fit, History, fit_sharded};
use std::path::{Path, PathBuf};

/// An MNIST example: trains its model on MNIST (or Fashion-MNIST) and prints the test
/// accuracy, or predicts with saved parameters.
// The flags are the same in the three MNIST examples; the name, the about text and the
// default number of epochs are each example's own (see [`command`]).
#[derive(clap::Parser, Debug)]
#[command(version)]
pub struct Args {
    /// The data folder: the four IDX files, gzipped or not (in this project:
    /// ../shared/data/mnist or ../shared/data/fashion-mnist).
    #[arg(long = "data", value_name = "DIR")]
    pub dir: PathBuf,
    /// Passes over the 60,000 training images.
    #[arg(long, value_name = "N")]
    pub epochs: usize,
    /// Write the trained parameters as a safetensors checkpoint.
    #[arg(long, value_name = "PATH")]
    pub save: Option<PathBuf>,
    /// Predict with saved parameters instead of training (nothing to save or plot then).
    #[arg(long, value_name = "PATH", conflicts_with_all = ["save", "plot"])]
    pub load: Option<PathBuf>,
    /// Write the loss and accuracy curves as SVG.
    #[arg(long, value_name = "PATH")]
    pub plot: Option<PathBuf>,
    /// Threads that train (each step's shards spread over them; at most one per shard).
    /// The result is the same bit for bit whatever the number. Default: the machine's cores
    /// if they are faster than one, timed over the first steps.
    #[arg(long, value_name = "N", value_parser = at_least_one)]
    pub threads: Option<usize>,
}

/// A count of 1 or more.
fn at_least_one(s: &str) -> Result<usize, String> {
    match s.parse::<usize>() {
        Ok(0) => Err("0 threads cannot train: give 1 or more".into()),
        Ok(n) => Ok(n),
        Err(e) => Err(e.to_string()),
    }
}

/// Images per shard: the columns of the model's input matrix.
pub const COLUMNS: usize = 16;

/// Shards per step: a step trains on `SHARDS * COLUMNS` = 32 images, the shards run forward
/// and back on as many threads as `--threads` allows, and their changes are summed in shard
/// order (so the number of threads does not change the result).
pub const SHARDS: usize = 2;

/// The parser of the MNIST example `name`: [`Args`] with the example's about text and its
/// default number of epochs (a derive attribute would fix one default for all three).
pub fn command(name: &'static str, about: &'static str, default_epochs: usize) -> clap::Command {
    use clap::CommandFactory;
    // Without clap's `string` feature a default is a `&'static str`: one small string a run.
    let default: &'static str = default_epochs.to_string().leak();
    Args::command()
        .name(name)
        .about(about)
        // The derived long text is this struct's doc comment, not the example's.
        .long_about(None)
        .mut_arg("epochs", |a| a.default_value(default).required(false))
}

/// Parses `argv` (the program's name first, as clap's `try_parse_from`) with [`command`],
/// then checks what clap cannot.
///
/// # Errors
/// clap's: an unknown flag, a flag without its value or with a malformed one, no `--data`,
/// `--load` with `--save` or `--plot`; a file to write in a folder that does not exist
/// (refused now, not after training); `--plot` with `--epochs 0`.
pub fn try_parse_from<I, T>(
    name: &'static str,
    about: &'static str,
    default_epochs: usize,
    argv: I,
) -> Result<Args, clap::Error>
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    use clap::FromArgMatches;
    let mut cmd = command(name, about, default_epochs);
    let args = Args::from_arg_matches(&cmd.try_get_matches_from_mut(argv)?)?;
    for path in [&args.save, &args.plot].into_iter().flatten() {
        let parent = path.parent().filter(|p| !p.as_os_str().is_empty());
        if parent.is_some_and(|p| !p.is_dir()) {
            return Err(cmd.error(
                clap::error::ErrorKind::ValueValidation,
                format!("cannot write {}: its folder does not exist", path.display()),
            ));
        }
    }
    // Zero epochs draw no curve: refused now, where the plot failed after loading the data.
    if args.epochs == 0 && args.plot.is_some() {
        return Err(cmd.error(
            clap::error::ErrorKind::ArgumentConflict,
            "`--plot` draws the epochs' curves, and `--epochs 0` runs none",
        ));
    }
    Ok(args)
}

/// [`try_parse_from`] on this process's command line; on an error (or `--help`) prints
/// clap's message and exits (status 2, or 0 for `--help`).
pub fn args(name: &'static str, about: &'static str, default_epochs: usize) -> Args {
    try_parse_from(name, about, default_epochs, std::env::args_os()).unwrap_or_else(|e| e.exit())
}

/// Pixels scaled to `0..=1`.
pub fn inputs(images: &Images) -> Vec<SVector<f32, 784>> {
    (0..images.count)
        .map(|i| SVector::from_iterator(images.image(i).iter().map(|&v| f32::from(v) / 255.0)))
        .collect()
}

/// The examples `idx` as the columns of one batch matrix (zeros where `idx` runs out) and
/// their labels. The batch lives on the heap (50 KB at 16 images), as do the models'
/// activations; each column is one copy of an image (an entry-by-entry build took a third
/// of an MLP step).
pub fn batch<const B: usize>(
    xs: &[SVector<f32, 784>],
    ys: &[usize],
    idx: &[usize],
) -> (HeapMatrix<f32, 784, B>, [usize; B]) {
    let mut x = HeapMatrix::<f32, 784, B>::zeros();
    for (j, &i) in idx.iter().take(B).enumerate() {
        x.column_mut(j).copy_from(&xs[i]);
    }
    let y = core::array::from_fn(|j| idx.get(j).map_or(0, |&i| ys[i]));
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
    for (k, at) in order.chunks(B).enumerate() {
        let (x, y) = batch::<B>(ts, ty, at);
        let out = model.forward(params, x);
        right += (0..B)
            .filter(|&j| k * B + j < ts.len() && out.column(j).argmax().0 == y[j])
            .count();
    }
    right as f64 / ts.len() as f64
}

/// Trains a model with the mean softmax cross-entropy and Adam (step size `lr`, divided by 3
/// every `decay_every` epochs), [`SHARDS`] shards of [`COLUMNS`] images a step on `threads`
/// threads (`None`: the machine's cores if they are faster than one); returns the test
/// accuracy.
pub fn train_batched<M>(
    model: M,
    m: &Mnist,
    epochs: usize,
    lr: f32,
    decay_every: usize,
    verbose: bool,
    threads: Option<usize>,
) -> f64
where
    M: Para<HeapMatrix<f32, 784, COLUMNS>, Out = HeapMatrix<f32, 10, COLUMNS>>
        + Init<Param = <M as Para<HeapMatrix<f32, 784, COLUMNS>>>::Param>
        + Sync,
    <M as Para<HeapMatrix<f32, 784, COLUMNS>>>::Param: Flat<f32> + Send + Sync,
{
    train_batched_keep(model, m, epochs, lr, decay_every, verbose, threads).0
}

/// [`train_batched`], returning the trained parameters and the history too.
pub fn train_batched_keep<M>(
    model: M,
    m: &Mnist,
    epochs: usize,
    lr: f32,
    decay_every: usize,
    verbose: bool,
    threads: Option<usize>,
) -> (
    f64,
    <M as Para<HeapMatrix<f32, 784, COLUMNS>>>::Param,
    History,
)
where
    M: Para<HeapMatrix<f32, 784, COLUMNS>, Out = HeapMatrix<f32, 10, COLUMNS>>
        + Init<Param = <M as Para<HeapMatrix<f32, 784, COLUMNS>>>::Param>
        + Sync,
    <M as Para<HeapMatrix<f32, 784, COLUMNS>>>::Param: Flat<f32> + Send + Sync,
{
    const B: usize = COLUMNS;
    let (xs, ts) = (inputs(&m.train_images), inputs(&m.test_images));
    let ys: Vec<usize> = m.train_labels.iter().map(|&l| l as usize).collect();
    let ty: Vec<usize> = m.test_labels.iter().map(|&l| l as usize).collect();
    let params = model.init(0);
    let learner = Learner::new(model, params, PerColumn(SoftmaxCrossEntropy), Adam::new(lr));
    let mut learner = match threads {
        Some(n) => ShardedLearner::with_threads(learner, SHARDS, n),
        None => ShardedLearner::new(learner, SHARDS),
    };
    // The library's loop: seeded shuffles, whole batches (60,000 is 1,875 of 32), the test
    // accuracy after each epoch, the step size divided by 3 every `decay_every` epochs. Each
    // shard's batch is built on the shard's thread.
    let cfg = Fit {
        epochs,
        batch: SHARDS * B,
        seed: 0,
        patience: None,
        keep_best: false,
        progress: verbose,
    };
    let history = fit_sharded(
        &mut learner,
        xs.len(),
        &cfg,
        |idx| batch::<B>(&xs, &ys, idx),
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
    if verbose {
        println!(
            "{} images a step: {SHARDS} shards of {B}, on {} thread(s)",
            SHARDS * B,
            learner.threads()
        );
    }
    let learner = learner.learner();
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

/// An MNIST example's `main`: reads `--data DIR [--epochs N] [--threads N] [--save PATH |
/// --load PATH] [--plot PATH]` ([`args`], `about` shown by `--help`), trains `model()` (or
/// loads its parameters and only predicts) and prints the test accuracy, or the error and
/// exits 1.
pub fn main<M>(
    name: &'static str,
    about: &'static str,
    default_epochs: usize,
    model: fn() -> M,
    lr: f32,
    decay_every: usize,
) where
    M: Para<HeapMatrix<f32, 784, COLUMNS>, Out = HeapMatrix<f32, 10, COLUMNS>>
        + Init<Param = <M as Para<HeapMatrix<f32, 784, COLUMNS>>>::Param>
        + Sync,
    <M as Para<HeapMatrix<f32, 784, COLUMNS>>>::Param:
        Flat<f32> + Clone + Send + Sync + paralens::checkpoint::Tensors<f32>,
{
    let a = args(name, about, default_epochs);
    let fail = |e: &dyn std::fmt::Display| -> ! {
        eprintln!("error: {e}");
        std::process::exit(1)
    };
    let m = load(&a.dir).unwrap_or_else(|e| fail(&e));
    if let Some(path) = &a.load {
        let ty: Vec<usize> = m.test_labels.iter().map(|&l| l as usize).collect();
        let acc = predict_saved::<M, COLUMNS>(&model(), path, &inputs(&m.test_images), &ty)
            .unwrap_or_else(|e| fail(&e.to_string()));
        println!("loaded {}; test accuracy {acc:.4}", path.display());
        return;
    }
    let (acc, params, history) =
        train_batched_keep(model(), &m, a.epochs, lr, decay_every, true, a.threads);
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
        "epoch {}  train loss {:.4}  test accuracy {:.4}  ({:.2} s)",
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
