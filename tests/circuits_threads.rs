//! The sharded netlist learner: bit for bit the same parameters and reports whatever the
//! number of threads, the same step as one learner on the word that holds the shards side by
//! side, predictions over threads equal to one thread's, shapes refused as errors, a panic
//! in a shard that leaves it usable, and no allocation per step after the first (a
//! process-wide counting allocator; the tests of this file run one at a time on the main
//! thread, under libtest-mimic, so that the count is the measured test's own and not the
//! harness starting the next test).

#[path = "common/trials.rs"]
mod trials;

use paralens::circuits::models::{GroupVote, Softmax, gate_network, random_tables};
use paralens::circuits::netlist::{NetlistLearner, ShardedNetlistLearner};
use paralens::circuits::{Lanes, NetlistError, StepReport, UpdateRule, Word};
use rand::{SeedableRng, rngs::StdRng};
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::Mutex;
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

type L4 = Lanes<4>;

/// Data inputs, classes and gates per class of the test network.
const DATA: usize = 12;
const CLASSES: usize = 3;
const GROUP: usize = 4;
const OUTPUTS: usize = CLASSES * GROUP;
const SHARDS: usize = 4;

/// A random gate network (a hidden layer of 40 gates, 12 outputs) learning by `rule`, from
/// random tables.
fn learner<W: Word>(rule: UpdateRule) -> NetlistLearner<W> {
    let net = gate_network(DATA, &[40, OUTPUTS], OUTPUTS, 5).unwrap();
    let mut l = NetlistLearner::new(net.netlist, net.params, rule).unwrap();
    l.set_params(&random_tables(net.params, 9)).unwrap();
    l
}

fn sharded(rule: UpdateRule, threads: usize) -> ShardedNetlistLearner<u64> {
    ShardedNetlistLearner::with_threads(learner(rule), SHARDS, threads).unwrap()
}

/// A xorshift stream: fixed pseudo-random words.
fn word(seed: u64) -> u64 {
    let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    for _ in 0..3 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
    }
    x
}

/// Step `k`'s examples, shard after shard: data words, labels (the class's gates on), valid
/// lanes (the last shard half full), masks, and the class of each lane.
struct Step {
    data: Vec<u64>,
    labels: Vec<u64>,
    valid: Vec<u64>,
    masks: Vec<u64>,
    classes: Vec<Vec<u8>>,
}

fn step_data(k: u64) -> Step {
    let seed = |s: usize, i: usize| k * 10_000 + (s * 100 + i) as u64;
    let data: Vec<u64> = (0..SHARDS)
        .flat_map(|s| (0..DATA).map(move |i| word(seed(s, i))))
        .collect();
    // Class of a lane: a function of its first three data bits (learnable), mod 3.
    let classes: Vec<Vec<u8>> = (0..SHARDS)
        .map(|s| {
            (0..64)
                .map(|lane| {
                    let bit = |i: usize| (data[s * DATA + i] >> lane) & 1;
                    ((bit(0) + 2 * bit(1) + bit(2)) % 3) as u8
                })
                .collect()
        })
        .collect();
    let mut labels = vec![0u64; SHARDS * OUTPUTS];
    for (s, cs) in classes.iter().enumerate() {
        for (lane, &c) in cs.iter().enumerate() {
            for g in 0..GROUP {
                labels[s * OUTPUTS + usize::from(c) * GROUP + g] |= 1 << lane;
            }
        }
    }
    let valid = (0..SHARDS)
        .map(|s| {
            if s == SHARDS - 1 {
                u64::MAX >> 32
            } else {
                u64::MAX
            }
        })
        .collect();
    let masks = (0..SHARDS * OUTPUTS)
        .map(|j| word(seed(j, 99)) | word(seed(j, 98)))
        .collect();
    Step {
        data,
        labels,
        valid,
        masks,
        classes,
    }
}

