//! A training step allocates nothing after construction: proven with a counting global
//! allocator (counts are per thread, so the test harness's own threads do not interfere).

use paralens::prelude::*;
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

struct Counting;

thread_local! {
    static ALLOCATIONS: Cell<usize> = const { Cell::new(0) };
}

// SAFETY: every call is forwarded unchanged to the system allocator, which upholds the
// `GlobalAlloc` contract; the only addition is a thread-local counter (a const-initialised
// `Cell`, which itself never allocates).
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.with(|c| c.set(c.get() + 1));
        // SAFETY: same contract as ours, forwarded.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from `System.alloc` with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.with(|c| c.set(c.get() + 1));
        // SAFETY: forwarded with the caller's guarantees.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn allocations_during(f: impl FnOnce()) -> usize {
    let before = ALLOCATIONS.with(Cell::get);
    f();
    ALLOCATIONS.with(Cell::get) - before
}

fn iris_data() -> (Vec<SVector<f32, 4>>, Vec<usize>) {
    let d = paralens::data::iris();
    let xs = d
        .features
        .iter()
        .map(|r| SVector::<f32, 4>::from_fn(|j, _| r[j] as f32))
        .collect();
    (xs, d.labels)
}

#[test]
fn the_counter_sees_allocations() {
    // The instrument works: a Vec allocates.
    assert!(allocations_during(|| drop(std::hint::black_box(vec![1u8; 64]))) >= 1);
}

#[test]
fn iris_step_allocates_nothing() {
    let (xs, ys) = iris_data();
    let model = Dense::<4, 16>::new()
        .then(Relu)
        .then(Dense::<16, 3>::glorot());
    let mut adam = Learner::new(model, model.init(0), SoftmaxCrossEntropy, Adam::new(0.01));
    let mut nesterov = Learner::new(
        model,
        model.init(0),
        SoftmaxCrossEntropy,
        Nesterov::new(0.01, 0.9),
    );
    let n = allocations_during(|| {
        for (x, y) in xs.iter().zip(&ys) {
            std::hint::black_box(adam.step(x, y));
            std::hint::black_box(nesterov.step(x, y));
        }
    });
    assert_eq!(n, 0, "single-example steps allocated {n} times");
}

#[test]
fn iris_minibatch_step_allocates_nothing() {
    let (xs, ys) = iris_data();
    let model = Dense::<4, 16>::new()
        .then(Relu)
        .then(Dense::<16, 3>::glorot());
    let mut learner = Learner::new(
        model,
        model.init(0),
        SoftmaxCrossEntropy,
        AdamW::new(0.01, 0.01),
    );
    let n = allocations_during(|| {
        for start in (0..xs.len() - 32).step_by(32) {
            let loss = learner.step_batch::<32>(&xs[start..start + 32], &ys[start..start + 32]);
            std::hint::black_box(loss);
        }
        std::hint::black_box(learner.accuracy(&xs, &ys));
    });
    assert_eq!(n, 0, "minibatch steps allocated {n} times");
    // Refusing a bad batch does not allocate either.
    let n = allocations_during(|| {
        let e = learner.try_step_batch::<32>(&xs[..31], &ys[..31]);
        assert!(std::hint::black_box(e).is_err());
    });
    assert_eq!(n, 0);
}

