//! Reading classes off groups of output gates, and the softmax targets that train them.

use lens_circuits::models::{GroupVote, Softmax};
use lens_circuits::{Lanes, NetlistError, Word};
use rand::{Rng, SeedableRng, rngs::StdRng};

type L2 = Lanes<2>;

/// Random outputs for `classes * group` gates over 128 lanes.
fn random_outputs(rng: &mut StdRng, n: usize) -> Vec<L2> {
    (0..n)
        .map(|_| Lanes([rng.random(), rng.random()]))
        .collect()
}

#[test]
fn scores_count_the_gates_on_and_the_highest_wins() {
    let mut rng = StdRng::seed_from_u64(1);
    let (classes, group) = (5, 7);
    let outputs = random_outputs(&mut rng, classes * group);
    let mut vote = GroupVote::<L2>::new(classes, group);
    let mut pred = [0usize; 128];
    vote.predict(&outputs, &mut pred).unwrap();
    for (lane, &predicted) in pred.iter().enumerate() {
        let naive: Vec<u32> = (0..classes)
            .map(|c| {
                (0..group)
                    .filter(|&g| outputs[c * group + g].lane(lane))
                    .count() as u32
            })
            .collect();
        assert_eq!(vote.scores(lane).collect::<Vec<_>>(), naive, "lane {lane}");
        let top = *naive.iter().max().unwrap();
        let first_top = naive.iter().position(|&s| s == top).unwrap();
        assert_eq!(predicted, first_top, "lane {lane}");
    }
}

#[test]
fn counts_reach_the_group_size() {
    // Groups of 1, 7, 8 and 300 gates, with every gate on in lane 0, every other gate in
    // lane 1, none in lane 2: the counts fill their bit planes exactly.
    for group in [1, 7, 8, 300] {
        let outputs: Vec<u64> = (0..2 * group)
            .map(|g| 0b001 | if g % 2 == 0 { 0b010 } else { 0 })
            .collect();
        let mut vote = GroupVote::<u64>::new(2, group);
        vote.count(&outputs).unwrap();
        let g = group as u32;
        let even = |class: usize| {
            (class * group..(class + 1) * group)
                .filter(|i| i % 2 == 0)
                .count() as u32
        };
        assert_eq!(vote.scores(0).collect::<Vec<_>>(), [g, g], "group {group}");
        assert_eq!(
            vote.scores(1).collect::<Vec<_>>(),
            [even(0), even(1)],
            "group {group}"
        );
        assert_eq!(vote.scores(2).collect::<Vec<_>>(), [0, 0], "group {group}");
    }
}

#[test]
fn bad_sizes_and_labels_are_errors() {
    let mut vote = GroupVote::<u64>::new(3, 2);
    let mut pred = [0usize; 4];
    assert!(vote.predict(&[0; 5], &mut pred).is_err());
    assert!(vote.predict(&[0; 6], &mut [0usize; 65]).is_err());
    let how = Softmax {
        temperature: 1.0,
        share: 1,
    };
    let mut rng = StdRng::seed_from_u64(0);
    let (mut w, mut a) = ([0u64; 6], [0u64; 6]);
    let e = vote
        .softmax_targets(&[0; 6], &[0, 2, 3], how, &mut rng, &mut w, &mut a)
        .unwrap_err();
    assert_eq!(
        e,
        NetlistError::Label {
            example: 2,
            label: 3,
            classes: 3
        }
    );
    assert_eq!(
        e.to_string(),
        "example 2 has label 3, but the model has only 3 classes (0..3)"
    );
    assert!(
        vote.softmax_targets(&[0; 6], &[0], how, &mut rng, &mut w[..5], &mut a)
            .is_err()
    );
    // A temperature that is not positive is the limit from above (the top score takes all),
    // and a share of 0 is every gate. Lane 0 (label 0): class 1 leads with a gate, so both
    // class 0 (1 - p = 1) and class 1 (p = 1) take part, in every gate.
    let outputs = [0, 0, 1, 0, 0, 0];
    for temperature in [0.0, -1.0, f32::NAN] {
        let how = Softmax {
            temperature,
            share: 0,
        };
        vote.softmax_targets(&outputs, &[0], how, &mut rng, &mut w, &mut a)
            .unwrap();
        assert_eq!(a, [1, 1, 1, 1, 0, 0], "temperature {temperature}");
    }
}

