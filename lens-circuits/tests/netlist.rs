//! The netlist's compositional reverse derivative against the Boolean-difference oracle,
//! bad netlists, and lanes of several widths.

use lens_circuits::oracle::{boolean_reverse, check_exhaustive};
use lens_circuits::{Gate, Lanes, Netlist, NetlistBuilder, NetlistError, Wire, Word};
use proptest::prelude::*;

/// Runs a netlist at the point `x` (bit `i` = input `i`) on one lane, then pulls `d` (bit
/// `j` = output `j`) back: (output bits, input-change bits).
fn run(net: &Netlist, x: u64, d: u64) -> (u64, u64) {
    let splat =
        |v: u64, n: usize| -> Vec<u64> { (0..n).map(|i| u64::splat((v >> i) & 1 == 1)).collect() };
    let gather = |ws: &[u64]| {
        ws.iter()
            .enumerate()
            .fold(0, |acc, (i, w)| acc | (u64::from(w.lane(0)) << i))
    };
    let mut ev = net.evaluator::<u64>();
    let mut out = vec![0u64; net.outputs()];
    net.forward(&mut ev, &splat(x, net.inputs()), &mut out)
        .unwrap();
    let mut dx = vec![0u64; net.inputs()];
    net.reverse(&mut ev, &splat(d, net.outputs()), &mut dx)
        .unwrap();
    (gather(&out), gather(&dx))
}

fn eval_bits(net: &Netlist, x: u64) -> u64 {
    run(net, x, 0).0
}

fn rev_bits(net: &Netlist, x: u64, d: u64) -> u64 {
    run(net, x, d).1
}

/// A random read-once formula over the inputs `vars`: every input is read exactly once.
fn read_once(b: &mut NetlistBuilder, vars: &[Wire], rng: &mut u64) -> Wire {
    // xorshift: deterministic from the proptest seed.
    fn step(rng: &mut u64) -> u64 {
        *rng ^= *rng << 13;
        *rng ^= *rng >> 7;
        *rng ^= *rng << 17;
        *rng
    }
    let next = |rng: &mut u64| step(rng);
    let w = if vars.len() == 1 {
        vars[0]
    } else if vars.len() >= 3 && next(rng) % 4 == 0 {
        let k1 = 1 + (next(rng) as usize % (vars.len() - 2));
        let k2 = k1 + 1 + (next(rng) as usize % (vars.len() - k1 - 1));
        let s = read_once(b, &vars[..k1], rng);
        let x = read_once(b, &vars[k1..k2], rng);
        let y = read_once(b, &vars[k2..], rng);
        b.mux(s, x, y)
    } else {
        let k = 1 + (next(rng) as usize % (vars.len() - 1));
        let l = read_once(b, &vars[..k], rng);
        let r = read_once(b, &vars[k..], rng);
        match next(rng) % 4 {
            0 => b.and(l, r),
            1 => b.or(l, r),
            2 => b.xor(l, r),
            _ => b.nand(l, r),
        }
    };
    if next(rng) % 3 == 0 { b.not(w) } else { w }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// On read-once circuits the compositional reverse derivative is the Boolean difference,
    /// at every point and for every output change.
    #[test]
    fn read_once_circuits_match_the_oracle(n in 1u32..=9, outs in 1usize..=3, seed in 1u64..u64::MAX) {
        let mut rng = seed;
        let mut b = NetlistBuilder::new(n);
        let vars: Vec<Wire> = (0..n).collect();
        for _ in 0..outs {
            // Each output is its own read-once formula (outputs may share inputs: the
            // reverse is linear in d, and each basis change sees one formula).
            let y = read_once(&mut b, &vars, &mut rng);
            b.output(y);
        }
        let net = b.build().unwrap();
        let res = check_exhaustive(|x| eval_bits(&net, x), |x, d| rev_bits(&net, x, d), n, outs as u32);
        prop_assert!(res.is_ok(), "{}", res.unwrap_err());
    }
}

#[test]
fn the_reverse_belongs_to_the_circuit_not_the_function() {
    // y = x & x computes x; its reverse derivative is x&d ^ x&d = 0, while the Boolean
    // difference of the function it computes is d.
    let mut b = NetlistBuilder::new(1);
    let y = b.and(0, 0);
    b.output(y);
    let net = b.build().unwrap();
    assert_eq!(eval_bits(&net, 1), 1);
    assert_eq!(rev_bits(&net, 1, 1), 0);
    assert_eq!(boolean_reverse(|x| x & 1, 1, 1, 1), 1);
    // Read twice but not in one product: x ^ (x & z)... here (x & y) ^ (x & z) = x & (y ^ z)
    // agrees with the oracle: the two uses of x are in different products.
    let mut b = NetlistBuilder::new(3);
    let p = b.and(0, 1);
    let q = b.and(0, 2);
    let y = b.xor(p, q);
    b.output(y);
    let net = b.build().unwrap();
    let r = check_exhaustive(|x| eval_bits(&net, x), |x, d| rev_bits(&net, x, d), 3, 1);
    assert!(r.is_ok());
}