#[test]
fn boolean_training_steps_allocate_nothing() {
    use paralens::circuits::models::{GroupVote, LookupTable, Softmax, gate_network};
    use paralens::circuits::netlist::NetlistLearner;
    use paralens::circuits::{BoolLearner, Lanes, UpdateRule, Word};
    use rand::{SeedableRng, rngs::StdRng};

    let lut = LookupTable::<4, 2, 16>;
    let mut learners: Vec<BoolLearner<_, [Lanes<2>; 4], Lanes<2>>> = [
        UpdateRule::Xor,
        UpdateRule::Majority,
        UpdateRule::TopK(3),
        UpdateRule::LocalMajority,
    ]
    .into_iter()
    .map(|r| BoolLearner::new(lut, [[Lanes::<2>::ZERO; 16]; 2], r))
    .collect();
    let x = [
        Lanes([0x0f0f, 7]),
        Lanes([0x3333, 1]),
        Lanes([0x5555, 0]),
        Lanes([u64::MAX, 9]),
    ];
    let y = [Lanes([0xff00, 3]), Lanes([0x1234, 5])];
    let net = gate_network(8, &[16, 4], 2, 1).unwrap();
    let mut nl =
        NetlistLearner::<u64>::new(net.netlist, net.params, UpdateRule::LocalMajority).unwrap();
    let data = [1u64, 2, 3, 4, 5, 6, 7, 8];
    // A classifier of 2 classes of 2 gates, its targets chosen from the outputs in the step.
    let net = gate_network(8, &[16, 4], 4, 2).unwrap();
    let mut classifier =
        NetlistLearner::<u64>::new(net.netlist, net.params, UpdateRule::LocalSignificant(1.0))
            .unwrap();
    let mut vote = GroupVote::<u64>::new(2, 2);
    let mut rng = StdRng::seed_from_u64(5);
    let how = Softmax {
        temperature: 1.0,
        share: 2,
    };
    let labels = [0u8, 1, 1, 0, 1];
    let n = allocations_during(|| {
        for l in &mut learners {
            std::hint::black_box(l.step(&x, &y, Lanes::ONES));
        }
        std::hint::black_box(nl.step(&data, &[9, 10], u64::MAX).unwrap());
        for _ in 0..3 {
            let r = classifier.step_by(&data, 0b11111, |out, wanted, audience| {
                vote.softmax_targets(out, &labels, how, &mut rng, wanted, audience)
            });
            std::hint::black_box(r.unwrap());
        }
    });
    assert_eq!(n, 0, "Boolean steps allocated {n} times");
}

#[test]
fn batched_steps_through_the_matrix_product_allocate_nothing() {
    use paralens::span::{Bias, Conv2d, MaxPool2d};
    // 16 examples per step as matrix columns: dense layers and a convolution through gemm,
    // whose packing buffers live on the stack.
    let mlp = Dense::<64, 32>::new()
        .then(Relu)
        .then(Dense::<32, 10>::glorot());
    let cnn = Conv2d::<f32, 64, 144, 36>::new::<1, 8, 8, 4, 3, 1, 0>()
        .then(Bias::<144>::new())
        .then(Relu)
        .then(MaxPool2d::<144, 36>::new::<4, 6, 6, 2, 2>())
        .then(Dense::<36, 10>::glorot());
    let mut a = Learner::new(
        mlp,
        mlp.init(0),
        PerColumn(SoftmaxCrossEntropy),
        Adam::new(0.01),
    );
    let mut b = Learner::new(
        cnn,
        cnn.init(0),
        PerColumn(SoftmaxCrossEntropy),
        Adam::new(0.01),
    );
    let x = SMatrix::<f32, 64, 16>::from_fn(|i, j| ((i * 7 + j * 3) % 17) as f32 / 17.0);
    let y: [usize; 16] = core::array::from_fn(|j| j % 10);
    let n = allocations_during(|| {
        for _ in 0..3 {
            std::hint::black_box(a.step(&x, &y));
            std::hint::black_box(b.step(&x, &y));
        }
    });
    assert_eq!(n, 0, "batched steps allocated {n} times");
}

// The MNIST examples' models, their batches and activations on the heap: the first step takes
// its blocks from the allocator, every later step reuses them from the pool.
#[allow(dead_code, clippy::duplicate_mod)]
#[path = "../examples/mnist_cnn.rs"]
mod mnist_cnn;
#[allow(dead_code, clippy::duplicate_mod)]
#[path = "../examples/mnist_lstm.rs"]
mod mnist_lstm;
#[allow(dead_code, clippy::duplicate_mod)]
#[path = "../examples/mnist_mlp.rs"]
mod mnist_mlp;

