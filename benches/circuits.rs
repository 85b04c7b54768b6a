//! Boolean circuits: the netlist interpreters and a training step on an 8-layer network of
//! 1024 learned gates per layer, for lanes of 1, 4 and 8 words; Iris end to end.
//! Throughput is in example-gate evaluations (examples per value x gates).

use criterion::{BenchmarkId, Criterion, Throughput};
use paralens::circuits::models::{gate_network, random_tables};
use paralens::circuits::netlist::NetlistLearner;
use paralens::circuits::{Lanes, UpdateRule, Word};
use std::hint::black_box;

const INPUTS: usize = 256;
const LAYERS: [usize; 8] = [1024; 8];

fn data<const W: usize>() -> (Vec<Lanes<W>>, Vec<Lanes<W>>) {
    let mut s = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s
    };
    let x = (0..INPUTS)
        .map(|_| Lanes(core::array::from_fn(|_| next())))
        .collect();
    let y = (0..10)
        .map(|_| Lanes(core::array::from_fn(|_| next())))
        .collect();
    (x, y)
}

fn width<const W: usize>(c: &mut Criterion) {
    let net = gate_network(INPUTS, &LAYERS, 10, 1).expect("valid shape");
    let (x, y) = data::<W>();
    // Each learned gate is 3 MUX gates in the netlist; count learned gates as the paper does.
    let learned: u64 = LAYERS.iter().sum::<usize>() as u64;
    let mut g = c.benchmark_group("gate_network_8x1024");
    g.throughput(Throughput::Elements(learned * 64 * W as u64));
    let mut l =
        NetlistLearner::<Lanes<W>>::new(net.netlist.clone(), net.params, UpdateRule::Majority)
            .expect("params fit");
    l.set_params(&random_tables(net.params, 2))
        .expect("sizes match");
    let mut out = vec![Lanes::<W>::ZERO; 10];
    g.bench_function(BenchmarkId::new("forward", format!("lanes{W}")), |b| {
        b.iter(|| l.predict(black_box(&x), &mut out).expect("sizes match"))
    });
    let netlist = &net.netlist;
    let mut ev = netlist.evaluator::<Lanes<W>>();
    let mut inputs = vec![Lanes::<W>::ZERO; netlist.inputs()];
    inputs[net.params..].copy_from_slice(&x);
    let mut o2 = vec![Lanes::<W>::ZERO; 10];
    netlist
        .forward(&mut ev, &inputs, &mut o2)
        .expect("sizes match");
    let mut d_in = vec![Lanes::<W>::ZERO; netlist.inputs()];
    g.bench_function(BenchmarkId::new("reverse", format!("lanes{W}")), |b| {
        b.iter(|| {
            netlist
                .reverse(&mut ev, black_box(&y), &mut d_in)
                .expect("sizes match")
        })
    });
    g.bench_function(BenchmarkId::new("train_step", format!("lanes{W}")), |b| {
        b.iter(|| l.step(black_box(&x), &y, Lanes::ONES).expect("sizes match"))
    });
    g.finish();
}

/// The ten-digit MNIST classifier of `circuits_mnist` (326 pixel bits, 128000 hidden gates,
/// 2000 output gates per digit) on a batch of 1024 random images: the forward pass, the
/// softmax targets alone, and a whole step (forward, targets, the two reverse sweeps, the
/// vote).
fn ten_digit_classifier(c: &mut Criterion) {
    use paralens::circuits::models::{GroupVote, Softmax};
    use rand::{Rng, SeedableRng, rngs::StdRng};
    type L16 = Lanes<16>;
    let (pixels, hidden, group) = (326, 128_000, 2000);
    let net = gate_network(pixels, &[hidden, 10 * group], 10 * group, 1).expect("valid shape");
    let mut rng = StdRng::seed_from_u64(9);
    let x: Vec<L16> = (0..pixels)
        .map(|_| Lanes(core::array::from_fn(|_| rng.random())))
        .collect();
    let labels: Vec<u8> = (0..L16::LANES).map(|_| rng.random_range(0..10)).collect();
    let mut l =
        NetlistLearner::<L16>::new(net.netlist, net.params, UpdateRule::LocalSignificant(2.0))
            .expect("params fit");
    l.set_params(&random_tables(net.params, 2))
        .expect("sizes match");
    let mut vote = GroupVote::<L16>::new(10, group);
    let how = Softmax {
        temperature: 60.0,
        share: 16,
    };
    let mut g = c.benchmark_group("ten_digit_classifier");
    g.throughput(Throughput::Elements(
        ((hidden + 10 * group) * L16::LANES) as u64,
    ));
    let mut out = vec![L16::ZERO; 10 * group];
    g.bench_function("forward", |b| {
        b.iter(|| l.predict(black_box(&x), &mut out).expect("sizes match"))
    });
    let (mut wanted, mut audience) = (out.clone(), out.clone());
    g.bench_function("softmax_targets", |b| {
        b.iter(|| {
            vote.softmax_targets(&out, &labels, how, &mut rng, &mut wanted, &mut audience)
                .expect("sizes match")
        })
    });
    g.bench_function("train_step", |b| {
        b.iter(|| {
            l.step_by(black_box(&x), L16::ONES, |out, wanted, audience| {
                vote.softmax_targets(out, &labels, how, &mut rng, wanted, audience)
            })
            .expect("sizes match")
        })
    });
    g.finish();
}

#[allow(dead_code)]
#[path = "../examples/circuits_iris.rs"]
mod circuits_iris;

pub fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("circuits_iris_end_to_end");
    g.throughput(Throughput::Elements(75));
    // Data loading and encoding included: parse the CSV, binarise, learn, test.
    g.bench_function("anchor_three_class", |b| {
        b.iter(|| {
            circuits_iris::anchor::<2>(
                &paralens::data::iris_uci(),
                black_box(&[0, 1, 2]),
                circuits_iris::Labels::Binary,
            )
        })
    });
    g.bench_function("vote_three_class", |b| {
        b.iter(|| {
            circuits_iris::vote::<2>(
                &paralens::data::iris_uci(),
                black_box(&[0, 1, 2]),
                circuits_iris::Labels::Binary,
            )
        })
    });
    g.finish();
    width::<1>(c);
    width::<4>(c);
    width::<8>(c);
    ten_digit_classifier(c);
}
