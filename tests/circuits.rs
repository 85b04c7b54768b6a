//! `#[lens]` over Z2 words and lanes against the netlist interpreter and the oracle: the
//! same small circuits, written both ways, have the same reverse derivative.

use paralens::circuits::rules::{mux, mux_lens_vjp, nand, nand_lens_vjp};
use paralens::circuits::{Lanes, Netlist, NetlistBuilder, Word};
use paralens::prelude::*;

type L4 = Lanes<4>;

/// Majority of three (not read-once: a and b are read twice).
#[lens]
fn majority(a: L4, b: L4, c: L4) -> L4 {
    (a & b) | (c & (a ^ b))
}

fn majority_net() -> Netlist {
    let mut n = NetlistBuilder::new(3);
    let ab = n.and(0, 1);
    let x = n.xor(0, 1);
    let cx = n.and(2, x);
    let y = n.or(ab, cx);
    n.output(y);
    n.build().unwrap()
}

/// MUX and NAND through their `_vjp` rules, on plain words.
#[lens]
fn gadget(s: u64, a: u64, b: u64, c: u64) -> u64 {
    let m = mux(s, a, b);
    nand(m, c) ^ !s
}

fn gadget_net() -> Netlist {
    let mut n = NetlistBuilder::new(4);
    let m = n.mux(0, 1, 2);
    let k = n.nand(m, 3);
    let ns = n.not(0);
    let y = n.xor(k, ns);
    n.output(y);
    n.build().unwrap()
}

fn lanes(seed: u64) -> L4 {
    let mut x = seed | 1;
    Lanes(core::array::from_fn(|_| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    }))
}

#[test]
fn lens_and_netlist_agree_on_lanes() {
    let (a, b, c, d) = (lanes(1), lanes(2), lanes(3), lanes(4));
    let net = majority_net();
    let mut ev = net.evaluator::<L4>();
    let mut out = [L4::ZERO];
    net.forward(&mut ev, &[a, b, c], &mut out).unwrap();
    assert_eq!(out[0], majority(a, b, c));
    let mut dx = [L4::ZERO; 3];
    net.reverse(&mut ev, &[d], &mut dx).unwrap();
    let (da, db, dc) = majority_rev(a, b, c, d);
    assert_eq!(dx, [da, db, dc]);
}

#[test]
fn mux_and_nand_rules_agree_with_the_netlist() {
    let w = |k: u64| lanes(k).0[0];
    let (s, a, b, c, d) = (w(5), w(6), w(7), w(8), w(9));
    let net = gadget_net();
    let mut ev = net.evaluator::<u64>();
    let mut out = [0u64];
    net.forward(&mut ev, &[s, a, b, c], &mut out).unwrap();
    assert_eq!(out[0], gadget(s, a, b, c));
    let mut dx = [0u64; 4];
    net.reverse(&mut ev, &[d], &mut dx).unwrap();
    let (ds, da, db, dc) = gadget_rev(s, a, b, c, d);
    assert_eq!(dx, [ds, da, db, dc]);
}

#[test]
fn majority_is_not_read_once_and_differs_from_the_boolean_difference() {
    // At a = b = 1, c = 0 the Boolean difference in c is 0 (majority stays 1 whatever c is)
    // and so is the circuit's: c & (a ^ b) is c & 0. At a = 1, b = 0 both say d.
    let one = L4::ONES;
    let zero = L4::ZERO;
    assert_eq!(majority_rev(one, one, zero, one).2, zero);
    assert_eq!(majority_rev(one, zero, zero, one).2, one);
    // In a, at a = 1, b = 1, c = 1: the Boolean difference is 0 (b and c still agree), but
    // the circuit's reverse is b&d ^ (!cx & ... ) -- compute both and show they differ.
    let (da, _, _) = majority_rev(one, one, one, one);
    let f = |x: u64| {
        let bit = |i: u32| {
            if (x >> i) & 1 == 1 {
                L4::ONES
            } else {
                L4::ZERO
            }
        };
        u64::from(majority(bit(0), bit(1), bit(2)).lane(0))
    };
    let oracle = paralens::circuits::oracle::boolean_reverse(f, 3, 0b111, 1);
    assert_eq!(
        oracle & 1,
        0,
        "flipping a alone does not change the majority"
    );
    // The circuit: (a&b) | (c&(a^b)); reverse in a through OR then AND and XOR:
    // !(c&(a^b)) & b & d  ^  !(a&b) & c & d  =  1 ^ 0 = 1.
    assert_eq!(
        da, one,
        "the circuit's reverse derivative is 1 here, not the Boolean difference"
    );
}