#[test]
fn gates_may_be_listed_in_any_acyclic_order() {
    // Gate 0 reads gate 1 (a later one): fine without a cycle.
    let net = Netlist::new(2, vec![Gate::Not(3), Gate::And(0, 1)], vec![2]).unwrap();
    assert_eq!(net.depth(), 2);
    assert_eq!(eval_bits(&net, 0b11), 0);
    assert_eq!(eval_bits(&net, 0b01), 1);
}

#[test]
fn bad_netlists_are_refused_with_clear_errors() {
    let e = Netlist::new(2, vec![Gate::And(0, 7)], vec![2]).unwrap_err();
    assert_eq!(
        e,
        NetlistError::DanglingWire {
            gate: 0,
            wire: 7,
            wires: 3
        }
    );
    assert_eq!(
        e.to_string(),
        "gate 0 reads wire 7, but the netlist has only 3 wires (0..3)"
    );
    let e = Netlist::new(1, vec![Gate::Not(0)], vec![5]).unwrap_err();
    assert!(
        matches!(
            e,
            NetlistError::DanglingOutput {
                output: 0,
                wire: 5,
                ..
            }
        ),
        "{e}"
    );
    // g0 = !g1, g1 = g0 & x: a cycle.
    let e = Netlist::new(1, vec![Gate::Not(2), Gate::And(1, 0)], vec![1]).unwrap_err();
    assert!(matches!(e, NetlistError::Cycle { .. }), "{e}");
    assert!(e.to_string().contains("cycle"));
    let e = Netlist::new(1, vec![Gate::Not(1)], vec![1]).unwrap_err();
    assert!(matches!(e, NetlistError::Cycle { gate: 0 }), "{e}");

    let net = Netlist::new(2, vec![Gate::Xor(0, 1)], vec![2]).unwrap();
    let mut ev = net.evaluator::<u64>();
    let e = net.forward(&mut ev, &[1], &mut [0]).unwrap_err();
    assert_eq!(e.to_string(), "inputs: expected 2 values, got 1");
    let e = net.reverse(&mut ev, &[1, 2], &mut [0, 0]).unwrap_err();
    assert_eq!(e.to_string(), "output changes: expected 1 values, got 2");
    let other = Netlist::new(5, vec![], vec![0]).unwrap();
    let e = net
        .forward(&mut other.evaluator::<u64>(), &[1, 2], &mut [0])
        .unwrap_err();
    assert!(
        matches!(
            e,
            NetlistError::Width {
                what: "evaluator wires",
                ..
            }
        ),
        "{e}"
    );
}

#[test]
fn wide_lanes_agree_with_single_words() {
    // A 3-input circuit with every gate kind, run on Lanes<4> and on 4 separate u64 words.
    let mut b = NetlistBuilder::new(3);
    let t = b.constant(true);
    let f = b.constant(false);
    let a = b.nand(0, 1);
    let o = b.or(a, 2);
    let m = b.mux(0, o, t);
    let x = b.xor(m, f);
    let n = b.not(x);
    b.output(n);
    b.output(a);
    let net = b.build().unwrap();
    let words: [[u64; 4]; 3] = [
        [0x0123_4567_89ab_cdef, 0xdead_beef_0000_ffff, 1, u64::MAX],
        [0xfedc_ba98_7654_3210, 0x0f0f_0f0f_f0f0_f0f0, 2, 0],
        [0xaaaa_5555_aaaa_5555, 0x1234_5678_9abc_def0, 3, 7],
    ];
    let d: [[u64; 4]; 2] = [
        [u64::MAX, 0x00ff_00ff_00ff_00ff, 5, 9],
        [0x1111, 0, u64::MAX, 3],
    ];
    let ins: Vec<Lanes<4>> = words.iter().map(|w| Lanes(*w)).collect();
    let mut ev = net.evaluator::<Lanes<4>>();
    let mut out = [Lanes::<4>::ZERO; 2];
    net.forward(&mut ev, &ins, &mut out).unwrap();
    let mut dx = [Lanes::<4>::ZERO; 3];
    net.reverse(&mut ev, &[Lanes(d[0]), Lanes(d[1])], &mut dx)
        .unwrap();
    for k in 0..4 {
        let ins1: Vec<u64> = words.iter().map(|w| w[k]).collect();
        let mut ev1 = net.evaluator::<u64>();
        let mut out1 = [0u64; 2];
        net.forward(&mut ev1, &ins1, &mut out1).unwrap();
        assert_eq!(out1, [out[0].0[k], out[1].0[k]]);
        let mut dx1 = [0u64; 3];
        net.reverse(&mut ev1, &[d[0][k], d[1][k]], &mut dx1)
            .unwrap();
        assert_eq!(dx1, [dx[0].0[k], dx[1].0[k], dx[2].0[k]]);
    }
}

