//! Reverse derivative ascent: the lookup-table model's reverse against the oracle, the
//! anchor rule, and why batches need a vote.

use lens_circuits::models::LookupTable;
use lens_circuits::oracle::check_exhaustive;
use lens_circuits::{BoolLearner, Lanes, UpdateRule, Word};
use lens_core::Para;

fn bits<const N: usize>(x: u64) -> [u64; N] {
    core::array::from_fn(|j| u64::splat((x >> j) & 1 == 1))
}

#[test]
fn lookup_table_parameter_reverse_is_the_boolean_difference() {
    // Each table entry is read once, so at every input x the reverse derivative in the
    // parameters equals the Boolean difference: exhaustively over all tables (8 bits: 2
    // outputs of 4 entries) and all output changes, for each of the 4 inputs.
    let lut = LookupTable::<2, 2, 4>;
    let table = |v: u64| -> [[u64; 4]; 2] {
        core::array::from_fn(|o| core::array::from_fn(|k| u64::splat((v >> (o * 4 + k)) & 1 == 1)))
    };
    for x in 0..4u64 {
        let f = |v: u64| {
            let y = lut.forward(&table(v), bits::<2>(x));
            (y[0] & 1) | ((y[1] & 1) << 1)
        };
        let rev = |v: u64, d: u64| {
            let p = table(v);
            let (_, pb) = lut.vjp(&p, bits::<2>(x));
            let mut dp = [[0u64; 4]; 2];
            pb([u64::splat(d & 1 == 1), u64::splat(d & 2 == 2)], &mut dp);
            (0..8).fold(0, |r, i| r | ((dp[i / 4][i % 4] & 1) << i))
        };
        let res = check_exhaustive(f, rev, 8, 2);
        assert!(res.is_ok(), "x = {x}: {}", res.unwrap_err());
    }
}

#[test]
fn anchor_rule_one_example_at_a_time_learns_a_table() {
    // "Odd" on 4 bits: label = bit 0. From an all-zero table, one pass of single-example
    // steps sets each entry to its label (p[x] ^= f(p, x) ^ y).
    let lut = LookupTable::<4, 1, 16>;
    let mut l = BoolLearner::<_, [u64; 4], u64>::new(lut, [[0u64; 16]; 1], UpdateRule::Xor);
    for x in 0..16u64 {
        l.step(&bits::<4>(x), &[u64::splat(x & 1 == 1)], 1);
    }
    for x in 0..16u64 {
        assert_eq!(l.predict(&bits::<4>(x))[0] & 1, x & 1, "x = {x}");
    }
}

/// A batch where examples 0 and 1 have the same input and label 1 (so both ask to flip the
/// same table entry) and example 2 asks for another entry.
fn batch() -> ([u64; 2], [u64; 1], u64) {
    let x = [0b100, 0b000]; // lanes 0, 1: input 0; lane 2: input 1
    let y = [0b111];
    (x, y, 0b111)
}

#[test]
fn xor_batching_collapses_and_a_vote_does_not() {
    let lut = LookupTable::<2, 1, 4>;
    let (x, y, valid) = batch();
    // XOR of the requests: entry 0 is asked twice, so it stays 0 although both examples
    // want it to be 1; entry 1 (asked once) flips.
    let mut xor = BoolLearner::<_, [u64; 2], u64>::new(lut, [[0u64; 4]], UpdateRule::Xor);
    let r = xor.step(&x, &y, valid);
    assert_eq!(r.wrong_bits, 3);
    assert_eq!(xor.params()[0], [0, u64::MAX, 0, 0]);
    // Majority: entry 0 has 2 of 3 votes and flips; entry 1 has 1 of 3 and does not.
    let mut maj = BoolLearner::<_, [u64; 2], u64>::new(lut, [[0u64; 4]], UpdateRule::Majority);
    maj.step(&x, &y, valid);
    assert_eq!(maj.params()[0], [u64::MAX, 0, 0, 0]);
    // Threshold 1: every requested entry flips.
    let mut any = BoolLearner::<_, [u64; 2], u64>::new(lut, [[0u64; 4]], UpdateRule::Threshold(1));
    let r = any.step(&x, &y, valid);
    assert_eq!(
        (r.flipped, any.params()[0]),
        (2, [u64::MAX, u64::MAX, 0, 0])
    );
    // Top-1: only the most requested entry.
    let mut top = BoolLearner::<_, [u64; 2], u64>::new(lut, [[0u64; 4]], UpdateRule::TopK(1));
    top.step(&x, &y, valid);
    assert_eq!(top.params()[0], [u64::MAX, 0, 0, 0]);
    // Local majority: entry 0 is selected by lanes 0 and 1, both ask: flip; entry 1 is
    // selected by lane 2 alone, which asks: flip.
    let mut local =
        BoolLearner::<_, [u64; 2], u64>::new(lut, [[0u64; 4]], UpdateRule::LocalMajority);
    local.step(&x, &y, valid);
    assert_eq!(local.params()[0], [u64::MAX, u64::MAX, 0, 0]);
    // Lanes outside `valid` do not vote.
    let mut none = BoolLearner::<_, [u64; 2], u64>::new(lut, [[0u64; 4]], UpdateRule::Threshold(1));
    let r = none.step(&x, &y, 0);
    assert_eq!((r.wrong_bits, r.flipped), (0, 0));
}