#[allow(dead_code)]
#[path = "../examples/circuits_iris.rs"]
mod circuits_iris;

#[test]
fn iris_anchor_protocol_reproduces_the_published_figures_and_the_vote_beats_it() {
    use circuits_iris::{Labels, anchor, anchor_runs, vote};
    let permille = |a: f64| (a * 1000.0).round();
    // The published figures, on the data the anchor read (UCI's iris.data): 98.0% on two
    // classes with both label encodings, 73.3% on three.
    let uci = paralens::data::iris_uci();
    assert_eq!(
        anchor_runs(&uci).map(permille),
        [980.0, 980.0, 733.0, 733.0]
    );
    // On Fisher's corrected data one test flower (UCI's sample 38) is encoded differently.
    let fisher = paralens::data::iris();
    assert_eq!(
        anchor_runs(&fisher).map(permille),
        [980.0, 980.0, 747.0, 747.0]
    );
    // The vote rule reaches the bar of 80% on three classes (81.3% is the ceiling
    // of the encoding), and beats the single-example rule.
    for data in [&uci, &fisher] {
        assert!(vote::<2>(data, &[0, 1, 2], Labels::Binary) >= 0.80);
        assert!(vote::<3>(data, &[0, 1, 2], Labels::OneHot) >= 0.80);
        assert!(
            anchor::<2>(data, &[0, 1, 2], Labels::Binary)
                < vote::<2>(data, &[0, 1, 2], Labels::Binary)
        );
    }
}

mod rings {
    use paralens::circuits::ring::{Sat, Z2k, Zp};
    use paralens::prelude::*;

    type F7 = Zp<7>;

    // f(x) = x^3 + 2x over Z_7; its reverse derivative is the formal derivative 3x^2 + 2.
    #[lens]
    fn cubic(x: F7) -> F7 {
        let x2 = x * x;
        x2 * x + F7::new(2) * x
    }

    // Over Z_256: f(x, y) = x y + x^2 - y; reverse (y + 2x, x - 1) times d, wrapping.
    #[lens]
    fn wrap(x: Z2k<u8>, y: Z2k<u8>) -> Z2k<u8> {
        x * y + x * x - y
    }

    // In the saturating semiring {0..=100}: f(x, y) = x y + x; reverse (y d + d, x d).
    // The lens type would be `Sat`, which is taken: name it.
    #[lens(name = SatLens)]
    fn sat(x: Sat<100>, y: Sat<100>) -> Sat<100> {
        x * y + x
    }

    #[test]
    fn polynomial_reverse_is_the_formal_derivative_in_every_ring() {
        for v in 0..7 {
            let x = F7::new(v);
            let want = F7::new(3) * x * x + F7::new(2);
            assert_eq!(cubic_rev(x, F7::new(1)), want, "x = {v}");
            assert_eq!(cubic_rev(x, F7::new(3)), want * F7::new(3));
        }
        for (a, b) in [(3u8, 250u8), (200, 7), (0, 0), (255, 255)] {
            let (x, y) = (Z2k(a), Z2k(b));
            let d = Z2k(5);
            assert_eq!(wrap_rev(x, y, d), ((y + x + x) * d, (x - Z2k(1)) * d));
        }
        let (x, y, d) = (Sat::<100>::new(6), Sat::new(30), Sat::new(2));
        assert_eq!(sat_rev(x, y, d), (Sat::new(62), Sat::new(12)));
        assert_eq!(sat_rev(x, y, Sat::new(50)).0, Sat::new(100)); // capped
        assert_eq!(paralens::Lens::apply(&SatLens, (x, y)), sat(x, y));
    }
}

#[allow(dead_code)]
#[path = "../examples/circuits_mnist.rs"]
mod circuits_mnist;