#[test]
fn a_fused_lut2_is_its_mux_tree() {
    // Inputs: a, b, t0..t3. One netlist with the fused gate, one with three MUXes.
    let mut f = NetlistBuilder::new(6);
    let y = f.lut2(0, 1, 2);
    f.output(y);
    let fused = f.build().unwrap();
    let mut m = NetlistBuilder::new(6);
    let hi = m.mux(0, 5, 4);
    let lo = m.mux(0, 3, 2);
    let y = m.mux(1, hi, lo);
    m.output(y);
    let tree = m.build().unwrap();
    for x in 0..64 {
        for d in 0..2 {
            assert_eq!(run(&fused, x, d), run(&tree, x, d), "x = {x:06b}, d = {d}");
        }
    }
    let e = Netlist::new(2, vec![Gate::Lut2(0, 1, 0)], vec![2]).unwrap_err();
    assert!(matches!(e, NetlistError::DanglingWire { .. }), "{e}");
}

/// Per input, the number of lanes set in its change (what a learner counts), by the plain
/// reverse pass.
fn counts_by_reverse<W: Word>(net: &Netlist, inputs: &[W], d: &[W], n: usize) -> Vec<u32> {
    let mut ev = net.evaluator::<W>();
    let mut out = vec![W::ZERO; net.outputs()];
    net.forward(&mut ev, inputs, &mut out).unwrap();
    let mut dx = vec![W::ZERO; net.inputs()];
    net.reverse(&mut ev, d, &mut dx).unwrap();
    dx[..n].iter().map(Word::popcount).collect()
}

#[test]
fn counted_flip_requests_equal_the_popcounts_of_the_reverse() {
    use lens_circuits::Lanes;
    use lens_circuits::models::gate_network;
    let mut s = 0x2545_f491_4f6c_dd1du64;
    let mut word = move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        Lanes::<2>([s, s.rotate_left(29)])
    };
    let check = |net: &Netlist, n: usize, word: &mut dyn FnMut() -> Lanes<2>, what: &str| {
        let inputs: Vec<Lanes<2>> = (0..net.inputs()).map(|_| word()).collect();
        let d: Vec<Lanes<2>> = (0..net.outputs()).map(|_| word()).collect();
        let want = counts_by_reverse(net, &inputs, &d, n);
        let mut ev = net.evaluator::<Lanes<2>>();
        let mut out = vec![Lanes::ZERO; net.outputs()];
        for pass in 0..2 {
            net.forward(&mut ev, &inputs, &mut out).unwrap();
            let mut counts = vec![u32::MAX; n];
            net.reverse_counts(&mut ev, &d, &mut counts).unwrap();
            assert_eq!(counts, want, "{what}, pass {pass}");
        }
        // The change buffer is clean after counting: a plain reverse on it agrees.
        let mut dx = vec![Lanes::ZERO; net.inputs()];
        net.reverse(&mut ev, &d, &mut dx).unwrap();
        let again: Vec<u32> = dx[..n].iter().map(Word::popcount).collect();
        assert_eq!(again, want, "{what}: the buffer was left dirty");
        assert!(
            n == 0 || want.iter().any(|&c| c > 0),
            "{what}: nothing to count"
        );
    };
    // A gate network: every parameter is one gate's table bit (counted in the sweep), for
    // all of them, a prefix of whole tables, and a prefix ending inside a table.
    let net = gate_network(12, &[24, 8], 8, 5).unwrap();
    for n in [net.params, 40, 41, 0] {
        check(
            &net.netlist,
            n,
            &mut word,
            &format!("gate network, {n} counted"),
        );
    }
    // Tables that break the rule: a table bit read by two gates, and a table bit that is
    // also read as a gate's data input. Their changes add up across the readers.
    let mut b = NetlistBuilder::new(10);
    let g1 = b.lut2(8, 9, 0);
    let g2 = b.lut2(9, 8, 2); // shares bits 2 and 3 with g1
    let g3 = b.lut2(4, 9, 4); // bit 4 is both a table bit and its first input
    b.output(g1);
    b.output(g2);
    b.output(g3);
    check(&b.build().unwrap(), 8, &mut word, "shared table bits");
}
