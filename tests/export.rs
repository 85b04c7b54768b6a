//! A netlist written out as C and as Verilog computes what the library computes: the C
//! compiled by the system's compiler and run on packed words, the Verilog read back by a
//! small evaluator of the expressions it emits (and simulated by `iverilog` where the
//! machine has it), both against `Netlist::forward` on every example.

use paralens::circuits::netlist::{Gate, Netlist};
use paralens::circuits::relaxed::{GroupSum, LogicLayer, discretise};
use paralens::circuits::{NetlistBuilder, Word};
use paralens::prelude::*;
use rand::{Rng, SeedableRng, rngs::StdRng};
use std::path::PathBuf;
use std::process::Command;

/// Every kind of gate, with a gate listed before the gates it reads. Gate `k` drives wire
/// `8 + k` (written beside each).
fn every_kind() -> Netlist {
    // Inputs 0..4 are data, 4..8 a lookup table.
    let gates = vec![
        Gate::Xor(9, 10),    // 8: reads two later gates
        Gate::And(0, 1),     // 9
        Gate::Or(2, 3),      // 10
        Gate::Nand(0, 3),    // 11
        Gate::Not(11),       // 12
        Gate::Mux(0, 9, 10), // 13
        Gate::Lut2(1, 2, 4), // 14
        Gate::Const(true),   // 15
        Gate::Xor(15, 14),   // 16
    ];
    Netlist::new(8, gates, vec![8, 12, 13, 14, 16, 3]).unwrap()
}

fn trained_like() -> Netlist {
    const N: usize = 24;
    const H: usize = 40;
    let model = LogicLayer::<N, H, f64>::new(3)
        .then(LogicLayer::<H, H, f64>::new(4))
        .then(GroupSum::<H, 4, f64>::new(1.0));
    let mut rng = StdRng::seed_from_u64(1);
    let p1 = HeapMatrix::<f64, 16, H>::from_fn(|_, _| rng.random_range(-3.0..3.0));
    let p2 = HeapMatrix::<f64, 16, H>::from_fn(|_, _| rng.random_range(-3.0..3.0));
    discretise(&model, &((p1, p2), ()), N).unwrap()
}

fn nets() -> Vec<(&'static str, Netlist)> {
    let mut b = NetlistBuilder::new(3);
    let a = b.and(0, 1);
    let y = b.xor(a, 2);
    b.output(y);
    vec![
        ("small", b.build().unwrap()),
        ("every_kind", every_kind()),
        ("discretised", trained_like()),
    ]
}

/// Words of 64 random examples, `words` of them per input.
fn inputs(net: &Netlist, words: usize, seed: u64) -> Vec<Vec<u64>> {
    let mut rng = StdRng::seed_from_u64(seed);
    (0..words)
        .map(|_| (0..net.inputs()).map(|_| rng.random()).collect())
        .collect()
}

