//! The sharded learner: bit for bit the same parameters whatever the number of threads for a
//! given number of shards, the same step as one learner on the whole batch (up to the order
//! of the sum), refusals that change nothing, a panic in a shard that leaves it usable, and no
//! allocation per step on any thread after the first (a process-wide counting allocator;
//! the tests of this file run one at a time on the main thread, under libtest-mimic, so that
//! the count is the measured test's own and not the harness starting the next test).

#[path = "common/trials.rs"]
mod trials;

use paralens::prelude::*;
use paralens::train::{Control, Eval, Fit, fit_sharded};
use paralens::{LabelError, ShardedLearner, StepError};
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

struct Counting;

static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every call is forwarded unchanged to the system allocator, which upholds the
// `GlobalAlloc` contract; the only addition is an atomic counter, which never allocates.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: same contract as ours, forwarded.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from `System.alloc` with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: forwarded with the caller's guarantees.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Columns per shard of the heap model (the matrix-product path).
const COLS: usize = 8;

para! {
    /// A small MNIST-like perceptron over 8 columns, through the matrix products.
    struct Mlp { l1: Dense<40, 24>, l2: Dense<24, 5> }
    fn forward(&self, x: HeapMatrix<f32, 40, COLS>) -> HeapMatrix<f32, 5, COLS> {
        self.l2(relu(self.l1(x)))
    }
}

fn mlp() -> Mlp {
    Mlp {
        l1: Dense::new(),
        l2: Dense::glorot(),
    }
}

/// Pixel `r` of example `i`: fixed pseudo-random values in `[-1, 1)`.
fn pixel(i: usize, r: usize) -> f32 {
    (((i * 7919 + r * 104_729) % 1000) as f32 / 1000.0 - 0.5) * 2.0
}

/// The label of example `i`: which of its first five pixels is the largest (learnable).
fn label(i: usize) -> usize {
    (0..5)
        .max_by(|&a, &b| pixel(i, a).total_cmp(&pixel(i, b)))
        .unwrap_or(0)
}

/// Shard `s` of step `k` of a run with `shards` shards.
fn shard(k: usize, shards: usize, s: usize) -> (HeapMatrix<f32, 40, COLS>, [usize; COLS]) {
    let first = (k * shards + s) * COLS;
    let x = HeapMatrix::from_fn(|r, j| pixel(first + j, r));
    (x, core::array::from_fn(|j| label(first + j)))
}

type MlpLearner =
    Learner<Mlp, HeapMatrix<f32, 40, COLS>, PerColumn<SoftmaxCrossEntropy>, Adam<f32>>;

fn mlp_learner() -> MlpLearner {
    let model = mlp();
    Learner::new(
        model,
        model.init(3),
        PerColumn(SoftmaxCrossEntropy),
        Adam::new(0.01),
    )
}

/// The flat parameters, as bits.
fn bits<P: Flat<f32>>(p: &P) -> Vec<u32> {
    p.slices().flatten().map(|v| v.to_bits()).collect()
}

fn any_number_of_threads_gives_the_same_bits() {
    let shards = 4;
    let run = |threads: usize| {
        let mut sharded = ShardedLearner::with_threads(mlp_learner(), shards, threads);
        assert_eq!(sharded.threads(), threads.min(shards));
        let losses: Vec<u32> = (0..25)
            .map(|k| sharded.step_with(|s| shard(k, shards, s)).to_bits())
            .collect();
        (bits(sharded.params()), losses)
    };
    let one = run(1);
    for threads in [2, 3, 4, 7] {
        assert!(run(threads) == one, "{threads} threads differ from one");
    }
    // And the run trained: the parameters moved.
    assert!(one.0 != bits(mlp_learner().params()));
}

fn one_shard_is_the_plain_learner_bit_for_bit() {
    let mut plain = mlp_learner();
    let mut sharded = ShardedLearner::with_threads(mlp_learner(), 1, 4);
    assert_eq!(sharded.threads(), 1, "at most one thread per shard");
    for k in 0..10 {
        let (x, y) = shard(k, 1, 0);
        let a = plain.step_owned(x, &y);
        let b = sharded.step_with(|s| shard(k, 1, s));
        assert_eq!(a.to_bits(), b.to_bits(), "loss of step {k}");
    }
    assert_eq!(bits(plain.params()), bits(sharded.params()));
}