#[test]
fn mnist_steps_allocate_nothing_after_the_first() {
    const B: usize = mnist_mlp::BATCH;
    let x = HeapMatrix::<f32, 784, B>::from_fn(|i, j| ((i * 7 + j * 3) % 17) as f32 / 17.0);
    let y: [usize; B] = core::array::from_fn(|j| j % 10);
    let mlp = mnist_mlp::model();
    let mut a = Learner::new(
        mlp,
        mlp.init(0),
        PerColumn(SoftmaxCrossEntropy),
        Adam::new(1e-3),
    );
    let cnn = mnist_cnn::model();
    let p = cnn.init(0);
    let mut b = Learner::new(cnn, p, PerColumn(SoftmaxCrossEntropy), Adam::new(1e-3));
    // The first step fills the pool (and says so: it does allocate).
    let first = allocations_during(|| {
        std::hint::black_box(a.step(&x, &y));
        std::hint::black_box(b.step(&x, &y));
    });
    assert!(
        first > 0,
        "the first step takes its blocks from the allocator"
    );
    let n = allocations_during(|| {
        for _ in 0..3 {
            std::hint::black_box(a.step(&x, &y));
            std::hint::black_box(b.step(&x, &y));
            std::hint::black_box(a.predict(&x));
        }
    });
    assert_eq!(n, 0, "MNIST steps allocated {n} times after the first");
}

// The row LSTM on heap activations: its blocks (rows, states, gates, the loop's tape) come
// from the pool after the first step.
#[test]
fn mnist_lstm_steps_allocate_nothing_after_the_first() {
    let rows: mnist_lstm::Rows = core::array::from_fn(|t| {
        HeapMatrix::from_fn(|i, j| ((t * 7 + i * 3 + j) % 17) as f32 / 17.0)
    });
    let y: [usize; mnist_lstm::BATCH] = core::array::from_fn(|j| j % 10);
    let model = mnist_lstm::model();
    let mut l = Learner::new(
        model,
        model.init(0),
        PerColumn(SoftmaxCrossEntropy),
        Adam::new(1e-3),
    );
    let first = allocations_during(|| {
        std::hint::black_box(l.step(&rows, &y));
    });
    assert!(
        first > 0,
        "the first step takes its blocks from the allocator"
    );
    let n = allocations_during(|| {
        for _ in 0..2 {
            std::hint::black_box(l.step(&rows, &y));
            std::hint::black_box(l.predict(&rows));
        }
    });
    assert_eq!(n, 0, "LSTM steps allocated {n} times after the first");
}

para! {
    /// A recurrence unrolled by a differentiated loop: `h <- tanh(W h + x)`, eight steps,
    /// one dense layer shared by all of them, then a readout.
    pub struct Unrolled {
        cell: Dense<4, 4>,
        out: Dense<4, 3>,
    }
    fn forward(&self, x: SVector<f32, 4>) -> SVector<f32, 3> {
        let mut h = x;
        for _ in 0..8 {
            let z = self.cell(h) + x;
            h = z.map(tanh);
        }
        self.out(h)
    }
}

#[test]
fn a_step_through_a_differentiated_loop_allocates_nothing() {
    let (xs, ys) = iris_data();
    let model = Unrolled {
        cell: Dense::new(),
        out: Dense::new(),
    };
    let mut learner = Learner::new(model, model.init(0), SoftmaxCrossEntropy, Adam::new(0.01));
    let total = |l: &Learner<_, _, _, _>| -> f32 {
        xs.iter()
            .zip(&ys)
            .map(|(x, y)| l.try_loss(x, y).unwrap())
            .sum()
    };
    let first = total(&learner);
    // The first step takes the loop tape's block from the per-thread pool; later steps
    // recycle it.
    learner.step(&xs[0], &ys[0]);
    let n = allocations_during(|| {
        for _ in 0..3 {
            for (x, y) in xs.iter().zip(&ys) {
                std::hint::black_box(learner.step(x, y));
            }
        }
    });
    assert_eq!(n, 0, "steps through the loop allocated {n} times");
    // And the loop's reverse trains the shared cell: the loss went down.
    let last = total(&learner);
    assert!(last < first, "loss {first} -> {last}");
}

para! {
    /// An LSTM reading four rows of a 16-pixel image, then a readout.
    pub struct LstmRows {
        cell: paralens::recurrent::LstmCell<4, 8, f32>,
        out: Dense<8, 3>,
    }
    fn forward(&self, rows: [SVector<f32, 4>; 4]) -> SVector<f32, 3> {
        let mut h = SVector::<f32, 8>::zeros();
        let mut c = SVector::<f32, 8>::zeros();
        for t in 0..4 {
            let (h2, c2) = self.cell(rows[t], h, c);
            h = h2;
            c = c2;
        }
        self.out(h)
    }
}