#[allow(dead_code)]
#[path = "../examples/ring_learning.rs"]
mod ring_learning;

#[test]
fn a_z7_table_is_learned_by_reverse_derivative_steps() {
    let (w, wrong) = ring_learning::learn([3, 5, 0, 6]);
    assert_eq!(w.map(paralens::circuits::ring::Zp::value), [3, 5, 0, 6]);
    // From zero three entries are wrong; each step fixes the entry its example selects
    // (entry 2 is already 0, so step 3 changes nothing).
    assert_eq!(wrong, [2, 1, 1, 0]);
}

#[test]
fn copy_discard_and_constant_follow_their_z2_rules() {
    use paralens::circuits::rules::{constant_vjp, copy_vjp, discard_vjp, mux_rev, nand_rev};
    let (x, d1, d2) = (0b1100u64, 0b1010u64, 0b0110u64);
    // copy: (x, x), reverse d1 ^ d2 (changes add in Z2)
    let (y, pull) = copy_vjp(x);
    assert_eq!((y, pull((d1, d2))), ((x, x), d1 ^ d2));
    // discard: (), reverse 0
    let ((), pull) = discard_vjp(x);
    assert_eq!(pull(()), 0);
    // constant: no input
    let (c, pull) = constant_vjp(x);
    assert_eq!(c, x);
    pull(d1);
    // NAND and MUX against the Boolean difference on every lane (both read-once).
    let f_nand = |v: u64| !((v & 1) & ((v >> 1) & 1)) & 1;
    let f_mux = |v: u64| {
        if v & 1 == 1 {
            (v >> 1) & 1
        } else {
            (v >> 2) & 1
        }
    };
    for v in 0..8u64 {
        let bit = |i: u32| if (v >> i) & 1 == 1 { u64::MAX } else { 0 };
        let (ds, da) = nand_rev(bit(0), bit(1), u64::MAX);
        let want = paralens::circuits::oracle::boolean_reverse(f_nand, 2, v & 3, 1);
        assert_eq!((ds & 1) | ((da & 1) << 1), want);
        let (ds, da, db) = mux_rev(bit(0), bit(1), bit(2), u64::MAX);
        let want = paralens::circuits::oracle::boolean_reverse(f_mux, 3, v, 1);
        assert_eq!((ds & 1) | ((da & 1) << 1) | ((db & 1) << 2), want);
    }
}

/// One pass of any learner over its data: the shape the smooth and Boolean learners share
/// (`D` holds an input: the input itself, or a vector of the netlist learner's data words).
fn epoch<L, X, D>(learner: &mut L, data: &[(D, L::Target)]) -> Vec<L::Report>
where
    L: paralens::Learn<X>,
    X: ?Sized,
    D: std::borrow::Borrow<X>,
{
    data.iter()
        .map(|(x, t)| learner.learn(x.borrow(), t).expect("a valid step"))
        .collect()
}