/// A model of `B` columns as static matrices, in `f64`: the sharded step over shards of 2
/// columns against the plain learner's step over all 8 at once.
fn shards_of_a_batch_take_the_batch_step() {
    let dense = |seed| {
        let m = Dense::<6, 10, f64>::new()
            .then(Tanh)
            .then(Dense::<10, 3, f64>::glorot());
        (m, m.init(seed))
    };
    let x = |k: usize, col: usize| {
        SVector::<f64, 6>::from_fn(|r, _| (((k * 8 + col) * 13 + r * 7) as f64 * 0.31).sin())
    };
    let y = |k: usize, col: usize| (k * 8 + col) % 3;
    let (m, p) = dense(5);
    let mut whole = Learner::new(
        m,
        p.clone(),
        PerColumn(SoftmaxCrossEntropy),
        Momentum::new(0.1, 0.9),
    );
    let mut sharded = ShardedLearner::with_threads(
        Learner::new(
            m,
            p,
            PerColumn(SoftmaxCrossEntropy),
            Momentum::new(0.1, 0.9),
        ),
        4,
        2,
    );
    for k in 0..20 {
        let xs = SMatrix::<f64, 6, 8>::from_fn(|r, c| x(k, c)[r]);
        let ys: [usize; 8] = core::array::from_fn(|c| y(k, c));
        let a = whole.step_owned(xs, &ys);
        let b = sharded.step_with(|s| {
            (
                SMatrix::<f64, 6, 2>::from_fn(|r, c| x(k, 2 * s + c)[r]),
                [y(k, 2 * s), y(k, 2 * s + 1)],
            )
        });
        assert!(
            (a - b).abs() < 1e-12 * (1.0 + a.abs()),
            "step {k}: loss {a} vs {b}"
        );
    }
    let (w, s) = (whole.params(), sharded.params());
    let (w, s): (Vec<f64>, Vec<f64>) = (
        w.slices().flatten().copied().collect(),
        s.slices().flatten().copied().collect(),
    );
    for (a, b) in w.iter().zip(&s) {
        assert!(
            (a - b).abs() < 1e-11 * (1.0 + a.abs()),
            "parameter {a} vs {b}"
        );
    }
}

fn a_refused_step_changes_nothing_and_the_next_one_is_clean() {
    let shards = 3;
    let mut sharded = ShardedLearner::with_threads(mlp_learner(), shards, 2);
    let mut reference = ShardedLearner::with_threads(mlp_learner(), shards, 2);
    sharded.step_with(|s| shard(0, shards, s));
    reference.step_with(|s| shard(0, shards, s));
    let before = bits(sharded.params());
    // A label out of range in shard 2, column 5 (shards 0 and 1 have run forward and back).
    let err = sharded
        .try_step_with(|s| {
            let (x, mut y) = shard(1, shards, s);
            if s == 2 {
                y[5] = 9;
            }
            (x, y)
        })
        .unwrap_err();
    assert!(
        matches!(
            err,
            StepError::ShardLabel {
                shard: 2,
                index: 5,
                error: LabelError::OutOfRange { .. }
            }
        ),
        "{err:?}"
    );
    assert!(err.to_string().starts_with("shard 2, example 5:"), "{err}");
    // A NaN in shard 1's input: a non-finite loss.
    let err = sharded
        .try_step_with(|s| {
            let (mut x, y) = shard(1, shards, s);
            if s == 1 {
                x[(3, 0)] = f32::NAN;
            }
            (x, y)
        })
        .unwrap_err();
    assert!(matches!(err, StepError::NonFiniteLoss { .. }), "{err:?}");
    assert_eq!(
        bits(sharded.params()),
        before,
        "a refused step changed the parameters"
    );
    // The next steps equal those of a learner that never saw the refused ones: every shard's
    // buffer was cleared, the optimizer's state untouched.
    for k in 1..4 {
        let a = sharded.step_with(|s| shard(k, shards, s));
        let b = reference.step_with(|s| shard(k, shards, s));
        assert_eq!(a.to_bits(), b.to_bits());
    }
    assert_eq!(bits(sharded.params()), bits(reference.params()));
}