#[test]
fn a_recurrent_training_step_allocates_nothing() {
    let model = LstmRows {
        cell: paralens::recurrent::LstmCell::new(),
        out: Dense::new(),
    };
    let mut learner = Learner::new(model, model.init(0), SoftmaxCrossEntropy, Adam::new(0.01));
    let rows: [SVector<f32, 4>; 4] =
        core::array::from_fn(|t| SVector::<f32, 4>::from_fn(|i, _| ((t * 4 + i) as f32).sin()));
    learner.step(&rows, &1);
    let n = allocations_during(|| {
        for k in 0..50 {
            std::hint::black_box(learner.step(&rows, &(k % 3)));
        }
    });
    assert_eq!(n, 0, "LSTM steps allocated {n} times");
}

#[test]
fn gan_steps_allocate_nothing() {
    use paralens::gan::Adversarial;
    use paralens::optim::RmsProp;
    let g = Dense::<4, 16>::new().then(Relu).then(Dense::<16, 2>::new());
    let d = Dense::<2, 16>::new().then(Relu).then(Dense::<16, 1>::new());
    let mut gan = Adversarial::new(g, d, RmsProp::new(1e-3), RmsProp::new(1e-3), 0.1, 0);
    let z = SMatrix::<f32, 4, 32>::from_fn(|i, j| ((i * 32 + j) as f32 * 0.37).sin());
    let real = SMatrix::<f32, 2, 32>::from_fn(|i, j| ((i * 32 + j) as f32 * 0.91).cos());
    gan.step(z, real).unwrap();
    let n = allocations_during(|| {
        for _ in 0..5 {
            std::hint::black_box(gan.step_critic(z, real).unwrap());
            std::hint::black_box(gan.step(z, real).unwrap());
        }
    });
    assert_eq!(n, 0, "GAN steps allocated {n} times");
}

/// A layer written with `#[lens]` on heap matrices: the product and its two reverse
/// products in pooled blocks.
#[lens]
fn heap_layer_loss(w: HeapMatrix<f32, 64, 200>, #[nodiff] x: HeapMatrix<f32, 200, 32>) -> f32 {
    (w * x).norm_squared()
}

#[test]
fn a_heap_product_in_a_lens_allocates_nothing_after_the_first() {
    let mut w = HeapMatrix::<f32, 64, 200>::from_fn(|i, j| ((i * 200 + j) as f32 * 0.01).sin());
    let x = HeapMatrix::<f32, 200, 32>::from_fn(|i, j| ((i + 3 * j) as f32 * 0.02).cos());
    let step = |w: &mut HeapMatrix<f32, 64, 200>| {
        let dw = heap_layer_loss_rev(w.clone(), x.clone(), 1.0);
        for (a, b) in w.as_mut_slice().iter_mut().zip(dw.as_slice()) {
            *a -= 1e-6 * b;
        }
    };
    let first = heap_layer_loss(w.clone(), x.clone());
    // The first call fills the per-thread pool; later ones recycle its blocks.
    step(&mut w);
    let n = allocations_during(|| {
        for _ in 0..3 {
            step(&mut w);
        }
    });
    assert_eq!(
        n, 0,
        "the heap product's forward and reverse allocated {n} times"
    );
    let last = heap_layer_loss(w.clone(), x.clone());
    assert!(last < first, "loss {first} -> {last}");
}

#[test]
fn a_relaxed_logic_network_step_allocates_nothing_after_the_first() {
    use paralens::circuits::relaxed::{GroupSum, LogicLayer, WalshLayer};
    // Both gate forms: 16 scores, then 4 Walsh coefficients a gate.
    let model = LogicLayer::<12, 40, f32>::new(1)
        .then(WalshLayer::<40, 20, f32>::new(2))
        .then(GroupSum::<20, 2, f32>::new(1.0));
    let params = model.init(0);
    let mut learner = Learner::new(
        model,
        params,
        PerColumn(SoftmaxCrossEntropy),
        Adam::new(0.01),
    );
    let x = HeapMatrix::<f32, 12, 8>::from_fn(|r, c| ((r + c) % 2) as f32);
    let y: [usize; 8] = core::array::from_fn(|c| c % 2);
    learner.step(&x, &y);
    let n = allocations_during(|| {
        for _ in 0..5 {
            std::hint::black_box(learner.step(&x, &y));
        }
    });
    assert_eq!(n, 0, "allocations in 5 steps");
}