#[test]
fn votes_count_across_all_lanes_of_wide_words() {
    // 256 examples in Lanes<4>, all with input 1 and label 1, except 100 with label 0.
    let lut = LookupTable::<1, 1, 2>;
    let x = [Lanes::<4>::ONES];
    let mut y = Lanes::<4>::ONES;
    for lane in 0..100 {
        y.set_lane(lane * 2, false);
    }
    let mut l = BoolLearner::<_, [Lanes<4>; 1], Lanes<4>>::new(
        lut,
        [[Lanes::ZERO; 2]],
        UpdateRule::Majority,
    );
    let r = l.step(&x, &[y], Lanes::ONES);
    assert_eq!(r.wrong_bits, 156);
    assert_eq!(l.params()[0][1], Lanes::ONES); // 156 of 256 voted to flip
    let r = l.step(&x, &[y], Lanes::ONES);
    assert_eq!((r.wrong_bits, r.flipped), (100, 0)); // now 100 ask to flip back: no majority
}

mod gate_networks {
    use lens_circuits::models::{gate_network, random_tables};
    use lens_circuits::netlist::NetlistLearner;
    use lens_circuits::{Lanes, UpdateRule, Word};

    /// All `2^n` input combinations of `n` bits, one per lane.
    fn all_inputs(n: usize) -> Vec<u64> {
        (0..n)
            .map(|j| (0..(1u64 << n)).fold(0, |w, lane| w | (((lane >> j) & 1) << lane)))
            .collect()
    }

    #[test]
    fn one_gate_learns_any_two_input_function_in_one_vote() {
        let x = all_inputs(2);
        let valid = 0b1111;
        for table in 0..16u64 {
            // Target: lane k (inputs a = bit 0, b = bit 1) has label bit k of `table`.
            let y = [table];
            let net = gate_network(2, &[1], 1, 3).unwrap();
            let mut l =
                NetlistLearner::<u64>::new(net.netlist, net.params, UpdateRule::LocalMajority)
                    .unwrap();
            l.step(&x, &y, valid).unwrap();
            let r = l.step(&x, &y, valid).unwrap();
            assert_eq!(r.wrong_bits, 0, "table {table:04b}");
        }
    }

    #[test]
    fn a_two_layer_network_improves_on_a_three_bit_function() {
        // Majority of three bits, all 8 combinations (repeated over the 256 lanes of
        // Lanes<4>), from random tables, by votes over the whole batch.
        let bits = all_inputs(3);
        let x: Vec<Lanes<4>> = bits
            .iter()
            .map(|&w| {
                let mut l = Lanes::<4>::ZERO;
                for lane in 0..256 {
                    l.set_lane(lane, (w >> (lane % 8)) & 1 == 1);
                }
                l
            })
            .collect();
        let mut y = Lanes::<4>::ZERO;
        for lane in 0..256 {
            let k = lane % 8;
            y.set_lane(lane, (k & 1) + ((k >> 1) & 1) + ((k >> 2) & 1) >= 2);
        }
        let net = gate_network(3, &[6, 1], 1, 11).unwrap();
        let mut l =
            NetlistLearner::<Lanes<4>>::new(net.netlist, net.params, UpdateRule::TopK(1)).unwrap();
        l.set_params(&random_tables(net.params, 5)).unwrap();
        let first = l.step(&x, &[y], Lanes::ONES).unwrap().wrong_bits;
        let mut best = first;
        for _ in 0..60 {
            best = best.min(l.step(&x, &[y], Lanes::ONES).unwrap().wrong_bits);
        }
        assert!(best < first, "no improvement from {first}");
    }

