//! Checkpoints in safetensors: a round trip is bit for bit; the file is what the format's own
//! reader expects (names by path, shapes, dtype); every kind of mismatch is an error naming
//! the tensor, and leaves the parameters unchanged.

// The three MNIST examples below each include the examples' shared module.
#![allow(clippy::duplicate_mod)]

use paralens::checkpoint::{
    CheckpointError, from_bytes, load, load_model, save, save_model, to_bytes,
};
use paralens::prelude::*;
use safetensors::SafeTensors;
use safetensors::tensor::Dtype;

para! {
    /// A two-layer perceptron.
    pub struct Mlp { l1: Dense<4, 16>, l2: Dense<16, 3> }
    fn forward(&self, x: SVector<f32, 4>) -> SVector<f32, 3> {
        self.l2(relu(self.l1(x)))
    }
}

para! {
    /// The same with a narrower hidden layer.
    pub struct Narrow { l1: Dense<4, 8>, l2: Dense<8, 3> }
    fn forward(&self, x: SVector<f32, 4>) -> SVector<f32, 3> {
        self.l2(relu(self.l1(x)))
    }
}

para! {
    /// Only the first layer.
    pub struct Half { l1: Dense<4, 16> }
    fn forward(&self, x: SVector<f32, 4>) -> SVector<f32, 16> {
        self.l1(x)
    }
}

fn mlp() -> Mlp {
    Mlp {
        l1: Dense::new(),
        l2: Dense::new(),
    }
}

#[test]
fn a_round_trip_is_bit_for_bit() {
    let p = mlp().init(3);
    let path = std::env::temp_dir().join("paralens_roundtrip.safetensors");
    save(&path, &p).unwrap();
    let mut q = mlp().init(4);
    assert_ne!(p, q);
    load(&path, &mut q).unwrap();
    assert_eq!(p, q);
    for (a, b) in p.l1.w.iter().zip(q.l1.w.iter()) {
        assert_eq!(a.to_bits(), b.to_bits());
    }
    // A composite's parameters are named by their place in the tuple.
    let model = Dense::<4, 8>::new().then(Relu).then(Dense::<8, 3>::new());
    let c = model.init(5);
    let mut d = model.init(6);
    from_bytes(&to_bytes(&c).unwrap(), &mut d).unwrap();
    assert_eq!(*c.0.0.w, *d.0.0.w);
    assert_eq!(c.1.b, d.1.b);
}

#[test]
fn the_reference_reader_sees_the_names_shapes_and_dtype() {
    let p = mlp().init(3);
    let bytes = to_bytes(&p).unwrap();
    let file = SafeTensors::deserialize(&bytes).unwrap();
    let mut names = file.names();
    names.sort_unstable();
    assert_eq!(names, ["l1.b", "l1.w", "l2.b", "l2.w"]);
    let w = file.tensor("l1.w").unwrap();
    assert_eq!((w.dtype(), w.shape()), (Dtype::F32, &[16, 4][..]));
    assert_eq!(file.tensor("l2.b").unwrap().shape(), &[3]);
    // Row-major, as the format specifies: entry (1, 2) is the 7th value.
    let seventh = f32::from_le_bytes(w.data()[24..28].try_into().unwrap());
    assert_eq!(seventh, p.l1.w[(1, 2)]);
}

fn refused(bytes: &[u8]) -> CheckpointError {
    let mut q = mlp().init(9);
    let before = q.clone();
    let e = from_bytes(bytes, &mut q).unwrap_err();
    assert_eq!(q, before, "a refused load changed the parameters");
    e
}