/// The four shards of `u64` side by side: shard `s` is word `s` of a `Lanes<4>`.
fn wide(shards: &[u64], per_shard: usize, i: usize) -> L4 {
    Lanes(core::array::from_fn(|s| shards[s * per_shard + i]))
}

fn wides(shards: &[u64], per_shard: usize) -> Vec<L4> {
    (0..per_shard).map(|i| wide(shards, per_shard, i)).collect()
}

const RULES: [UpdateRule; 6] = [
    UpdateRule::Xor,
    UpdateRule::Majority,
    UpdateRule::Threshold(40),
    UpdateRule::TopK(7),
    UpdateRule::LocalMajority,
    UpdateRule::LocalSignificant(1.0),
];

/// The softmax targets of a shard, drawn from a stream of the shard's and the step's own.
const HOW: Softmax = Softmax {
    temperature: 1.0,
    share: 2,
};

/// A run of 24 steps (plain, masked, by per-shard targets, by whole-batch targets, in
/// turn) on `threads` threads: the parameters after each step, and the reports.
fn run(rule: UpdateRule, threads: usize) -> (Vec<Vec<bool>>, Vec<StepReport>) {
    let mut l = sharded(rule, threads);
    assert_eq!(l.threads(), threads.min(SHARDS));
    let votes: Vec<Mutex<GroupVote<u64>>> = (0..SHARDS)
        .map(|_| Mutex::new(GroupVote::new(CLASSES, GROUP)))
        .collect();
    let mut vote = GroupVote::<u64>::new(CLASSES, GROUP);
    let mut rng = StdRng::seed_from_u64(4);
    let (mut params, mut reports) = (Vec::new(), Vec::new());
    for k in 0..24 {
        let st = step_data(k);
        let report = match k % 4 {
            0 => l.step(&st.data, &st.labels, &st.valid),
            1 => l.step_masked(&st.data, &st.labels, &st.valid, Some(&st.masks)),
            2 => l.step_by(&st.data, &st.valid, |s, out, wanted, audience| {
                let mut rng = StdRng::seed_from_u64(k * 100 + s as u64);
                let mut vote = votes[s].lock().unwrap();
                let n = st.valid[s].count_ones() as usize;
                vote.softmax_targets(out, &st.classes[s][..n], HOW, &mut rng, wanted, audience)
            }),
            _ => l.step_by_batch(&st.data, &st.valid, |t| {
                for s in 0..t.shards() {
                    let n = t.valid(s).count_ones() as usize;
                    let (out, wanted, audience) = t.targets_mut(s);
                    vote.softmax_targets(
                        out,
                        &st.classes[s][..n],
                        HOW,
                        &mut rng,
                        wanted,
                        audience,
                    )?;
                }
                Ok(())
            }),
        };
        reports.push(report.unwrap());
        params.push(l.params().to_vec());
    }
    (params, reports)
}

fn any_number_of_threads_gives_the_same_parameters_and_reports() {
    for rule in RULES {
        let one = run(rule, 1);
        for threads in [2, 3] {
            assert!(
                run(rule, threads) == one,
                "{rule:?}: {threads} threads differ from one"
            );
        }
        // The run learned: bits flipped (a plain majority of all the lanes is rarely
        // reached on these random targets).
        let flips: usize = one.1.iter().map(|r| r.flipped).sum();
        assert!(
            flips > 0 || rule == UpdateRule::Majority,
            "{rule:?}: nothing flipped"
        );
    }
}