#[test]
fn softmax_targets_push_the_right_class_up_and_the_winner_down() {
    // 2 classes of 4 gates, temperature 0.1 gate: any lead of a gate or more is certain.
    let (classes, group) = (2, 4);
    let mut outputs = [0u64; 8];
    // Lane 0 (label 0): class 0 has 3 gates on, class 1 one: right, and sure.
    // Lane 1 (label 0): class 1 has 4 gates on: wrong, and sure.
    // Lane 2 (label 1): no gates on: a tie, each class at probability 1/2.
    for gate in &mut outputs[..3] {
        *gate |= 1;
    }
    outputs[4] |= 1;
    for gate in &mut outputs[4..] {
        *gate |= 2;
    }
    let labels = [0u8, 0, 1];
    let how = Softmax {
        temperature: 0.1,
        share: 1,
    };
    let mut vote = GroupVote::<u64>::new(classes, group);
    let mut rng = StdRng::seed_from_u64(7);
    let mut tie_votes = [0u32; 2];
    for _ in 0..400 {
        let (mut wanted, mut audience) = ([0u64; 8], [0u64; 8]);
        vote.softmax_targets(&outputs, &labels, how, &mut rng, &mut wanted, &mut audience)
            .unwrap();
        for g in 0..4 {
            // One-hot: class 0's gates want lanes 0 and 1 on, class 1's lane 2.
            assert_eq!(wanted[g], 0b011);
            assert_eq!(wanted[4 + g], 0b100);
            // Every gate of a class shares the class's audience (share 1).
            assert_eq!(audience[g], audience[0]);
            assert_eq!(audience[4 + g], audience[4]);
        }
        // Lane 0 is right and sure: no pull. Lane 1: both classes pull. No lane past the
        // labels takes part.
        assert_eq!(audience[0] & 0b011, 0b010);
        assert_eq!(audience[4] & 0b011, 0b010);
        assert_eq!((audience[0] | audience[4]) >> 3, 0);
        tie_votes[0] += u32::from(audience[0] & 0b100 != 0);
        tie_votes[1] += u32::from(audience[4] & 0b100 != 0);
    }
    // The tie: each class takes part with probability 1/2 (400 draws: 200 +- 10).
    for v in tie_votes {
        assert!((160..240).contains(&v), "{tie_votes:?}");
    }
}

#[test]
fn a_share_lets_that_fraction_of_the_gates_take_part() {
    let (classes, group) = (2, 500);
    let outputs = vec![0u64; classes * group];
    let how = Softmax {
        temperature: 10.0,
        share: 4,
    };
    let mut vote = GroupVote::<u64>::new(classes, group);
    let mut rng = StdRng::seed_from_u64(3);
    let (mut wanted, mut audience) = (vec![0u64; 1000], vec![0u64; 1000]);
    // All lanes tied at zero: each class takes part in about half of the 64 lanes, and a
    // gate in the share carries its class's audience, the others none.
    vote.softmax_targets(
        &outputs,
        &[1; 64],
        how,
        &mut rng,
        &mut wanted,
        &mut audience,
    )
    .unwrap();
    let taking = audience.iter().filter(|&&a| a != 0).count();
    assert!((200..300).contains(&taking), "{taking} of 1000 gates");
    for class in audience.chunks(group) {
        let taking: Vec<u64> = class.iter().copied().filter(|&a| a != 0).collect();
        assert!(taking.windows(2).all(|w| w[0] == w[1]));
        assert!(
            (16..48).contains(&taking[0].count_ones()),
            "{:x}",
            taking[0]
        );
    }
}

mod properties {
    use lens_circuits::models::GroupVote;
    use lens_circuits::{Lanes, Word};
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        /// The bit-sliced counts equal a count lane by lane, for any group size and outputs.
        #[test]
        fn counts_equal_a_lane_by_lane_count(
            classes in 1usize..5,
            group in 1usize..70,
            seed in any::<u64>(),
        ) {
            let mut s = seed | 1;
            let outputs: Vec<Lanes<2>> = (0..classes * group)
                .map(|_| {
                    Lanes(core::array::from_fn(|_| {
                        s ^= s << 13;
                        s ^= s >> 7;
                        s ^= s << 17;
                        // Dense in some seeds, sparse in others.
                        if seed % 3 == 0 { s | s.rotate_left(7) } else { s }
                    }))
                })
                .collect();
            let mut vote = GroupVote::<Lanes<2>>::new(classes, group);
            vote.count(&outputs).unwrap();
            for lane in 0..128 {
                let naive: Vec<u32> = (0..classes)
                    .map(|c| {
                        (0..group).filter(|&g| outputs[c * group + g].lane(lane)).count() as u32
                    })
                    .collect();
                prop_assert_eq!(vote.scores(lane).collect::<Vec<_>>(), naive);
            }
        }
    }
}
