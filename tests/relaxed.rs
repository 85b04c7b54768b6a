//! The relaxed logic gate networks (`paralens::circuits::relaxed`): each relaxed gate is its
//! Boolean function at 0/1 inputs, the layer's and the head's reverse derivatives against
//! central finite differences, the input's change at 0/1 inputs against the Boolean
//! difference of the discrete gate, and the discretised circuit against the relaxation
//! where every gate is confident.

use paralens::circuits::Word;
use paralens::circuits::models::GroupVote;
use paralens::circuits::relaxed::{
    GroupSum, LogicLayer, NAMES, WalshLayer, bit, discretise, relaxed,
};
use paralens::prelude::*;
use rand::{Rng, SeedableRng, rngs::StdRng};

/// The exact table of function `k`.
fn table(k: usize) -> [f64; 4] {
    [(false, false), (true, false), (false, true), (true, true)]
        .map(|(a, b)| if bit(k, a, b) { 1.0 } else { 0.0 })
}

#[test]
fn each_relaxed_gate_is_its_function_at_0_1_inputs() {
    for (k, name) in NAMES.iter().enumerate() {
        for (a, b) in [(false, false), (true, false), (false, true), (true, true)] {
            let want = if bit(k, a, b) { 1.0 } else { 0.0 };
            let got = relaxed(table(k), f64::from(u8::from(a)), f64::from(u8::from(b)));
            assert_eq!(got, want, "{name} at ({a}, {b})");
        }
    }
    // The usual real-valued logic: a AND b = a b, a XOR b = a + b - 2 a b, a OR b = a + b - a b.
    let (a, b) = (0.3, 0.8);
    assert!((relaxed(table(8), a, b) - a * b).abs() < 1e-15);
    assert!((relaxed(table(6), a, b) - (a + b - 2.0 * a * b)).abs() < 1e-15);
    assert!((relaxed(table(14), a, b) - (a + b - a * b)).abs() < 1e-15);
}

/// Scores that make function `k[g]` of each gate certain to rounding (a margin of 60).
fn confident<const O: usize>(k: &[usize]) -> HeapMatrix<f64, 16, O> {
    HeapMatrix::from_fn(|f, g| if f == k[g] { 60.0 } else { 0.0 })
}

const I: usize = 6;
const O: usize = 8;
const B: usize = 3;

#[test]
fn the_layer_reverse_matches_finite_differences() {
    let layer = LogicLayer::<I, O, f64>::new(7);
    let mut rng = StdRng::seed_from_u64(3);
    let p: HeapMatrix<f64, 16, O> = HeapMatrix::from_fn(|_, _| rng.random_range(-1.5..1.5));
    let x: HeapMatrix<f64, I, B> = HeapMatrix::from_fn(|_, _| rng.random_range(0.05..0.95));
    let r: HeapMatrix<f64, O, B> = HeapMatrix::from_fn(|_, _| rng.random_range(-1.0..1.0));
    let score = |p: &HeapMatrix<f64, 16, O>, x: &HeapMatrix<f64, I, B>| {
        let y = layer.forward(p, x.clone());
        y.iter().zip(r.iter()).map(|(a, b)| a * b).sum::<f64>()
    };
    let (_, pull) = layer.vjp(&p, x.clone());
    let mut dp = HeapMatrix::<f64, 16, O>::zeros();
    let dx = pull(r.clone(), &mut dp);
    let h = 1e-6;
    let mut worst: f64 = 0.0;
    for i in 0..16 * O {
        let (mut a, mut b) = (p.clone(), p.clone());
        a.as_mut_slice()[i] += h;
        b.as_mut_slice()[i] -= h;
        let fd = (score(&a, &x) - score(&b, &x)) / (2.0 * h);
        worst = worst.max((fd - dp.as_slice()[i]).abs());
    }
    for i in 0..I * B {
        let (mut a, mut b) = (x.clone(), x.clone());
        a.as_mut_slice()[i] += h;
        b.as_mut_slice()[i] -= h;
        let fd = (score(&p, &a) - score(&p, &b)) / (2.0 * h);
        worst = worst.max((fd - dx.as_slice()[i]).abs());
    }
    assert!(
        worst < 1e-8,
        "largest difference from finite differences {worst}"
    );
    // vjp_params gives the same scores' change.
    let (_, pull) = layer.vjp_params(&p, x.clone());
    let mut dq = HeapMatrix::<f64, 16, O>::zeros();
    pull(r, &mut dq);
    assert_eq!(dq.as_slice(), dp.as_slice());
}