#[test]
fn one_training_loop_drives_the_smooth_and_the_boolean_learner() {
    use paralens::Learn;
    use paralens::circuits::models::LookupTable;
    use paralens::circuits::{BoolLearner, UpdateRule};
    use paralens::prelude::*;
    // Boolean: a table over two bits learns XOR in one pass of the anchor rule (one example
    // per step, in lane 0).
    let bits = |v: bool| if v { u64::MAX } else { 0 };
    // (input bits, (wanted output bits, lanes holding examples))
    type Example = ([u64; 2], ([u64; 1], u64));
    let table: Vec<Example> = (0..4)
        .map(|i| {
            let (a, b) = (i & 1 == 1, i & 2 == 2);
            ([bits(a), bits(b)], ([bits(a ^ b)], 1))
        })
        .collect();
    let mut boolean = BoolLearner::new(LookupTable::<2, 1, 4>, [[0u64; 4]; 1], UpdateRule::Xor);
    let reports = epoch(&mut boolean, &table);
    assert_eq!(
        reports.iter().map(|r| r.wrong_bits).sum::<u32>(),
        2,
        "wrong where XOR is 1"
    );
    for (x, (y, _)) in &table {
        assert_eq!(boolean.output(x)[0] & 1, y[0] & 1);
    }
    assert!(
        epoch(&mut boolean, &table)
            .iter()
            .all(|r| r.wrong_bits == 0)
    );
    // Smooth: the same loop fits a line.
    let model = Dense::<1, 1, f64>::new();
    let mut smooth = Learner::new(model, model.init(0), Mse, Sgd::new(0.2));
    let line: Vec<_> = (0..8)
        .map(|i| {
            let x = f64::from(i) / 8.0;
            (
                SVector::<f64, 1>::new(x),
                SVector::<f64, 1>::new(2.0 * x - 1.0),
            )
        })
        .collect();
    for _ in 0..300 {
        epoch(&mut smooth, &line);
    }
    assert!(epoch(&mut smooth, &line).iter().all(|&l| l < 1e-6));
    // Netlist: a learned gate from data words, the same loop. Four parameter bits (a
    // two-input gate's truth table), two data bits, AND of the data as the target: one
    // vote-rule pass over the four cases (64 copies of each in a word) learns the table.
    use paralens::circuits::NetlistBuilder;
    use paralens::circuits::netlist::{NetlistLearner, NetlistTarget};
    let mut b = NetlistBuilder::new(6);
    let y = b.lut2(4, 5, 0);
    b.output(y);
    let net = b.build().expect("a valid netlist");
    let mut gates = NetlistLearner::<u64>::new(net, 4, UpdateRule::Majority).expect("4 params");
    let cases: Vec<(Vec<u64>, NetlistTarget<u64>)> = (0..4)
        .map(|i| {
            let (a, c) = (i & 1 == 1, i & 2 == 2);
            let target = NetlistTarget {
                labels: vec![bits(a && c)],
                valid: u64::MAX,
            };
            (vec![bits(a), bits(c)], target)
        })
        .collect();
    let first = epoch::<_, [u64], _>(&mut gates, &cases);
    assert_eq!(
        first.iter().map(|r| r.flipped).sum::<usize>(),
        1,
        "one table bit to set"
    );
    for (x, t) in &cases {
        assert_eq!(gates.output(x).expect("two data words"), t.labels);
    }
    assert!(
        epoch::<_, [u64], _>(&mut gates, &cases)
            .iter()
            .all(|r| r.wrong_bits == 0)
    );
}

#[test]
fn counted_flip_requests_equal_the_oracle_and_skipped_gates_lose_nothing() {
    use paralens::circuits::models::gate_network;
    use paralens::circuits::oracle::boolean_reverse;
    // One layer of 4 learned gates over 3 data bits: each of the 16 table bits is read by
    // one gate, which is one output, so the compositional reverse derivative in the table
    // bits is the exact one. Output changes with zero bits make the sweep skip gates.
    let net = gate_network(3, &[4], 4, 7).unwrap();
    let (nl, params) = (&net.netlist, net.params);
    let n = nl.inputs() as u32;
    let words = |x: u64| {
        (0..n)
            .map(|i| if x >> i & 1 == 1 { u64::MAX } else { 0 })
            .collect::<Vec<_>>()
    };
    let f = |x: u64| {
        let mut ev = nl.evaluator::<u64>();
        let mut out = [0u64; 4];
        nl.forward(&mut ev, &words(x), &mut out).unwrap();
        out.iter()
            .enumerate()
            .fold(0, |acc, (o, w)| acc | (w & 1) << o)
    };
    let mut ev = nl.evaluator::<u64>();
    let mut counts = vec![0u32; params];
    let mut out = [0u64; 4];
    for x in (0..1u64 << n).step_by(97) {
        nl.forward(&mut ev, &words(x), &mut out).unwrap();
        for d in 0..16u64 {
            let dw: Vec<u64> = (0..4).map(|o| d >> o & 1).collect();
            nl.reverse_counts(&mut ev, &dw, &mut counts).unwrap();
            let want = boolean_reverse(f, n, x, d);
            for (p, &c) in counts.iter().enumerate() {
                assert_eq!(
                    u64::from(c),
                    want >> p & 1,
                    "x {x:b}, d {d:b}, table bit {p}"
                );
            }
        }
    }
}