    #[test]
    fn bad_shapes_are_errors() {
        assert!(gate_network(8, &[], 1, 0).is_err());
        assert!(gate_network(8, &[4, 0], 1, 0).is_err());
        assert!(gate_network(8, &[4], 5, 0).is_err());
        assert!(gate_network(1, &[4], 1, 0).is_err());
        let net = gate_network(4, &[2], 1, 0).unwrap();
        let mut l = NetlistLearner::<u64>::new(net.netlist, net.params, UpdateRule::Xor).unwrap();
        let e = l.step(&[0; 3], &[0], 1).unwrap_err();
        assert_eq!(e.to_string(), "data inputs: expected 4 values, got 3");
        assert!(l.set_params(&[true]).is_err());
    }
}

mod masks_and_freezing {
    use lens_circuits::UpdateRule;
    use lens_circuits::models::gate_network;
    use lens_circuits::netlist::NetlistLearner;

    #[test]
    fn masked_outputs_and_frozen_parameters_do_not_move() {
        // Two one-gate networks side by side would be two outputs; here one gate, one output,
        // all four input combinations, target XOR.
        let x = [0b1010u64, 0b1100];
        let y = [0b0110u64];
        let net = gate_network(2, &[1], 1, 3).unwrap();
        // A mask with no lanes: the output takes part nowhere, nothing flips.
        let mut l =
            NetlistLearner::<u64>::new(net.netlist.clone(), net.params, UpdateRule::LocalMajority)
                .unwrap();
        let r = l.step_masked(&x, &y, 0b1111, Some(&[0])).unwrap();
        assert_eq!((r.wrong_bits, r.flipped), (0, 0));
        assert!(l.step_masked(&x, &y, 0b1111, Some(&[0, 0])).is_err());
        // Frozen parameters: freezing all four table bits stops learning.
        l.freeze_first(4);
        let r = l.step(&x, &y, 0b1111).unwrap();
        assert_eq!((r.wrong_bits, r.flipped), (2, 0));
        // Unfrozen, the same step learns XOR.
        let mut l =
            NetlistLearner::<u64>::new(net.netlist, net.params, UpdateRule::LocalMajority).unwrap();
        l.step(&x, &y, 0b1111).unwrap();
        let mut out = [0u64];
        l.predict(&x, &mut out).unwrap();
        assert_eq!(out[0] & 0b1111, 0b0110);
    }
}

mod significant_majority {
    use lens_circuits::models::LookupTable;
    use lens_circuits::{BoolLearner, Lanes, UpdateRule, Word};

    /// One input bit, one output: 64 examples all with input 1 (so all select table entry
    /// 1, which is 0), of which `ask` have label 1 and ask for a flip.
    fn flips(rule: UpdateRule, ask: usize) -> bool {
        let mut y = Lanes::<1>::ZERO;
        for lane in 0..ask {
            y.set_lane(lane, true);
        }
        let mut l = BoolLearner::<_, [Lanes<1>; 1], Lanes<1>>::new(
            LookupTable::<1, 1, 2>,
            [[Lanes::ZERO; 2]],
            rule,
        );
        l.step(&[Lanes::ONES], &[y], Lanes::ONES).flipped == 1
    }

    #[test]
    fn a_flip_needs_a_lead_of_z_standard_deviations() {
        // Audience 64, so one standard deviation of a fair vote is 8 examples: 40 asking
        // against 24 is a lead of 16, two standard deviations.
        assert!(flips(UpdateRule::LocalSignificant(1.9), 40));
        assert!(!flips(UpdateRule::LocalSignificant(2.0), 40));
        assert!(flips(UpdateRule::LocalSignificant(2.0), 41));
        // z = 0 is the local majority: 33 of 64 flips, 32 does not.
        for ask in [31, 32, 33, 64] {
            assert_eq!(
                flips(UpdateRule::LocalSignificant(0.0), ask),
                flips(UpdateRule::LocalMajority, ask),
                "{ask} asking"
            );
        }
        assert!(flips(UpdateRule::LocalSignificant(0.0), 33));
        assert!(!flips(UpdateRule::LocalSignificant(0.0), 32));
    }