#[test]
fn the_head_reverse_matches_finite_differences() {
    let head = GroupSum::<O, 2, f64>::new(1.7);
    let mut rng = StdRng::seed_from_u64(5);
    let x: HeapMatrix<f64, O, B> = HeapMatrix::from_fn(|_, _| rng.random_range(0.0..1.0));
    let r: HeapMatrix<f64, 2, B> = HeapMatrix::from_fn(|_, _| rng.random_range(-1.0..1.0));
    let score = |x: &HeapMatrix<f64, O, B>| {
        let y = head.forward(&(), x.clone());
        y.iter().zip(r.iter()).map(|(a, b)| a * b).sum::<f64>()
    };
    let (y, pull) = head.vjp(&(), x.clone());
    assert!((y[(1, 0)] - (4..8).map(|g| x[(g, 0)]).sum::<f64>() / 1.7).abs() < 1e-15);
    let dx = pull(r.clone(), &mut ());
    for i in 0..O * B {
        let (mut a, mut b) = (x.clone(), x.clone());
        a.as_mut_slice()[i] += 1e-6;
        b.as_mut_slice()[i] -= 1e-6;
        let fd = (score(&a) - score(&b)) / 2e-6;
        assert!(
            (fd - dx.as_slice()[i]).abs() < 1e-8,
            "entry {i}: {fd} against {}",
            dx.as_slice()[i]
        );
    }
}

#[test]
fn at_0_1_inputs_the_change_is_the_boolean_difference() {
    // Every function, on gates reading inputs 0/1 in every combination: the change of the
    // first input is f(1, b) - f(0, b), whose absolute value is the Boolean difference
    // f(1, b) ^ f(0, b); of the second f(a, 1) - f(a, 0).
    let layer = LogicLayer::<2, 16, f64>::new(1);
    let k: Vec<usize> = (0..16).collect();
    let p = confident::<16>(&k);
    let x = HeapMatrix::<f64, 2, 4>::from_fn(|r, c| f64::from(u8::from((c >> r) & 1 == 1)));
    let (y, pull) = layer.vjp(&p, x.clone());
    for g in 0..16 {
        let [ia, ib] = layer.wires()[g];
        for c in 0..4 {
            let (a, b) = (x[(ia as usize, c)] == 1.0, x[(ib as usize, c)] == 1.0);
            assert!(
                (y[(g, c)] - f64::from(u8::from(bit(g, a, b)))).abs() < 1e-20,
                "{}",
                NAMES[g]
            );
        }
    }
    // One gate at a time: dy = 1 at gate g, column c.
    drop(pull);
    for (g, name) in NAMES.iter().enumerate() {
        for c in 0..4 {
            let (_, pull) = layer.vjp(&p, x.clone());
            let dy =
                HeapMatrix::<f64, 16, 4>::from_fn(|r, j| f64::from(u8::from(r == g && j == c)));
            let dx = pull(dy, &mut HeapMatrix::zeros());
            let [ia, ib] = layer.wires()[g];
            let (a, b) = (x[(ia as usize, c)] == 1.0, x[(ib as usize, c)] == 1.0);
            let f = |a: bool, b: bool| f64::from(u8::from(bit(g, a, b)));
            let (da, db) = (f(true, b) - f(false, b), f(a, true) - f(a, false));
            // The gate's two wires are distinct inputs.
            assert!((dx[(ia as usize, c)] - da).abs() < 1e-20, "{name}: d/da");
            assert!((dx[(ib as usize, c)] - db).abs() < 1e-20, "{name}: d/db");
        }
    }
}