fn library(net: &Netlist, x: &[u64]) -> Vec<u64> {
    let mut ev = net.evaluator::<u64>();
    let mut out = vec![0u64; net.outputs()];
    net.forward(&mut ev, x, &mut out).unwrap();
    out
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("paralens-export-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn the_c_function_computes_what_the_library_computes() {
    for (name, net) in nets() {
        let dir = scratch(name);
        let main = format!(
            "#include <stdio.h>\n#include <stdint.h>\nvoid circuit(const uint64_t in[{i}], uint64_t out[{o}]);\n\
             int main(void) {{ uint64_t in[{i}], out[{o}]; for (;;) {{\n\
               for (int k = 0; k < {i}; k++) if (scanf(\"%lx\", (unsigned long *)&in[k]) != 1) return 0;\n\
               circuit(in, out); for (int k = 0; k < {o}; k++) printf(\"%lx\\n\", (unsigned long)out[k]); }} }}\n",
            i = net.inputs().max(1),
            o = net.outputs().max(1)
        );
        std::fs::write(dir.join("circuit.c"), net.to_c("circuit")).unwrap();
        std::fs::write(dir.join("main.c"), main).unwrap();
        let built = Command::new("cc")
            .args(["-O1", "-std=c99", "-Wall", "-Werror", "-o"])
            .arg(dir.join("run"))
            .arg(dir.join("circuit.c"))
            .arg(dir.join("main.c"))
            .output()
            .expect("the system's C compiler runs (`cc`)");
        assert!(
            built.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&built.stderr)
        );
        let xs = inputs(&net, 8, 7);
        let stdin: String = xs.iter().flatten().map(|w| format!("{w:x}\n")).collect();
        let mut child = Command::new(dir.join("run"))
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        use std::io::Write;
        child
            .stdin
            .take()
            .unwrap()
            .write_all(stdin.as_bytes())
            .unwrap();
        let out = child.wait_with_output().unwrap();
        let got: Vec<u64> = String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .map(|l| u64::from_str_radix(l, 16).unwrap())
            .collect();
        let want: Vec<u64> = xs.iter().flat_map(|x| library(&net, x)).collect();
        assert_eq!(got, want, "{name}: the C function differs from the library");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

/// Evaluates the emitted Verilog for one example `x` (Verilog's precedence: `~`, then `&`,
/// `^`, `|`, then `? :`).
fn verilog_eval(text: &str, x: &[bool], outputs: usize) -> Vec<bool> {
    let mut wires: std::collections::HashMap<String, bool> = Default::default();
    let mut y = vec![false; outputs];
    for line in text.lines().map(str::trim) {
        if let Some(rest) = line.strip_prefix("wire ") {
            let (name, e) = rest.trim_end_matches(';').split_once(" = ").unwrap();
            let v = Expr {
                s: e.as_bytes(),
                i: 0,
                x,
                wires: &wires,
            }
            .cond();
            wires.insert(name.to_string(), v);
        } else if let Some(rest) = line.strip_prefix("assign y[") {
            let (k, e) = rest.trim_end_matches(';').split_once("] = ").unwrap();
            y[k.parse::<usize>().unwrap()] = Expr {
                s: e.as_bytes(),
                i: 0,
                x,
                wires: &wires,
            }
            .cond();
        }
    }
    y
}

struct Expr<'a> {
    s: &'a [u8],
    i: usize,
    x: &'a [bool],
    wires: &'a std::collections::HashMap<String, bool>,
}

impl Expr<'_> {
    fn skip(&mut self) {
        while self.i < self.s.len() && self.s[self.i] == b' ' {
            self.i += 1;
        }
    }
    fn eat(&mut self, c: u8) -> bool {
        self.skip();
        if self.s.get(self.i) == Some(&c) {
            self.i += 1;
            true
        } else {
            false
        }
    }
    fn cond(&mut self) -> bool {
        let c = self.or();
        if self.eat(b'?') {
            let a = self.cond();
            assert!(self.eat(b':'));
            let b = self.cond();
            if c { a } else { b }
        } else {
            c
        }
    }
    fn or(&mut self) -> bool {
        let mut v = self.xor();
        while self.eat(b'|') {
            v |= self.xor();
        }
        v
    }
    fn xor(&mut self) -> bool {
        let mut v = self.and();
        while self.eat(b'^') {
            v ^= self.and();
        }
        v
    }
    fn and(&mut self) -> bool {
        let mut v = self.unary();
        while self.eat(b'&') {
            v &= self.unary();
        }
        v
    }
    fn unary(&mut self) -> bool {
        if self.eat(b'~') {
            return !self.unary();
        }
        if self.eat(b'(') {
            let v = self.cond();
            assert!(self.eat(b')'));
            return v;
        }
        self.skip();
        let start = self.i;
        while self.i < self.s.len()
            && (self.s[self.i].is_ascii_alphanumeric() || b"[]_'".contains(&self.s[self.i]))
        {
            self.i += 1;
        }
        let t = std::str::from_utf8(&self.s[start..self.i]).unwrap();
        match t {
            "1'b1" => true,
            "1'b0" => false,
            _ if t.starts_with("x[") => self.x[t[2..t.len() - 1].parse::<usize>().unwrap()],
            _ => *self
                .wires
                .get(t)
                .unwrap_or_else(|| panic!("`{t}` read before it is assigned")),
        }
    }
}

#[test]
fn the_verilog_module_computes_what_the_library_computes() {
    for (name, net) in nets() {
        let text = net.to_verilog("circuit");
        assert!(text.starts_with("// Generated by paralens"));
        assert!(text.trim_end().ends_with("endmodule"));
        let xs = inputs(&net, 5, 11);
        for x in &xs[..2] {
            let want = library(&net, x);
            for lane in 0..64 {
                let bits: Vec<bool> = x.iter().map(|w| w.lane(lane)).collect();
                let got = verilog_eval(&text, &bits, net.outputs());
                let want: Vec<bool> = want.iter().map(|w| w.lane(lane)).collect();
                assert_eq!(got, want, "{name}: lane {lane}");
            }
        }
        simulate_if_available(name, &net, &text, &xs);
    }
}