#[test]
fn every_mismatch_is_an_error_naming_the_tensor() {
    // Shape: a narrower hidden layer.
    let narrow = Narrow {
        l1: Dense::new(),
        l2: Dense::new(),
    };
    let e = refused(&to_bytes(&narrow.init(0)).unwrap());
    assert!(
        matches!(&e, CheckpointError::Shape { name, .. } if name == "l1.w"),
        "{e}"
    );
    assert!(e.to_string().contains("l1.w"), "{e}");
    // Missing: a file with only the first layer.
    let half = Half { l1: Dense::new() };
    let e = refused(&to_bytes(&half.init(0)).unwrap());
    assert!(
        matches!(&e, CheckpointError::Missing(n) if n == "l2.b" || n == "l2.w"),
        "{e}"
    );
    // Unexpected: loading the whole model's file into the first layer alone.
    let mut h = half.init(1);
    let e = from_bytes(&to_bytes(&mlp().init(0)).unwrap(), &mut h).unwrap_err();
    assert!(
        matches!(&e, CheckpointError::Unexpected(n) if n.starts_with("l2.")),
        "{e}"
    );
    // Dtype: the same model in f64.
    let wide = (Dense::<4, 16, f64>::new(), Dense::<16, 3, f64>::new());
    let p64 = (wide.0.init(0), wide.1.init(0));
    let bytes = to_bytes(&p64).unwrap();
    let mut p32 = (Dense::<4, 16>::new().init(0), Dense::<16, 3>::new().init(0));
    let e = from_bytes(&bytes, &mut p32).unwrap_err();
    assert!(
        matches!(&e, CheckpointError::Dtype { name, .. } if name.starts_with("0.")),
        "{e}"
    );
    // Not a safetensors file at all, and a truncated one.
    assert!(matches!(
        refused(b"not a checkpoint"),
        CheckpointError::Format(_)
    ));
    let good = to_bytes(&mlp().init(0)).unwrap();
    assert!(matches!(
        refused(&good[..good.len() - 5]),
        CheckpointError::Format(_)
    ));
}

#[allow(dead_code)]
#[path = "../examples/digits_cnn.rs"]
mod digits_cnn;