    #[test]
    fn the_netlist_learner_applies_the_same_rule() {
        use lens_circuits::models::gate_network;
        use lens_circuits::netlist::NetlistLearner;
        // One gate on two inputs, all lanes with inputs (1, 1): entry 3 decides. 40 of 64
        // lanes want the output on.
        let net = gate_network(2, &[1], 1, 0).unwrap();
        let y = (1u64 << 40) - 1;
        for (z, flipped) in [(1.9, 1), (2.0, 0)] {
            let mut l = NetlistLearner::<u64>::new(
                net.netlist.clone(),
                net.params,
                UpdateRule::LocalSignificant(z),
            )
            .unwrap();
            let r = l.step(&[u64::MAX, u64::MAX], &[y], u64::MAX).unwrap();
            assert_eq!(r.flipped, flipped, "z = {z}");
        }
    }
}

mod targets_from_outputs {
    use lens_circuits::UpdateRule;
    use lens_circuits::models::{gate_network, random_tables};
    use lens_circuits::netlist::NetlistLearner;

    #[test]
    fn step_by_learns_as_step_masked_does_from_the_same_targets() {
        let net = gate_network(6, &[12, 4], 4, 9).unwrap();
        let learner = || {
            let mut l = NetlistLearner::<u64>::new(
                net.netlist.clone(),
                net.params,
                UpdateRule::LocalMajority,
            )
            .unwrap();
            l.set_params(&random_tables(net.params, 4)).unwrap();
            l
        };
        let (mut a, mut b) = (learner(), learner());
        let x = [
            0x0123_4567_89ab_cdefu64,
            0xf0f0,
            0xff00_ff00,
            !0x3333,
            0x5555_0000,
            77,
        ];
        let valid = u64::MAX >> 3;
        for step in 0..5u64 {
            // Targets that depend on the outputs: want each output's complement in the
            // lanes of a mask that changes per step.
            let mut seen = [0u64; 4];
            let rb = b
                .step_by(&x, valid, |out, wanted, audience| {
                    seen.copy_from_slice(out);
                    assert!(audience.iter().all(|&m| m == valid));
                    assert!(wanted.iter().all(|&w| w == 0));
                    for (o, (w, m)) in wanted.iter_mut().zip(audience.iter_mut()).enumerate() {
                        *w = !out[o];
                        *m = 0x00ff_00ff_00ff_00ff_u64.rotate_left((step * 8 + o as u64) as u32);
                    }
                    Ok(())
                })
                .unwrap();
            let mut out = [0u64; 4];
            a.predict(&x, &mut out).unwrap();
            assert_eq!(
                out, seen,
                "step {step}: the closure sees the batch's outputs"
            );
            let wanted: Vec<u64> = out.iter().map(|o| !o).collect();
            let masks: Vec<u64> = (0..4)
                .map(|o| 0x00ff_00ff_00ff_00ff_u64.rotate_left((step * 8 + o) as u32))
                .collect();
            let ra = a.step_masked(&x, &wanted, valid, Some(&masks)).unwrap();
            assert_eq!(ra, rb, "step {step}");
            assert_eq!(a.params(), b.params(), "step {step}");
            assert!(
                ra.flipped > 0,
                "step {step} flipped nothing: the test shows little"
            );
        }
        // An error from the closure is the step's error, and nothing flips.
        let before = b.params().to_vec();
        let e = b.step_by(&x, valid, |_, _, _| {
            Err(lens_circuits::NetlistError::TooLarge)
        });
        assert_eq!(e, Err(lens_circuits::NetlistError::TooLarge));
        assert_eq!(b.params(), before);
    }
}

mod selection {
    use lens_circuits::BestOnValidation;

    #[test]
    fn the_best_scoring_parameters_are_kept() {
        let mut best = BestOnValidation::<Vec<u8>>::default();
        assert_eq!((best.score(), best.params()), (None, None));
        // A NaN first is not kept; then only strict improvements are.
        assert!(!best.offer(f64::NAN, &vec![9]));
        assert_eq!(best.score(), None);
        let kept: Vec<bool> = [(0.2, 1), (0.1, 2), (0.9, 3), (0.9, 4), (0.3, 5), (0.95, 6)]
            .iter()
            .map(|&(s, p)| best.offer(s, &vec![p; 3]))
            .collect();
        assert_eq!(kept, [true, false, true, false, false, true]);
        assert_eq!(best.into_best(), Some((0.95, vec![6; 3])));
    }
}