#[test]
fn the_discrete_circuit_is_the_confident_relaxation() {
    const N: usize = 24;
    const H: usize = 40;
    const C: usize = 4;
    let model = LogicLayer::<N, H, f64>::new(11)
        .then(LogicLayer::<H, H, f64>::new(12))
        .then(GroupSum::<H, C, f64>::new(2.0));
    let mut rng = StdRng::seed_from_u64(9);
    let k1: Vec<usize> = (0..H).map(|_| rng.random_range(0..16)).collect();
    let k2: Vec<usize> = (0..H).map(|_| rng.random_range(0..16)).collect();
    let params = ((confident::<H>(&k1), confident::<H>(&k2)), ());
    let net = discretise(&model, &params, N).unwrap();
    assert_eq!((net.inputs(), net.outputs()), (N, H));
    // 64 examples of random bits, one per lane.
    let words: Vec<u64> = (0..N).map(|_| rng.random()).collect();
    let mut ev = net.evaluator::<u64>();
    let mut out = vec![0u64; H];
    net.forward(&mut ev, &words, &mut out).unwrap();
    let mut vote = GroupVote::<u64>::new(C, H / C);
    let mut classes = [0usize; 64];
    vote.predict(&out, &mut classes).unwrap();
    for (lane, &class) in classes.iter().enumerate() {
        let x = HeapMatrix::<f64, N, 1>::from_fn(|r, _| f64::from(u8::from(words[r].lane(lane))));
        let hidden = model.a.forward(&params.0, x.clone());
        for g in 0..H {
            let want = f64::from(u8::from(out[g].lane(lane)));
            assert!(
                (hidden[(g, 0)] - want).abs() < 1e-20,
                "lane {lane}, gate {g}"
            );
        }
        let scores = model.forward(&params, x);
        let best = (0..C).fold(0, |b, c| {
            if scores[(c, 0)] > scores[(b, 0)] {
                c
            } else {
                b
            }
        });
        assert_eq!(best, class, "lane {lane}");
    }
}

#[test]
fn a_relaxed_network_learns_with_the_library_learner() {
    // Two classes by parity of two bits (XOR), through one hidden layer: trained with Adam
    // on the relaxation, then discretised.
    const N: usize = 8;
    let model = LogicLayer::<N, 64, f32>::new(1)
        .then(LogicLayer::<64, 32, f32>::new(2))
        .then(GroupSum::<32, 2, f32>::new(2.0));
    let params = model.init(0);
    let mut learner = Learner::new(
        model,
        params,
        PerColumn(SoftmaxCrossEntropy),
        Adam::new(0.05),
    );
    let mut rng = StdRng::seed_from_u64(4);
    let example = |rng: &mut StdRng| {
        let bits: [bool; N] = core::array::from_fn(|_| rng.random());
        (bits, usize::from(bits[0] ^ bits[3]))
    };
    for _ in 0..400 {
        let batch: [([bool; N], usize); 16] = core::array::from_fn(|_| example(&mut rng));
        let x = HeapMatrix::<f32, N, 16>::from_fn(|r, c| f32::from(u8::from(batch[c].0[r])));
        learner.step(&x, &batch.map(|b| b.1));
    }
    let net = discretise(learner.model(), learner.params(), N).unwrap();
    let test: Vec<([bool; N], usize)> = (0..64).map(|_| example(&mut rng)).collect();
    let words: Vec<u64> = (0..N)
        .map(|r| (0..64).fold(0u64, |w, l| w | (u64::from(test[l].0[r]) << l)))
        .collect();
    let mut ev = net.evaluator::<u64>();
    let mut out = vec![0u64; 32];
    net.forward(&mut ev, &words, &mut out).unwrap();
    let mut classes = [0usize; 64];
    GroupVote::<u64>::new(2, 16)
        .predict(&out, &mut classes)
        .unwrap();
    let right = (0..64).filter(|&l| classes[l] == test[l].1).count();
    assert!(right >= 60, "the discrete circuit classifies {right} of 64");
}