fn a_panic_in_a_shard_reaches_the_caller_and_leaves_the_learner_usable() {
    let shards = 4;
    let mut sharded = ShardedLearner::with_threads(mlp_learner(), shards, 2);
    let mut reference = ShardedLearner::with_threads(mlp_learner(), shards, 2);
    let before = bits(sharded.params());
    let caught = trials::expecting_panic("shard three cannot be built", || {
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            sharded.step_with(|s| {
                assert!(s != 3, "shard three cannot be built");
                shard(0, shards, s)
            })
        }))
    });
    let msg = caught.unwrap_err();
    let msg = msg
        .downcast_ref::<String>()
        .map(String::as_str)
        .or_else(|| msg.downcast_ref::<&str>().copied());
    assert_eq!(msg, Some("shard three cannot be built"));
    assert_eq!(bits(sharded.params()), before);
    for k in 0..3 {
        sharded.step_with(|s| shard(k, shards, s));
        reference.step_with(|s| shard(k, shards, s));
    }
    assert_eq!(bits(sharded.params()), bits(reference.params()));
}

fn inputs_and_labels_must_be_one_per_shard() {
    let mut sharded = ShardedLearner::with_threads(mlp_learner(), 2, 2);
    let (x, y) = shard(0, 1, 0);
    let err = sharded
        .try_step(std::slice::from_ref(&x), &[y])
        .unwrap_err();
    assert!(
        matches!(
            err,
            StepError::BatchSize {
                expected: 2,
                inputs: 1,
                labels: 1
            }
        ),
        "{err:?}"
    );
    let (x2, y2) = shard(0, 1, 1);
    let loss = sharded.try_step(&[x, x2], &[y, y2]).unwrap();
    assert!(loss.is_finite());
}

fn a_step_allocates_nothing_on_any_thread_after_the_first() {
    let shards = 4;
    for threads in [1, 2, 4] {
        let mut sharded = ShardedLearner::with_threads(mlp_learner(), shards, threads);
        // The first steps warm each thread's pool of activation blocks.
        for k in 0..2 {
            sharded.step_with(|s| shard(k, shards, s));
        }
        let before = ALLOCATIONS.load(Ordering::SeqCst);
        for k in 2..40 {
            std::hint::black_box(sharded.step_with(|s| shard(k, shards, s)));
        }
        let n = ALLOCATIONS.load(Ordering::SeqCst) - before;
        assert_eq!(n, 0, "{threads} threads: 38 steps allocated {n} times");
    }
}

fn new_times_its_first_steps_to_choose_its_threads_and_the_result_does_not_change() {
    let shards = 4;
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    let mut auto = ShardedLearner::new(mlp_learner(), shards);
    let mut one = ShardedLearner::with_threads(mlp_learner(), shards, 1);
    // Through the timed steps (on all the threads, then on one) and after the choice.
    for k in 0..30 {
        let a = auto.step_with(|s| shard(k, shards, s));
        let b = one.step_with(|s| shard(k, shards, s));
        assert_eq!(a.to_bits(), b.to_bits(), "loss of step {k}");
    }
    assert_eq!(bits(auto.params()), bits(one.params()));
    let chosen = auto.threads();
    assert!(
        chosen == 1 || chosen == cores.min(shards),
        "chose {chosen} threads"
    );
    let before = ALLOCATIONS.load(Ordering::SeqCst);
    for k in 30..50 {
        std::hint::black_box(auto.step_with(|s| shard(k, shards, s)));
    }
    let n = ALLOCATIONS.load(Ordering::SeqCst) - before;
    assert_eq!(
        n, 0,
        "20 steps on the chosen {chosen} threads allocated {n} times"
    );
}

fn the_counter_sees_allocations_on_other_threads() {
    let before = ALLOCATIONS.load(Ordering::SeqCst);
    std::thread::scope(|s| {
        s.spawn(|| drop(std::hint::black_box(vec![1u8; 64])));
    });
    assert!(ALLOCATIONS.load(Ordering::SeqCst) > before);
}