/// Where `iverilog` is installed (`.ci/run` installs it), simulates the module on every lane
/// of `xs`: 64 examples a word, a few hundred in all.
fn simulate_if_available(name: &str, net: &Netlist, text: &str, xs: &[Vec<u64>]) {
    if Command::new("iverilog").arg("-V").output().is_err() {
        eprintln!(
            "iverilog is not installed: the Verilog of `{name}` was checked by the test's own evaluator only"
        );
        return;
    }
    let dir = scratch(&format!("v-{name}"));
    let (i, o) = (net.inputs(), net.outputs());
    let mut bench = format!(
        "module tb; reg [{}:0] x; wire [{}:0] y; circuit c(.x(x), .y(y));\ninitial begin\n",
        i - 1,
        o - 1
    );
    for x in xs {
        for lane in 0..64 {
            let bits: String = (0..i)
                .rev()
                .map(|k| if x[k].lane(lane) { '1' } else { '0' })
                .collect();
            bench.push_str(&format!("  x = {i}'b{bits}; #1 $display(\"%b\", y);\n"));
        }
    }
    bench.push_str("end\nendmodule\n");
    std::fs::write(dir.join("circuit.v"), text).unwrap();
    std::fs::write(dir.join("tb.v"), bench).unwrap();
    let built = Command::new("iverilog")
        .arg("-o")
        .arg(dir.join("sim"))
        .arg(dir.join("circuit.v"))
        .arg(dir.join("tb.v"))
        .output()
        .unwrap();
    assert!(
        built.status.success(),
        "{}",
        String::from_utf8_lossy(&built.stderr)
    );
    let out = Command::new("vvp").arg(dir.join("sim")).output().unwrap();
    assert!(out.status.success(), "{name}: vvp failed");
    let lines: Vec<String> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect();
    assert_eq!(lines.len(), 64 * xs.len(), "{name}: one line per example");
    for (k, x) in xs.iter().enumerate() {
        let want = library(net, x);
        for lane in 0..64 {
            let got: Vec<bool> = lines[64 * k + lane]
                .chars()
                .rev()
                .map(|c| c == '1')
                .collect();
            let want: Vec<bool> = want.iter().map(|w| w.lane(lane)).collect();
            assert_eq!(got, want, "{name}: iverilog, word {k}, lane {lane}");
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_gate_listed_before_what_it_reads_comes_after_it_in_the_order() {
    let net = every_kind();
    let order = net.topological_order();
    let at = |g: usize| order.iter().position(|&h| h == g).unwrap();
    assert!(at(0) > at(1) && at(0) > at(2));
    assert_eq!(order.len(), net.gates().len());
}

#[test]
fn the_simplified_circuit_is_the_same_function_with_no_more_gates() {
    // Constants and negations to fold, a dead gate, a table of constants.
    let mut b = NetlistBuilder::new(3);
    let (one, zero) = (b.constant(true), b.constant(false));
    let a = b.and(0, one);
    let n1 = b.not(a);
    let n2 = b.not(n1);
    let _dead = b.or(1, 2);
    let x = b.xor(n2, zero);
    let m = b.mux(2, x, x);
    let o = b.or(m, zero);
    // A lookup of a constant table (0110: x0 ^ x1) becomes two gates on its operands.
    let t = [false, true, true, false].map(|v| b.constant(v))[0];
    let l = b.lut2(0, 1, t);
    b.output(o);
    b.output(one);
    b.output(l);
    let folded = b.build().unwrap();
    assert_eq!(folded.gates().len(), 14);
    let s = folded.simplified().unwrap();
    // `o` is input 0 itself; the constant output one gate; the lookup `!x0` and a mux.
    assert_eq!(s.output_wires()[0], 0);
    assert_eq!(s.gates().len(), 3, "{:?}", s.gates());
    assert!(s.gates().contains(&Gate::Const(true)));
    let mut all = nets();
    all.push(("folded", folded));
    for (name, net) in all {
        let s = net.simplified().unwrap();
        assert!(s.gates().len() <= net.gates().len(), "{name}");
        assert_eq!(
            (s.inputs(), s.outputs()),
            (net.inputs(), net.outputs()),
            "{name}"
        );
        for x in inputs(&net, 8, 21) {
            assert_eq!(library(&s, &x), library(&net, &x), "{name}");
        }
    }
}