/// The Walsh coefficients of function `k` with every corner's logit at +-30: corner `j`'s
/// logit is `w . [1, A, B, A B]` (`A = 2 a - 1`, `B = 2 b - 1`), an orthogonal transform with
/// `W^T W = 4 I`, so `w = W^T z / 4`.
fn walsh_of(k: usize) -> [f64; 4] {
    let corners = [(false, false), (true, false), (false, true), (true, true)];
    let basis = |(a, b): (bool, bool)| {
        let (sa, sb) = (if a { 1.0 } else { -1.0 }, if b { 1.0 } else { -1.0 });
        [1.0, sa, sb, sa * sb]
    };
    core::array::from_fn(|m| {
        corners
            .iter()
            .map(|&(a, b)| basis((a, b))[m] * if bit(k, a, b) { 30.0 } else { -30.0 })
            .sum::<f64>()
            / 4.0
    })
}

#[test]
fn the_walsh_layer_reverse_matches_finite_differences() {
    let layer = WalshLayer::<I, O, f64>::new(7);
    // The same seed, the same wiring as the 16-score layer.
    assert_eq!(layer.wires(), LogicLayer::<I, O, f64>::new(7).wires());
    let mut rng = StdRng::seed_from_u64(13);
    let p: HeapMatrix<f64, 4, O> = HeapMatrix::from_fn(|_, _| rng.random_range(-1.5..1.5));
    let x: HeapMatrix<f64, I, B> = HeapMatrix::from_fn(|_, _| rng.random_range(0.05..0.95));
    let r: HeapMatrix<f64, O, B> = HeapMatrix::from_fn(|_, _| rng.random_range(-1.0..1.0));
    let score = |p: &HeapMatrix<f64, 4, O>, x: &HeapMatrix<f64, I, B>| {
        let y = layer.forward(p, x.clone());
        y.iter().zip(r.iter()).map(|(a, b)| a * b).sum::<f64>()
    };
    let (_, pull) = layer.vjp(&p, x.clone());
    let mut dp = HeapMatrix::<f64, 4, O>::zeros();
    let dx = pull(r.clone(), &mut dp);
    let h = 1e-6;
    let mut worst: f64 = 0.0;
    for i in 0..4 * O {
        let (mut a, mut b) = (p.clone(), p.clone());
        a.as_mut_slice()[i] += h;
        b.as_mut_slice()[i] -= h;
        let fd = (score(&a, &x) - score(&b, &x)) / (2.0 * h);
        worst = worst.max((fd - dp.as_slice()[i]).abs());
    }
    for i in 0..I * B {
        let (mut a, mut b) = (x.clone(), x.clone());
        a.as_mut_slice()[i] += h;
        b.as_mut_slice()[i] -= h;
        let fd = (score(&p, &a) - score(&p, &b)) / (2.0 * h);
        worst = worst.max((fd - dx.as_slice()[i]).abs());
    }
    assert!(
        worst < 1e-8,
        "largest difference from finite differences {worst}"
    );
    assert!(
        dp.as_slice().iter().any(|&v| v.abs() > 1e-3),
        "a change of zero proves nothing"
    );
    let (_, pull) = layer.vjp_params(&p, x.clone());
    let mut dq = HeapMatrix::<f64, 4, O>::zeros();
    pull(r, &mut dq);
    assert_eq!(dq.as_slice(), dp.as_slice());
}