fn fit_sharded_trains_and_names_the_example_of_a_bad_label() {
    let shards = 2;
    let examples = 256;
    let xs: Vec<[f32; 40]> = (0..examples)
        .map(|i| core::array::from_fn(|r| pixel(i, r)))
        .collect();
    let ys: Vec<usize> = (0..examples).map(label).collect();
    let cfg = Fit {
        epochs: 15,
        batch: shards * COLS,
        seed: 1,
        patience: None,
        keep_best: false,
        progress: false,
    };
    let columns = |idx: &[usize]| {
        let x = HeapMatrix::<f32, 40, COLS>::from_fn(|r, j| xs[idx[j]][r]);
        (x, core::array::from_fn(|j| ys[idx[j]]))
    };
    let accuracy = |l: &MlpLearner| {
        let right = (0..examples / COLS)
            .map(|k| {
                let idx: Vec<usize> = (k * COLS..(k + 1) * COLS).collect();
                let (x, y) = columns(&idx);
                let out = l.predict(&x);
                (0..COLS)
                    .filter(|&j| out.column(j).argmax().0 == y[j])
                    .count()
            })
            .sum::<usize>();
        right as f64 / examples as f64
    };
    let mut sharded = ShardedLearner::with_threads(mlp_learner(), shards, 2);
    let start = accuracy(sharded.learner());
    let history = fit_sharded(
        &mut sharded,
        examples,
        &cfg,
        columns,
        |l| Eval {
            loss: f64::NAN,
            accuracy: accuracy(l),
        },
        |_, _| Control::Continue,
    )
    .unwrap();
    assert_eq!(history.epochs.len(), 15);
    let last = history.epochs.last().unwrap();
    assert!(
        last.eval.accuracy > start + 0.3 && last.train_loss < history.epochs[0].train_loss,
        "accuracy {start} -> {}, loss {} -> {}",
        last.eval.accuracy,
        history.epochs[0].train_loss,
        last.train_loss
    );
    // Example 100 has a label out of range: the error names it, not its place in a shard.
    let mut bad = ys.clone();
    bad[100] = 7;
    let err = fit_sharded(
        &mut sharded,
        examples,
        &cfg,
        |idx: &[usize]| {
            let x = HeapMatrix::<f32, 40, COLS>::from_fn(|r, j| xs[idx[j]][r]);
            (x, core::array::from_fn(|j| bad[idx[j]]))
        },
        |_| Eval {
            loss: f64::NAN,
            accuracy: f64::NAN,
        },
        |_, _| Control::Continue,
    )
    .unwrap_err();
    assert!(
        matches!(err, StepError::Label { index: 100, .. }),
        "{err:?}"
    );
    // A batch that does not split into the shards is refused before anything runs.
    let odd = Fit { batch: 15, ..cfg };
    let err = fit_sharded(
        &mut sharded,
        examples,
        &odd,
        columns,
        |_| Eval {
            loss: f64::NAN,
            accuracy: f64::NAN,
        },
        |_, _| Control::Continue,
    )
    .unwrap_err();
    assert!(
        matches!(
            err,
            StepError::FitSetting {
                name: "batch",
                value: 15,
                ..
            }
        ),
        "{err:?}"
    );
}

fn main() -> std::process::ExitCode {
    trials::run_one_at_a_time(&[
        (
            "any_number_of_threads_gives_the_same_bits",
            any_number_of_threads_gives_the_same_bits,
        ),
        (
            "one_shard_is_the_plain_learner_bit_for_bit",
            one_shard_is_the_plain_learner_bit_for_bit,
        ),
        (
            "shards_of_a_batch_take_the_batch_step",
            shards_of_a_batch_take_the_batch_step,
        ),
        (
            "a_refused_step_changes_nothing_and_the_next_one_is_clean",
            a_refused_step_changes_nothing_and_the_next_one_is_clean,
        ),
        (
            "a_panic_in_a_shard_reaches_the_caller_and_leaves_the_learner_usable",
            a_panic_in_a_shard_reaches_the_caller_and_leaves_the_learner_usable,
        ),
        (
            "inputs_and_labels_must_be_one_per_shard",
            inputs_and_labels_must_be_one_per_shard,
        ),
        (
            "a_step_allocates_nothing_on_any_thread_after_the_first",
            a_step_allocates_nothing_on_any_thread_after_the_first,
        ),
        (
            "new_times_its_first_steps_to_choose_its_threads_and_the_result_does_not_change",
            new_times_its_first_steps_to_choose_its_threads_and_the_result_does_not_change,
        ),
        (
            "the_counter_sees_allocations_on_other_threads",
            the_counter_sees_allocations_on_other_threads,
        ),
        (
            "fit_sharded_trains_and_names_the_example_of_a_bad_label",
            fit_sharded_trains_and_names_the_example_of_a_bad_label,
        ),
    ])
}