// Found by a bad-input prober: each was a panic deep inside (a random range of no wires, an
// overflowing sum, `k - 1` with no parameters, a shift past 63) where an error or a stated
// panic belongs.
#[test]
fn gate_networks_refuse_widths_they_cannot_wire() {
    use paralens::circuits::models::gate_network;
    // A layer of one gate feeding another layer: the next gate has no second wire to read.
    let e = gate_network(8, &[1, 2], 1, 0).expect_err("refused");
    assert!(e.to_string().contains("at least two"), "{e}");
    // The last layer may be one gate (one output).
    assert!(gate_network(8, &[4, 1], 1, 0).is_ok());
    for layers in [
        &[usize::MAX, 2][..],
        &[usize::MAX / 2],
        &[usize::MAX / 4 + 1],
    ] {
        let e = gate_network(8, layers, 1, 0).expect_err("refused");
        assert!(
            matches!(e, paralens::circuits::NetlistError::TooLarge),
            "{e}"
        );
    }
}

#[test]
fn top_k_with_no_parameters_flips_nothing() {
    use paralens::circuits::NetlistBuilder;
    use paralens::circuits::netlist::NetlistLearner;
    let mut b = NetlistBuilder::new(2);
    let y = b.and(0, 1);
    b.output(y);
    let rule = paralens::circuits::UpdateRule::TopK(3);
    let mut l = NetlistLearner::<u64>::new(b.build().unwrap(), 0, rule).unwrap();
    let r = l.step(&[u64::MAX, 0], &[u64::MAX], u64::MAX).unwrap();
    assert_eq!(r.flipped, 0);
}

#[test]
#[should_panic(expected = "a midpoint code of 65 bits does not fit a u64")]
fn a_midpoint_code_wider_than_a_word_is_refused() {
    let b = paralens::circuits::binarise::Midpoint::<65>::fit(&[[0.0; 65], [1.0; 65]]);
    let _ = b.encode(&[0.7; 65]);
}

// A data folder with fewer training images than the experiments hold out: an error naming the
// folder, where `n - 5000` and `len - 1000` underflowed into a panic inside the image reader.
#[test]
fn mnist_circuits_on_too_few_images_is_an_error() {
    use flate2::{Compression, write::GzEncoder};
    use std::io::Write;
    let dir = std::env::temp_dir().join(format!("paralens-small-mnist-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let n = 64u32;
    let mut images = vec![0, 0, 8, 3];
    for d in [n, 28, 28] {
        images.extend_from_slice(&d.to_be_bytes());
    }
    images.extend((0..n as usize * 784).map(|i| (i % 256) as u8));
    let mut labels = vec![0, 0, 8, 1];
    labels.extend_from_slice(&n.to_be_bytes());
    labels.extend((0..n).map(|i| (i % 2) as u8));
    for (name, bytes) in [
        ("train-images-idx3-ubyte", &images),
        ("train-labels-idx1-ubyte", &labels),
        ("t10k-images-idx3-ubyte", &images),
        ("t10k-labels-idx1-ubyte", &labels),
    ] {
        let mut z = GzEncoder::new(Vec::new(), Compression::fast());
        z.write_all(bytes).unwrap();
        std::fs::write(dir.join(format!("{name}.gz")), z.finish().unwrap()).unwrap();
    }
    let e = circuits_mnist::zero_vs_one(&dir, false).unwrap_err();
    assert!(
        e.to_string()
            .contains("64 training images of the digits used; the experiment holds out 1000"),
        "{e}"
    );
    let e = circuits_mnist::ten_digits(&dir, circuits_mnist::TenDigits::HALF, false).unwrap_err();
    assert!(e.to_string().contains("holds out 5000"), "{e}");
    let _ = std::fs::remove_dir_all(&dir);
}

// Fitted to no rows, the ranges were infinite and every code 0, silently.
#[test]
#[should_panic(expected = "fitting a binary code to no rows")]
fn a_midpoint_code_of_no_rows_is_refused() {
    let _ = paralens::circuits::binarise::Midpoint::<2>::fit(&[]);
}

#[test]
#[should_panic(expected = "fitting a binary code to no rows")]
fn a_thermometer_code_of_no_rows_is_refused() {
    let _ = paralens::circuits::binarise::Thermometer::<2, 3>::fit(&[]);
}