fn shards_step_as_one_learner_on_the_wide_word() {
    for rule in RULES {
        for threads in [1, 2] {
            let mut plain = learner::<L4>(rule);
            let mut l = sharded(rule, threads);
            // GroupVote targets drawn from one stream: lane by lane over the whole batch
            // (the plain learner's order) from the wide outputs the shards make up.
            let mut vote_wide = GroupVote::<L4>::new(CLASSES, GROUP);
            let mut vote_plain = GroupVote::<L4>::new(CLASSES, GROUP);
            let (mut rng_a, mut rng_b) = (StdRng::seed_from_u64(8), StdRng::seed_from_u64(8));
            let (mut out, mut wanted, mut audience) = (
                vec![L4::ZERO; OUTPUTS],
                vec![L4::ZERO; OUTPUTS],
                vec![L4::ZERO; OUTPUTS],
            );
            let mut flips = 0;
            for k in 0..24 {
                let st = step_data(k);
                let x = wides(&st.data, DATA);
                let valid = wide(&st.valid, 1, 0);
                let all: Vec<u8> = st.classes.concat();
                let n = 3 * 64 + 32;
                let (a, b) = match k % 3 {
                    0 => (
                        plain.step(&x, &wides(&st.labels, OUTPUTS), valid),
                        l.step(&st.data, &st.labels, &st.valid),
                    ),
                    1 => (
                        plain.step_masked(
                            &x,
                            &wides(&st.labels, OUTPUTS),
                            valid,
                            Some(&wides(&st.masks, OUTPUTS)),
                        ),
                        l.step_masked(&st.data, &st.labels, &st.valid, Some(&st.masks)),
                    ),
                    _ => (
                        plain.step_by(&x, valid, |o, w, a| {
                            vote_plain.softmax_targets(o, &all[..n], HOW, &mut rng_a, w, a)
                        }),
                        l.step_by_batch(&st.data, &st.valid, |t| {
                            for s in 0..SHARDS {
                                for (j, y) in out.iter_mut().enumerate() {
                                    y.0[s] = t.outputs(s)[j];
                                }
                            }
                            vote_wide.softmax_targets(
                                &out,
                                &all[..n],
                                HOW,
                                &mut rng_b,
                                &mut wanted,
                                &mut audience,
                            )?;
                            for s in 0..SHARDS {
                                let (_, w, a) = t.targets_mut(s);
                                for j in 0..OUTPUTS {
                                    (w[j], a[j]) = (wanted[j].0[s], audience[j].0[s]);
                                }
                            }
                            Ok(())
                        }),
                    ),
                };
                let (a, b) = (a.unwrap(), b.unwrap());
                assert_eq!(a, b, "{rule:?}, step {k}");
                flips += b.flipped;
                assert_eq!(plain.params(), l.params(), "{rule:?}, step {k}");
            }
            assert!(
                flips > 0 || rule == UpdateRule::Majority,
                "{rule:?}: nothing flipped"
            );
        }
    }
}

fn predictions_over_threads_are_one_threads() {
    let mut plain = learner::<u64>(UpdateRule::Majority);
    // Seven words: runs of 2, 2, 2, 1 over four shards.
    let data: Vec<u64> = (0..7 * DATA as u64).map(word).collect();
    let mut want = vec![0u64; 7 * OUTPUTS];
    for (x, y) in data.chunks(DATA).zip(want.chunks_mut(OUTPUTS)) {
        plain.predict(x, y).unwrap();
    }
    for threads in 1..=3 {
        let mut l = sharded(UpdateRule::Majority, threads);
        let mut out = vec![0u64; 7 * OUTPUTS];
        l.predict(&data, &mut out).unwrap();
        assert_eq!(out, want, "{threads} threads");
        // One word, and none.
        l.predict(&data[..DATA], &mut out[..OUTPUTS]).unwrap();
        assert_eq!(out[..OUTPUTS], want[..OUTPUTS]);
        l.predict(&[], &mut []).unwrap();
    }
    // After steps, the shards' evaluators hold the new parameters.
    let mut l = sharded(UpdateRule::LocalMajority, 2);
    for k in 0..5 {
        let st = step_data(k);
        l.step(&st.data, &st.labels, &st.valid).unwrap();
    }
    let mut plain = learner::<u64>(UpdateRule::Majority);
    plain.set_params(l.params()).unwrap();
    for (x, y) in data.chunks(DATA).zip(want.chunks_mut(OUTPUTS)) {
        plain.predict(x, y).unwrap();
    }
    let mut out = vec![0u64; 7 * OUTPUTS];
    l.predict(&data, &mut out).unwrap();
    assert_eq!(out, want);
    let mut back = l.into_learner();
    back.predict(&data[..DATA], &mut out[..OUTPUTS]).unwrap();
    assert_eq!(out[..OUTPUTS], want[..OUTPUTS]);
}