#[test]
fn the_digits_example_predicts_from_a_saved_model() {
    let t = digits_cnn::train(0, 2, false);
    let path = std::env::temp_dir().join("paralens_digits_cnn.safetensors");
    save_model(&path, &t.model, &t.params).unwrap();
    let file = std::fs::read(&path).unwrap();
    let kernel = SafeTensors::deserialize(&file).unwrap();
    assert_eq!(
        kernel.tensor("conv.kernel").unwrap().shape(),
        &[16, 1, 3, 3]
    );
    // The pooling layer has no parameters (`SVector<f32, 0>`): nothing is written for it.
    assert!(kernel.tensor("pool").is_err(), "{:?}", kernel.names());
    let (model, mut params) = digits_cnn::fresh(0);
    load_model(&path, &model, &mut params).unwrap();
    assert_eq!(params, t.params);
    let acc = digits_cnn::test_accuracy(&model, &params, 0);
    assert_eq!(acc, t.report.test_accuracy);
    // A file that has the empty array anyway (as files written before did) loads too.
    let mut views: Vec<(String, safetensors::tensor::TensorView<'_>)> = kernel.tensors();
    views.push((
        "pool".to_string(),
        safetensors::tensor::TensorView::new(Dtype::F32, vec![0], &[]).unwrap(),
    ));
    let with_pool = safetensors::serialize(views, None).unwrap();
    let (_, mut again) = digits_cnn::fresh(1);
    paralens::checkpoint::model_from_bytes(&with_pool, &model, &mut again).unwrap();
    assert_eq!(again, t.params);
}

#[allow(dead_code)]
#[path = "../examples/mnist_cnn.rs"]
mod mnist_cnn;
#[allow(dead_code)]
#[path = "../examples/mnist_lstm.rs"]
mod mnist_lstm;
#[allow(dead_code)]
#[path = "../examples/mnist_mlp.rs"]
mod mnist_mlp;

/// Images that need no download: `n` pixel patterns and their labels `0..10`.
fn synthetic_digits(n: usize) -> (Vec<SVector<f32, 784>>, Vec<usize>) {
    let xs = (0..n)
        .map(|k| SVector::from_fn(|i, _| ((i * (k + 3) + 7 * k) % 23) as f32 / 23.0))
        .collect();
    (xs, (0..n).map(|k| k % 10).collect())
}

/// Saves `params` of `model` as `--save PATH` writes them (`save_model`), loads the file into
/// `fresh` (the same model's parameters from another seed) and checks they come back equal;
/// returns the file.
fn save_and_reload<M>(
    name: &str,
    model: &M,
    params: &M::Param,
    mut fresh: M::Param,
) -> std::path::PathBuf
where
    M: Init,
    M::Param: paralens::checkpoint::Tensors<f32> + Clone + PartialEq + std::fmt::Debug,
{
    let path = std::env::temp_dir().join(name);
    save_model(&path, model, params).unwrap();
    load_model(&path, model, &mut fresh).unwrap();
    assert_eq!(&fresh, params);
    path
}

/// The MNIST MLP saved where `--save PATH` would write it; returns the file.
fn saved_mlp(name: &str) -> std::path::PathBuf {
    let model = mnist_mlp::model();
    save_and_reload(name, &model, &model.init(5), model.init(0))
}

// The MNIST examples' `--load PATH` path (`predict_saved`) on a file their `--save PATH`
// writes: the parameters come back equal, the predictions are the saved model's, and a file
// of another model is refused with an error.

#[test]
fn the_mnist_mlp_example_predicts_from_a_saved_model() {
    let (xs, ys) = synthetic_digits(mnist_mlp::BATCH);
    let model = mnist_mlp::model();
    let params = model.init(5);
    let mlp_path = saved_mlp("paralens_mnist_mlp_a.safetensors");
    const C: usize = mnist_mlp::shared::COLUMNS;
    let want = mnist_mlp::shared::batch_accuracy::<_, C>(&model, &params, &xs, &ys);
    let got = mnist_mlp::shared::predict_saved::<_, C>(&model, &mlp_path, &xs, &ys).unwrap();
    assert_eq!(got, want);
}

#[test]
fn the_mnist_cnn_example_predicts_from_a_saved_model() {
    let (xs, ys) = synthetic_digits(mnist_cnn::BATCH);
    let mlp_path = saved_mlp("paralens_mnist_mlp_b.safetensors");
    let model = mnist_cnn::model();
    let params = model.init(5);
    let path = save_and_reload(
        "paralens_mnist_cnn.safetensors",
        &model,
        &params,
        model.init(0),
    );
    // The kernels are stored with their geometry, named by their layer.
    let bytes = std::fs::read(&path).unwrap();
    let file = SafeTensors::deserialize(&bytes).unwrap();
    assert_eq!(file.tensor("c1.kernel").unwrap().shape(), &[16, 1, 5, 5]);
    assert_eq!(file.tensor("c2.kernel").unwrap().shape(), &[32, 16, 5, 5]);
    const C: usize = mnist_cnn::shared::COLUMNS;
    let want = mnist_cnn::shared::batch_accuracy::<_, C>(&model, &params, &xs, &ys);
    let got = mnist_cnn::shared::predict_saved::<_, C>(&model, &path, &xs, &ys).unwrap();
    assert_eq!(got, want);
    let wrong = mnist_cnn::shared::predict_saved::<_, C>(&model, &mlp_path, &xs, &ys).unwrap_err();
    assert!(
        wrong.to_string().contains("l1") || wrong.to_string().contains("c1"),
        "{wrong}"
    );
}

#[test]
fn the_mnist_lstm_example_predicts_from_a_saved_model() {
    let (xs, ys) = synthetic_digits(mnist_lstm::BATCH);
    let mlp_path = saved_mlp("paralens_mnist_mlp_c.safetensors");
    let model = mnist_lstm::model();
    let params = model.init(5);
    let path = save_and_reload(
        "paralens_mnist_lstm.safetensors",
        &model,
        &params,
        model.init(0),
    );
    let want = mnist_lstm::accuracy(&model, &params, &xs, &ys);
    let got = mnist_lstm::predict_saved(&path, &xs, &ys).unwrap();
    assert_eq!(got, want);
    let wrong = mnist_lstm::predict_saved(&mlp_path, &xs, &ys).unwrap_err();
    assert!(!wrong.to_string().is_empty());
}

#[test]
fn matrices_on_the_heap_are_stored_as_static_ones() {
    #[derive(Clone, Debug, PartialEq, Tangent)]
    struct Heavy {
        h: HeapMatrix<f64, 3, 2>,
        b: SVector<f64, 2>,
    }
    let a = Heavy {
        h: HeapMatrix::from_fn(|i, j| (i * 2 + j) as f64),
        b: SVector::<f64, 2>::new(0.5, -0.5),
    };
    let bytes = to_bytes(&a).unwrap();
    let file = SafeTensors::deserialize(&bytes).unwrap();
    assert_eq!(file.tensor("h").unwrap().shape(), &[3, 2]);
    let mut b = Heavy {
        h: HeapMatrix::from_fn(|_, _| 0.0),
        b: SVector::<f64, 2>::zeros(),
    };
    from_bytes(&bytes, &mut b).unwrap();
    assert_eq!(a, b);
}

#[test]
fn parameters_and_adam_state_resume_training_exactly() {
    // Parameters, two moments, two step counts.
    resumes_exactly(Adam::new(0.01), 4 + 4 + 4 + 2);
}

/// Trains `opt` on twelve steps, saves parameters and optimizer state as a pair, loads them
/// into a learner started elsewhere, and checks the next twelve steps agree bit for bit.
fn resumes_exactly<O>(opt: O, tensors: usize)
where
    O: Optimizer<MlpParams, Scalar = f32> + Clone,
    O::State: paralens::checkpoint::Tensors<f32> + Clone,
{
    let xs: Vec<SVector<f32, 4>> = (0..12)
        .map(|k| SVector::<f32, 4>::from_fn(|i, _| ((k * 4 + i) as f32 * 0.37).sin()))
        .collect();
    let ys: Vec<usize> = (0..12).map(|k| k % 3).collect();
    let mut a = Learner::new(mlp(), mlp().init(0), SoftmaxCrossEntropy, opt.clone());
    for (x, y) in xs.iter().zip(&ys) {
        a.step(x, y);
    }
    let bytes = to_bytes(&(a.params().clone(), a.optimizer_state().clone())).unwrap();
    assert_eq!(
        SafeTensors::deserialize(&bytes).unwrap().names().len(),
        tensors
    );
    let mut b = Learner::new(mlp(), mlp().init(7), SoftmaxCrossEntropy, opt);
    let mut pair = (b.params().clone(), b.optimizer_state().clone());
    from_bytes(&bytes, &mut pair).unwrap();
    *b.params_mut() = pair.0;
    *b.optimizer_state_mut() = pair.1;
    for (x, y) in xs.iter().zip(&ys) {
        assert_eq!(a.step(x, y).to_bits(), b.step(x, y).to_bits());
    }
    assert_eq!(a.params(), b.params());
}

#[test]
fn every_optimizers_state_resumes_training_exactly() {
    use paralens::optim::{AdaGrad, AdamW, Momentum, Nesterov, RmsProp, Sgd};
    // Four parameter arrays; a state of the parameters' type adds four more.
    resumes_exactly(Sgd::new(0.05), 4);
    resumes_exactly(Momentum::new(0.05, 0.9), 8);
    resumes_exactly(Nesterov::new(0.05, 0.9), 8);
    resumes_exactly(RmsProp::new(0.01), 8);
    resumes_exactly(AdaGrad::new(0.1), 8);
    resumes_exactly(AdamW::new(0.01, 0.01), 14);
}

#[test]
fn riemannian_adams_state_round_trips_under_adams_names() {
    use paralens::optim::RiemannianAdamState;
    let s = RiemannianAdamState {
        m: SVector::<f32, 3>::new(0.5, -1.0, 2.0),
        v: SVector::<f32, 3>::new(0.25, 1.0, 4.0),
        beta1_t: 0.9f32.powi(7),
        beta2_t: 0.999f32.powi(7),
    };
    let bytes = to_bytes(&s).unwrap();
    let names = SafeTensors::deserialize(&bytes).unwrap().names().len();
    assert_eq!(names, 4);
    let mut back = RiemannianAdamState {
        m: SVector::zeros(),
        v: SVector::zeros(),
        beta1_t: 1.0f32,
        beta2_t: 1.0,
    };
    from_bytes(&bytes, &mut back).unwrap();
    assert_eq!(back, s);
}

// A Boolean circuit's parameters are words: stored as `u64` tensors, an array of words as one
// tensor of shape `[N]`, bit for bit.
#[test]
fn boolean_circuit_words_round_trip_as_u64_tensors() {
    use paralens::circuits::Lanes;
    use paralens::circuits::models::LookupTable;
    // Two outputs of a 2-input lookup table: four table words each.
    let table = LookupTable::<2, 2, 4>;
    let p: [[u64; 4]; 2] = [
        [0x0123_4567_89ab_cdef, u64::MAX, 0, 1 << 63],
        [
            0xdead_beef_0000_ffff,
            0x5555_5555_5555_5555,
            7,
            u64::MAX - 1,
        ],
    ];
    let bytes = to_bytes(&p).unwrap();
    let file = SafeTensors::deserialize(&bytes).unwrap();
    let mut names = file.names();
    names.sort_unstable();
    assert_eq!(names, ["0", "1"]);
    let row = file.tensor("1").unwrap();
    assert_eq!((row.dtype(), row.shape()), (Dtype::U64, &[4][..]));
    assert_eq!(
        u64::from_le_bytes(row.data()[..8].try_into().unwrap()),
        0xdead_beef_0000_ffff
    );
    let mut q = [[0u64; 4]; 2];
    from_bytes(&bytes, &mut q).unwrap();
    assert_eq!(p, q);
    let x = [0xf0f0_f0f0_f0f0_f0f0_u64, 0xcccc_cccc_cccc_cccc];
    assert_eq!(table.forward(&p, x), table.forward(&q, x));

    // Words of several lanes: one tensor of `W` words each.
    let lanes = [Lanes([1, u64::MAX]), Lanes([3 << 40, 5])];
    let mut back = [Lanes([0; 2]); 2];
    from_bytes(&to_bytes(&lanes).unwrap(), &mut back).unwrap();
    assert_eq!(lanes, back);

    // A float model refuses a file of words, naming the tensor.
    let mut f = [[0.0_f32; 4]; 2];
    match from_bytes(&bytes, &mut f) {
        Err(CheckpointError::Dtype { name, .. }) => assert_eq!(name, "0"),
        other => panic!("expected a dtype error, got {other:?}"),
    }
    assert_eq!(f, [[0.0; 4]; 2]);
}

#[test]
fn a_file_that_cannot_be_read_or_written_is_named() {
    use std::error::Error;
    let model = Mlp::default();
    let mut params = model.init(0);
    let before = params.clone();
    let missing = std::env::temp_dir()
        .join("paralens_no_such_dir")
        .join("mlp.safetensors");
    for e in [
        load_model(&missing, &model, &mut params).unwrap_err(),
        load(&missing, &mut params).unwrap_err(),
        save_model(&missing, &model, &params).unwrap_err(),
        save(&missing, &params).unwrap_err(),
    ] {
        let CheckpointError::Io { path, error } = &e else {
            panic!("not an I/O error: {e}");
        };
        assert_eq!(path, &missing);
        assert_eq!(error.kind(), std::io::ErrorKind::NotFound);
        assert!(e.to_string().contains("paralens_no_such_dir"), "{e}");
        assert!(e.source().is_some());
    }
    assert_eq!(params, before);
}

// A file that does not match the model: the error named the tensor but not the file (the
// examples put the path in front, which doubled it on an I/O error).
#[test]
fn a_file_of_another_model_is_named_with_what_is_wrong() {
    use std::error::Error;
    let dir = std::env::temp_dir().join(format!("paralens_in_file_{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let garbage = dir.join("garbage.safetensors");
    std::fs::write(&garbage, b"not a checkpoint").unwrap();
    let half_file = dir.join("half.safetensors");
    let half = Half { l1: Dense::new() };
    save(&half_file, &half.init(0)).unwrap();
    let model = Mlp::default();
    let mut params = model.init(0);
    let before = params.clone();
    for (e, file, says) in [
        (
            load(&garbage, &mut params).unwrap_err(),
            &garbage,
            "not a safetensors file",
        ),
        (
            load_model(&garbage, &model, &mut params).unwrap_err(),
            &garbage,
            "not a safetensors file",
        ),
        (
            load(&half_file, &mut params).unwrap_err(),
            &half_file,
            "the model needs",
        ),
    ] {
        let CheckpointError::InFile { path, error } = &e else {
            panic!("the file is not named: {e}");
        };
        assert_eq!(path, file);
        assert!(
            matches!(
                **error,
                CheckpointError::Format(_) | CheckpointError::Missing(_)
            ),
            "{e}"
        );
        let text = e.to_string();
        assert!(
            text.starts_with(&format!("checkpoint {}: ", file.display())),
            "{text}"
        );
        assert!(text.contains(says), "{text}");
        // Said once: not "checkpoint: " again after the path.
        assert_eq!(text.matches("checkpoint").count(), 1, "{text}");
        assert!(e.source().is_none());
    }
    assert_eq!(params, before);
    std::fs::remove_dir_all(&dir).unwrap();
}

// The MNIST examples' command line (clap): a malformed or missing value is refused, not
// replaced by the default (`--epochs abc` ran 9 epochs, `--save` alone saved nothing), and so
// are `--load` with `--save` or `--plot`, a file to write in a folder that does not exist,
// and `--plot` with no epoch to draw.
#[test]
fn the_mnist_examples_refuse_a_bad_command_line() {
    use mnist_mlp::shared::try_parse_from;
    let parse = |line: &str| {
        let argv = std::iter::once("mnist_mlp").chain(line.split_whitespace());
        try_parse_from("mnist_mlp", "", 9, argv)
    };
    let ok = parse("--data d --epochs 3 --plot p.svg").unwrap();
    assert_eq!((ok.dir.to_str(), ok.epochs), (Some("d"), 3));
    assert_eq!(parse("--data d").unwrap().epochs, 9);
    assert!(parse("--data d --load m.st").unwrap().load.is_some());
    for (line, says) in [
        (
            "--data d --epochs abc",
            "invalid value 'abc' for '--epochs <N>'",
        ),
        ("--data d --epochs -2", "'-2'"),
        ("--data d --save", "a value is required for '--save <PATH>'"),
        ("--data", "a value is required for '--data <DIR>'"),
        (
            "--epochs 2",
            "required arguments were not provided:\n  --data <DIR>",
        ),
        ("--data d --bogus 1", "unexpected argument '--bogus'"),
        ("--data d --save a.st --load b.st", "cannot be used with"),
        ("--data d --load b.st --plot p.svg", "cannot be used with"),
        (
            "--data d --save /no/such/folder/p.st",
            "cannot write /no/such/folder/p.st: its folder does not exist",
        ),
        ("--data d --epochs 0 --plot p.svg", "`--epochs 0` runs none"),
    ] {
        let e = parse(line)
            .err()
            .unwrap_or_else(|| panic!("{line} was accepted"));
        // clap's exit status for a usage error, as the hand-written parser's.
        assert_eq!(e.exit_code(), 2, "{line}: {e}");
        let text = e.to_string();
        assert!(text.contains(says), "{line}: {text}");
    }
    // `--help` is not an error of the command line: it exits 0 with the flags listed.
    let help = parse("--help").err().unwrap();
    assert_eq!(help.exit_code(), 0);
    assert!(help.to_string().contains("[default: 9]"), "{help}");
}

// digits_cnn's command line: the same refusals as the MNIST examples' (it has its own parser:
// a seed instead of a data folder).
#[test]
fn the_digits_example_refuses_a_bad_command_line() {
    use clap::Parser;
    let parse = |line: &str| {
        let argv = std::iter::once("digits_cnn").chain(line.split_whitespace());
        digits_cnn::Args::try_parse_from(argv).and_then(digits_cnn::Args::check)
    };
    let ok = parse("--seed 3 --plot p.svg").unwrap();
    assert_eq!((ok.seed, ok.epochs), (3, 30));
    for (line, says) in [
        ("--epochs abc", "invalid value 'abc' for '--epochs <N>'"),
        ("--save", "a value is required for '--save <PATH>'"),
        ("--bogus", "unexpected argument '--bogus'"),
        ("--save a.st --load b.st", "cannot be used with"),
        ("--plot /no/such/folder/p.svg", "its folder does not exist"),
        ("--epochs 0 --plot p.svg", "`--epochs 0` runs none"),
    ] {
        let e = parse(line)
            .err()
            .unwrap_or_else(|| panic!("{line} was accepted"));
        assert_eq!(e.exit_code(), 2, "{line}: {e}");
        assert!(e.to_string().contains(says), "{line}: {e}");
    }
}