#[test]
fn a_confident_walsh_gate_is_its_function_relaxed_and_discretised() {
    // Gate g computes function g; on the four input combinations the relaxation gives the
    // function's value (to the sigmoid's rounding at 30) and the discretised circuit exactly.
    let layer = WalshLayer::<2, 16, f64>::new(1);
    let p = HeapMatrix::<f64, 4, 16>::from_fn(|m, g| walsh_of(g)[m]);
    let x = HeapMatrix::<f64, 2, 4>::from_fn(|r, c| f64::from(u8::from((c >> r) & 1 == 1)));
    let y = layer.forward(&p, x.clone());
    let net = discretise(&layer, &p, 2).unwrap();
    let words: Vec<u64> = (0..2)
        .map(|r| (0..4).fold(0u64, |w, c| w | (u64::from((c >> r) & 1 == 1) << c)))
        .collect();
    let mut ev = net.evaluator::<u64>();
    let mut out = vec![0u64; 16];
    net.forward(&mut ev, &words, &mut out).unwrap();
    for (g, name) in NAMES.iter().enumerate() {
        let [ia, ib] = layer.wires()[g];
        for c in 0..4 {
            let (a, b) = (x[(ia as usize, c)] == 1.0, x[(ib as usize, c)] == 1.0);
            let want = bit(g, a, b);
            assert!(
                (y[(g, c)] - f64::from(u8::from(want))).abs() < 1e-12,
                "{name} relaxed at ({a}, {b}): {}",
                y[(g, c)]
            );
            assert_eq!(out[g].lane(c), want, "{name} discretised at ({a}, {b})");
        }
    }
}

#[test]
fn a_walsh_network_learns_with_the_library_learner() {
    // The parity task of the 16-score network above, with 4 parameters a gate.
    const N: usize = 8;
    let model = WalshLayer::<N, 64, f32>::new(1)
        .then(WalshLayer::<64, 32, f32>::new(2))
        .then(GroupSum::<32, 2, f32>::new(2.0));
    let params = model.init(0);
    let mut learner = Learner::new(
        model,
        params,
        PerColumn(SoftmaxCrossEntropy),
        Adam::new(0.05),
    );
    let mut rng = StdRng::seed_from_u64(4);
    let example = |rng: &mut StdRng| {
        let bits: [bool; N] = core::array::from_fn(|_| rng.random());
        (bits, usize::from(bits[0] ^ bits[3]))
    };
    for _ in 0..400 {
        let batch: [([bool; N], usize); 16] = core::array::from_fn(|_| example(&mut rng));
        let x = HeapMatrix::<f32, N, 16>::from_fn(|r, c| f32::from(u8::from(batch[c].0[r])));
        learner.step(&x, &batch.map(|b| b.1));
    }
    let net = discretise(learner.model(), learner.params(), N).unwrap();
    let test: Vec<([bool; N], usize)> = (0..64).map(|_| example(&mut rng)).collect();
    let words: Vec<u64> = (0..N)
        .map(|r| (0..64).fold(0u64, |w, l| w | (u64::from(test[l].0[r]) << l)))
        .collect();
    let mut ev = net.evaluator::<u64>();
    let mut out = vec![0u64; 32];
    net.forward(&mut ev, &words, &mut out).unwrap();
    let mut classes = [0usize; 64];
    GroupVote::<u64>::new(2, 16)
        .predict(&out, &mut classes)
        .unwrap();
    let right = (0..64).filter(|&l| classes[l] == test[l].1).count();
    assert!(right >= 60, "the discrete circuit classifies {right} of 64");
}

#[allow(dead_code)]
#[path = "../examples/logic_mnist.rs"]
mod logic_mnist;

#[test]
fn the_example_learns_the_shipped_digits_and_its_circuit_agrees() {
    // A third of the example's epochs on one thread (the same result on two).
    let (train, test) = logic_mnist::digit_bits();
    let r = logic_mnist::run::<192, 1000, _>(
        logic_mnist::softmax_model::<192, 1000>(),
        (&train, &test),
        12,
        0.05,
        Some(1),
        false,
        &logic_mnist::Export::default(),
    );
    assert!(r.relaxed >= 0.85, "relaxed test accuracy {}", r.relaxed);
    assert!(r.discrete >= 0.85, "discrete test accuracy {}", r.discrete);
    assert!((r.relaxed - r.discrete).abs() <= 0.03, "{r:?}");
    assert!(r.gates <= 6000 && r.depth <= 6, "{r:?}");
}