fn a_step_allocates_nothing_after_the_first() {
    for rule in [UpdateRule::LocalSignificant(1.0), UpdateRule::TopK(3)] {
        let mut l = sharded(rule, 2);
        let mut vote = GroupVote::<u64>::new(CLASSES, GROUP);
        let mut rng = StdRng::seed_from_u64(1);
        let steps: Vec<Step> = (0..8).map(step_data).collect();
        let mut take = |l: &mut ShardedNetlistLearner<u64>, st: &Step, k: usize| match k % 4 {
            0 => l.step(&st.data, &st.labels, &st.valid),
            1 => l.step_masked(&st.data, &st.labels, &st.valid, Some(&st.masks)),
            2 => l.step_by(&st.data, &st.valid, |s, _, wanted, _| {
                wanted.copy_from_slice(&st.labels[s * OUTPUTS..(s + 1) * OUTPUTS]);
                Ok(())
            }),
            _ => l.step_by_batch(&st.data, &st.valid, |t| {
                for s in 0..t.shards() {
                    let n = t.valid(s).count_ones() as usize;
                    let (out, wanted, audience) = t.targets_mut(s);
                    vote.softmax_targets(
                        out,
                        &st.classes[s][..n],
                        HOW,
                        &mut rng,
                        wanted,
                        audience,
                    )?;
                }
                Ok(())
            }),
        };
        // The first step of each kind warms up.
        for (k, st) in steps.iter().enumerate().take(4) {
            take(&mut l, st, k).unwrap();
        }
        let before = ALLOCATIONS.load(Ordering::Relaxed);
        for (k, st) in steps.iter().enumerate().skip(4) {
            take(&mut l, st, k).unwrap();
        }
        let after = ALLOCATIONS.load(Ordering::Relaxed);
        assert_eq!(after - before, 0, "{rule:?}: allocations in 4 steps");
    }
}

fn bad_shapes_are_errors_that_change_nothing() {
    let width = |e: Result<StepReport, NetlistError>| match e {
        Err(NetlistError::Width {
            what,
            expected,
            got,
        }) => (what, expected, got),
        other => panic!("not a width error: {other:?}"),
    };
    let mut l = sharded(UpdateRule::Majority, 2);
    let before = l.params().to_vec();
    let st = step_data(0);
    let data = "data inputs (the shards' data words, shard after shard)";
    assert_eq!(
        width(l.step(&st.data[..DATA * 3], &st.labels, &st.valid)),
        (data, SHARDS * DATA, DATA * 3)
    );
    let valid = "valid masks (one per shard)";
    assert_eq!(
        width(l.step(&st.data, &st.labels, &st.valid[..3])),
        (valid, SHARDS, 3)
    );
    assert_eq!(
        width(l.step(&st.data, &st.labels[1..], &st.valid)),
        (
            "labels (the shards' outputs)",
            SHARDS * OUTPUTS,
            SHARDS * OUTPUTS - 1
        )
    );
    assert_eq!(
        width(l.step_masked(&st.data, &st.labels, &st.valid, Some(&st.masks[2..]))),
        (
            "output masks (the shards' outputs)",
            SHARDS * OUTPUTS,
            SHARDS * OUTPUTS - 2
        )
    );
    assert_eq!(
        width(l.step_by(&st.data, &st.valid[..3], |_, _, _, _| Ok(()))),
        (valid, SHARDS, 3)
    );
    assert_eq!(
        width(l.step_by_batch(&st.data[1..], &st.valid, |_| Ok(()))),
        (data, SHARDS * DATA, SHARDS * DATA - 1)
    );
    // A shard's targets refused: the first error in shard order, nothing flipped.
    let refused = l.step_by(&st.data, &st.valid, |s, _, _, _| {
        if s >= 2 {
            Err(NetlistError::Label {
                example: s,
                label: 7,
                classes: 3,
            })
        } else {
            Ok(())
        }
    });
    assert_eq!(
        refused,
        Err(NetlistError::Label {
            example: 2,
            label: 7,
            classes: 3
        })
    );
    assert_eq!(
        l.step_by_batch(&st.data, &st.valid, |_| Err(NetlistError::TooLarge)),
        Err(NetlistError::TooLarge)
    );
    assert_eq!(l.params(), before);
    // Predictions: not a whole number of words, or outputs for another number.
    let mut out = vec![0u64; 2 * OUTPUTS];
    assert!(matches!(
        l.predict(&st.data[..DATA + 1], &mut out[..OUTPUTS]),
        Err(NetlistError::Width { .. })
    ));
    assert!(matches!(
        l.predict(&st.data[..DATA], &mut out),
        Err(NetlistError::Width { .. })
    ));
    assert!(l.set_params(&before[1..]).is_err());
    // No shards.
    assert!(matches!(
        ShardedNetlistLearner::with_threads(learner::<u64>(UpdateRule::Xor), 0, 2),
        Err(NetlistError::Width {
            what: "shards (at least one)",
            ..
        })
    ));
    // The learner still steps as one that never saw the refusals.
    let mut fresh = sharded(UpdateRule::Majority, 1);
    for k in 0..3 {
        let st = step_data(k);
        assert_eq!(
            l.step(&st.data, &st.labels, &st.valid),
            fresh.step(&st.data, &st.labels, &st.valid)
        );
    }
    assert_eq!(l.params(), fresh.params());
}

fn a_panic_in_a_shard_reaches_the_caller_and_changes_nothing() {
    for rule in [UpdateRule::LocalMajority, UpdateRule::Majority] {
        let mut l = sharded(rule, 3);
        let mut fresh = sharded(rule, 1);
        let st = step_data(0);
        let caught = trials::expecting_panic("shard one", || {
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                l.step_by(&st.data, &st.valid, |s, _, wanted, _| {
                    wanted.copy_from_slice(&st.labels[s * OUTPUTS..(s + 1) * OUTPUTS]);
                    assert!(s != 1, "shard one");
                    Ok(())
                })
            }))
        });
        let msg = caught.unwrap_err();
        assert_eq!(msg.downcast_ref::<&str>(), Some(&"shard one"));
        for k in 0..6 {
            let st = step_data(k);
            assert_eq!(
                l.step(&st.data, &st.labels, &st.valid),
                fresh.step(&st.data, &st.labels, &st.valid),
                "{rule:?}, step {k}"
            );
        }
        assert_eq!(l.params(), fresh.params());
    }
}

fn main() -> std::process::ExitCode {
    trials::run_one_at_a_time(&[
        (
            "any_number_of_threads_gives_the_same_parameters_and_reports",
            any_number_of_threads_gives_the_same_parameters_and_reports,
        ),
        (
            "shards_step_as_one_learner_on_the_wide_word",
            shards_step_as_one_learner_on_the_wide_word,
        ),
        (
            "predictions_over_threads_are_one_threads",
            predictions_over_threads_are_one_threads,
        ),
        (
            "a_step_allocates_nothing_after_the_first",
            a_step_allocates_nothing_after_the_first,
        ),
        (
            "bad_shapes_are_errors_that_change_nothing",
            bad_shapes_are_errors_that_change_nothing,
        ),
        (
            "a_panic_in_a_shard_reaches_the_caller_and_changes_nothing",
            a_panic_in_a_shard_reaches_the_caller_and_changes_nothing,
        ),
    ])
}
