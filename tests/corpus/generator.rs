//! A seeded generator of random `#[lens]` programs and of an independent oracle for each:
//! the same program differentiated in forward mode by the generator itself (every value `x`
//! gets a tangent `d_x` computed beside it, statement by statement), so the oracle shares no
//! code with the macro. The output is `tests/corpus_generated.rs`; `tests/corpus.rs` fails
//! when the committed file is not what this produces.
//!
//! Programs: `f64` arguments (and sometimes an `SVector<f64, 3>`), expression trees over
//! `+ - * /`, `sin cos tanh exp sqrt ln powi powf max min`, repeated operands (`x * x`),
//! shadowing, `let mut` bindings changed by `=` and `+=` at the top level, in `if` without
//! `else`, in `if`/`else` and in `match` on comparisons, loops over constant ranges (with
//! indexing of the vector by the counter), calls of earlier generated functions, and vector
//! code (`dot`, `component_mul`, scaling, `norm_squared`, `sum`, entries).
//!
//! Issue 42's section (`h0`, `h1`, ..., in a module of its own after the main corpus, from a
//! stream of its own so the main corpus is unchanged): loops whose forward-only code calls
//! effects (`coin::<f64>()`, `COIN()`, `URN.draw::<f64>()`, in a `let` and in an `if` or
//! `match` condition; the oracle knows the value of the `n`-th call, and every run of `hN`
//! and `hN_rev` must make each call exactly once per iteration), `#[nodiff]` masks
//! `[bool; 3]` and indices `[usize; 2]`, shadowing in nested blocks and block expressions in
//! loops, `#[lens(name = ..)]` helpers named like the prelude's `relu`, `tanh`, `sigmoid`
//! and `softplus` (called, and mapped over the vector), and heap vectors given away (a clone
//! moved) then read by entry.

use std::fmt::Write;

/// splitmix64: small, seeded, and the same on every platform and forever (a generator's
/// output must not change when a dependency does).
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Self(seed)
    }
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }
    /// A constant in [0.25, 2.0), in steps of 0.25, written as a float literal.
    fn constant(&mut self) -> String {
        format!("{:.2}_f64", 0.25 * (1 + self.below(7)) as f64)
    }
}

/// One generated function's signature, for calls from later ones.
#[derive(Clone)]
struct Sig {
    name: String,
    scalars: usize,
    vector: bool,
}

/// Code being built: the `#[lens]` body and the oracle's body side by side.
struct Gen<'a> {
    rng: &'a mut Rng,
    lens: String,
    oracle: String,
    /// Scalar variables in scope (their tangents are `d_<name>`).
    scalars: Vec<String>,
    vector: bool,
    fresh: usize,
    earlier: &'a [Sig],
    indent: usize,
    /// Issue 42's section only (all off in the main corpus, whose random stream they leave
    /// alone): calls of the prelude-named helpers, effectful calls, `#[nodiff]` masks and
    /// indices, shadowing in nested blocks; `effects` counts the effectful calls one run
    /// makes.
    helpers: bool,
    effectful: bool,
    masks: bool,
    shadowing: bool,
    heap: bool,
    effects: usize,
}

impl Gen<'_> {
    fn pad(&self) -> String {
        "    ".repeat(self.indent)
    }

    fn tmp(&mut self) -> String {
        self.fresh += 1;
        format!("o{}", self.fresh)
    }

    /// Emits a line into the oracle.
    fn o(&mut self, line: String) {
        let pad = self.pad();
        writeln!(self.oracle, "{pad}{line}").unwrap();
    }

    fn leaf(&mut self) -> (String, String, String) {
        if self.rng.chance(25) {
            let c = self.rng.constant();
            return (c.clone(), c, "0.0".into());
        }
        if self.vector && self.rng.chance(20) {
            let i = self.rng.below(3);
            return (format!("v[{i}]"), format!("v[{i}]"), format!("d_v[{i}]"));
        }
        let v = self.scalars[self.rng.below(self.scalars.len())].clone();
        (v.clone(), v.clone(), format!("d_{v}"))
    }

    /// A scalar expression: returns the `#[lens]` text and the oracle's names of its value
    /// and tangent (after emitting the oracle's statements computing them).
    fn expr(&mut self, depth: usize) -> (String, String, String) {
        if depth == 0 || self.rng.chance(20) {
            return self.leaf();
        }
        if self.helpers && self.rng.chance(15) {
            return self.helper(depth);
        }
        let k = self.rng.below(if self.vector { 17 } else { 15 });
        let (v, d) = (self.tmp(), self.tmp());
        let (lens, value, tangent) = match k {
            0..=2 => {
                let (la, va, da) = self.expr(depth - 1);
                let (lb, vb, db) = self.expr(depth - 1);
                let (op, t) = match k {
                    0 => ("+", format!("{da} + {db}")),
                    1 => ("-", format!("{da} - {db}")),
                    _ => ("*", format!("{da} * {vb} + {va} * {db}")),
                };
                (format!("({la} {op} {lb})"), format!("{va} {op} {vb}"), t)
            }
            3 => {
                // A quotient by something positive.
                let (la, va, da) = self.expr(depth - 1);
                let (lb, vb, db) = self.expr(depth - 1);
                let q = self.tmp();
                self.o(format!("let {q} = {vb} * {vb} + 1.0;"));
                (
                    format!("({la} / ({lb} * {lb} + 1.0))"),
                    format!("{va} / {q}"),
                    format!("({da} * {q} - {va} * 2.0 * {vb} * {db}) / ({q} * {q})"),
                )
            }
            4 => {
                // A repeated operand.
                let (la, va, da) = self.expr(depth - 1);
                (
                    format!("({la} * {la})"),
                    format!("{va} * {va}"),
                    format!("2.0 * {va} * {da}"),
                )
            }
            5 => {
                let (la, va, da) = self.expr(depth - 1);
                (
                    format!("{}.sin()", paren(&la)),
                    format!("{va}.sin()"),
                    format!("{va}.cos() * {da}"),
                )
            }
            6 => {
                let (la, va, da) = self.expr(depth - 1);
                (
                    format!("{}.cos()", paren(&la)),
                    format!("{va}.cos()"),
                    format!("-{va}.sin() * {da}"),
                )
            }
            7 => {
                let (la, va, da) = self.expr(depth - 1);
                (
                    format!("{}.tanh()", paren(&la)),
                    format!("{va}.tanh()"),
                    format!("(1.0 - {va}.tanh() * {va}.tanh()) * {da}"),
                )
            }
            8 => {
                // exp of a bounded argument.
                let (la, va, da) = self.expr(depth - 1);
                (
                    format!("{}.tanh().exp()", paren(&la)),
                    format!("{va}.tanh().exp()"),
                    format!("{va}.tanh().exp() * (1.0 - {va}.tanh() * {va}.tanh()) * {da}"),
                )
            }
            9 => {
                let (la, va, da) = self.expr(depth - 1);
                (
                    format!("({la} * {la} + 1.0).sqrt()"),
                    format!("({va} * {va} + 1.0).sqrt()"),
                    format!("{va} * {da} / ({va} * {va} + 1.0).sqrt()"),
                )
            }
            10 => {
                let (la, va, da) = self.expr(depth - 1);
                (
                    format!("({la} * {la} + 0.5).ln()"),
                    format!("({va} * {va} + 0.5).ln()"),
                    format!("2.0 * {va} * {da} / ({va} * {va} + 0.5)"),
                )
            }
            11 => {
                let n = 2 + self.rng.below(2);
                let (la, va, da) = self.expr(depth - 1);
                (
                    format!("{}.powi({n})", paren(&la)),
                    format!("{va}.powi({n})"),
                    format!("{n}.0 * {va}.powi({}) * {da}", n - 1),
                )
            }
            12 => {
                let (la, va, da) = self.expr(depth - 1);
                (
                    format!("({la} * {la} + 1.0).powf(1.5)"),
                    format!("({va} * {va} + 1.0).powf(1.5)"),
                    format!("1.5 * ({va} * {va} + 1.0).powf(0.5) * 2.0 * {va} * {da}"),
                )
            }
            13 | 14 => {
                let (la, va, da) = self.expr(depth - 1);
                let (lb, vb, db) = self.expr(depth - 1);
                let (m, cmp) = if k == 13 {
                    ("max", ">=")
                } else {
                    ("min", "<=")
                };
                (
                    format!("{}.{m}({lb})", paren(&la)),
                    format!("if {va} {cmp} {vb} {{ {va} }} else {{ {vb} }}"),
                    format!("if {va} {cmp} {vb} {{ {da} }} else {{ {db} }}"),
                )
            }
            15 => {
                // A scalar from vector code: <v * a + v o v, v>.
                let (la, va, da) = self.expr(depth - 1);
                (
                    format!("(v * {la} + v.component_mul(&v)).dot(&v)"),
                    format!("(v * {va} + v.component_mul(&v)).dot(&v)"),
                    format!(
                        "(d_v * {va} + v * {da} + d_v.component_mul(&v) * 2.0).dot(&v) + (v * {va} + v.component_mul(&v)).dot(&d_v)"
                    ),
                )
            }
            _ => {
                let (la, va, da) = self.expr(depth - 1);
                (
                    format!("((v * {la}).norm_squared() + v.sum())"),
                    format!("(v * {va}).norm_squared() + v.sum()"),
                    format!("2.0 * (v * {va}).dot(&(d_v * {va} + v * {da})) + d_v.sum()"),
                )
            }
        };
        self.o(format!("let {v} = {value};"));
        self.o(format!("let {d} = {tangent};"));
        (lens, v, d)
    }

    /// A call of an earlier generated function.
    fn call(&mut self) -> Option<(String, String, String)> {
        let candidates: Vec<Sig> = self
            .earlier
            .iter()
            .filter(|s| !s.vector || self.vector)
            .cloned()
            .collect();
        if candidates.is_empty() {
            return None;
        }
        let s = candidates[self.rng.below(candidates.len())].clone();
        let mut lens_args = Vec::new();
        let mut vals = Vec::new();
        let mut tans = Vec::new();
        for _ in 0..s.scalars {
            let (l, v, d) = self.expr(1);
            lens_args.push(l);
            vals.push(v);
            tans.push(d);
        }
        if s.vector {
            lens_args.push("v".into());
            vals.push("v".into());
            tans.push("d_v".into());
        }
        let (v, d) = (self.tmp(), self.tmp());
        self.o(format!(
            "let ({v}, {d}) = {}_tangent({}, {});",
            s.name,
            vals.join(", "),
            tans.join(", ")
        ));
        Some((format!("{}({})", s.name, lens_args.join(", ")), v, d))
    }

    fn lens_line(&mut self, line: String) {
        let pad = self.pad();
        writeln!(self.lens, "{pad}{line}").unwrap();
    }

    /// `name = expr;` in both programs (`+=` too), at the current indentation.
    fn assign(&mut self, name: &str, compound: bool) {
        let (l, v, d) = if self.rng.chance(15) {
            self.call().unwrap_or_else(|| self.expr(2))
        } else {
            self.expr(2)
        };
        if compound {
            self.lens_line(format!("{name} += {l};"));
            self.o(format!("{name} += {v};"));
            self.o(format!("d_{name} += {d};"));
        } else {
            self.lens_line(format!("{name} = {l};"));
            self.o(format!("{name} = {v};"));
            self.o(format!("d_{name} = {d};"));
        }
    }

    fn condition(&mut self) -> String {
        let v = self.scalars[self.rng.below(self.scalars.len())].clone();
        let c = self.rng.constant();
        format!("{v} > {c}")
    }

    fn statement(&mut self, mutable: &str) {
        match self.rng.below(8) {
            0 | 1 => {
                // A fresh binding, or a shadowing one.
                let shadowable: Vec<String> = self
                    .scalars
                    .iter()
                    .filter(|s| *s != mutable)
                    .cloned()
                    .collect();
                let name = if self.rng.chance(30) {
                    shadowable[self.rng.below(shadowable.len())].clone()
                } else {
                    self.fresh += 1;
                    format!("t{}", self.fresh)
                };
                let (l, v, d) = self
                    .call()
                    .filter(|_| self.rng.chance(20))
                    .unwrap_or_else(|| self.expr(3));
                self.lens_line(format!("let {name} = {l};"));
                self.o(format!("let {name} = {v};"));
                self.o(format!("let d_{name} = {d};"));
                if !self.scalars.contains(&name) {
                    self.scalars.push(name);
                }
            }
            2 => {
                let compound = self.rng.chance(50);
                self.assign(mutable, compound);
            }
            3 => {
                // `if` without `else`.
                let c = self.condition();
                self.lens_line(format!("if {c} {{"));
                self.o(format!("if {c} {{"));
                self.indent += 1;
                let compound = self.rng.chance(50);
                self.assign(mutable, compound);
                self.indent -= 1;
                self.lens_line("}".into());
                self.o("}".into());
            }
            4 => {
                let c = self.condition();
                self.lens_line(format!("if {c} {{"));
                self.o(format!("if {c} {{"));
                self.indent += 1;
                self.assign(mutable, false);
                self.indent -= 1;
                self.lens_line("} else {".into());
                self.o("} else {".into());
                self.indent += 1;
                self.assign(mutable, true);
                self.indent -= 1;
                self.lens_line("}".into());
                self.o("}".into());
            }
            5 => {
                // `match` on a comparison.
                let c = self.condition();
                self.lens_line(format!("match {c} {{"));
                self.o(format!("match {c} {{"));
                for arm in ["true", "false"] {
                    self.indent += 1;
                    self.lens_line(format!("{arm} => {{"));
                    self.o(format!("{arm} => {{"));
                    self.indent += 1;
                    let compound = self.rng.chance(50);
                    self.assign(mutable, compound);
                    self.indent -= 1;
                    self.lens_line("}".into());
                    self.o("}".into());
                    self.indent -= 1;
                }
                self.lens_line("}".into());
                self.o("}".into());
            }
            _ => {
                // A loop over a constant range; the counter scales, and indexes the vector.
                // Sometimes a forward-only count too, kept by the body's last expression
                // without `;` (rustfmt's form of a final `if`), which scales the value after
                // the loop: a body's last expression was once dropped from the reverse.
                let count = self.rng.chance(40).then(|| {
                    self.fresh += 1;
                    format!("n{}", self.fresh)
                });
                if let Some(k) = &count {
                    self.lens_line(format!("let mut {k} = 0.0;"));
                    self.o(format!("let mut {k} = 0.0;"));
                }
                let n = 1 + self.rng.below(4);
                let c = self.rng.constant();
                self.lens_line(format!("for i in 0..{n} {{"));
                self.o(format!("for i in 0..{n} {{"));
                self.indent += 1;
                let (l, v, d) = self.expr(2);
                let entry = if self.vector { " + v[i % 3]" } else { "" };
                let dentry = if self.vector { " + d_v[i % 3]" } else { "" };
                if c == "1.00_f64" {
                    // A sum the body only adds to: its reverse runs first to last, the
                    // entries' changes added in the order read (`recompute::any_order`).
                    self.lens_line(format!("{mutable} += {l} * (i as f64 + 1.0){entry};"));
                    self.o(format!("{mutable} += {v} * (i as f64 + 1.0){entry};"));
                    self.o(format!("d_{mutable} += {d} * (i as f64 + 1.0){dentry};"));
                } else {
                    self.lens_line(format!(
                        "{mutable} = {mutable} * {c} + {l} * (i as f64 + 1.0){entry};"
                    ));
                    self.o(format!(
                        "{mutable} = {mutable} * {c} + {v} * (i as f64 + 1.0){entry};"
                    ));
                    self.o(format!(
                        "d_{mutable} = d_{mutable} * {c} + {d} * (i as f64 + 1.0){dentry};"
                    ));
                }
                if let Some(k) = &count {
                    let cond = self.condition();
                    self.lens_line(format!("if {cond} {{"));
                    self.lens_line(format!("    {k} += 1.0"));
                    self.lens_line("}".into());
                    self.o(format!("if {cond} {{"));
                    self.o(format!("    {k} += 1.0"));
                    self.o("}".into());
                }
                self.indent -= 1;
                self.lens_line("}".into());
                self.o("}".into());
                if let Some(k) = &count {
                    self.lens_line(format!("{mutable} = {mutable} * (1.0 + {k});"));
                    self.o(format!("{mutable} = {mutable} * (1.0 + {k});"));
                    self.o(format!("d_{mutable} = d_{mutable} * (1.0 + {k});"));
                }
            }
        }
    }
}

/// Issue 42's section: helpers named like the prelude's activations, `#[lens(name = ..)]` to
/// keep the prelude's lens types apart; `(name, lens type, value of x, its tangent along dx)`.
/// Each differs from the prelude's function of the same name, so a call that reached the
/// prelude's reverse would be wrong.
const HELPERS: [(&str, &str, &str, &str); 4] = [
    (
        "relu",
        "SmoothRelu",
        "0.5 * x + 0.5 * (x * x + 1.0).sqrt()",
        "(0.5 + 0.5 * x / (x * x + 1.0).sqrt()) * dx",
    ),
    (
        "tanh",
        "AlgebraicTanh",
        "x / (x * x + 1.0).sqrt()",
        "dx / ((x * x + 1.0) * (x * x + 1.0).sqrt())",
    ),
    (
        "sigmoid",
        "HalfSigmoid",
        "0.5 + 0.5 * x / (1.0 + x.abs())",
        "0.5 * dx / ((1.0 + x.abs()) * (1.0 + x.abs()))",
    ),
    (
        "softplus",
        "LogSoftplus",
        "(x * x + 1.0).ln() + x",
        "(2.0 * x / (x * x + 1.0) + 1.0) * dx",
    ),
];

impl Gen<'_> {
    /// A call of a prelude-named helper, on a scalar or mapped over the vector.
    fn helper(&mut self, depth: usize) -> (String, String, String) {
        let name = HELPERS[self.rng.below(HELPERS.len())].0;
        let (v, d) = (self.tmp(), self.tmp());
        if self.vector && self.rng.chance(30) {
            let (mut vs, mut ds) = (Vec::new(), Vec::new());
            for j in 0..3 {
                let (a, b) = (self.tmp(), self.tmp());
                self.o(format!(
                    "let ({a}, {b}) = {name}_tangent(v[{j}], d_v[{j}]);"
                ));
                vs.push(a);
                ds.push(b);
            }
            self.o(format!("let {v} = {};", vs.join(" + ")));
            self.o(format!("let {d} = {};", ds.join(" + ")));
            return (format!("v.map({name}).sum()"), v, d);
        }
        let (la, va, da) = self.expr(depth - 1);
        self.o(format!("let ({v}, {d}) = {name}_tangent({va}, {da});"));
        (format!("{name}({la})"), v, d)
    }

    /// Both programs' line.
    fn both(&mut self, line: String) {
        self.lens_line(line.clone());
        self.o(line);
    }

    /// `mutable = mutable * c + <a> * <e>`, where `<a>` is a name without a change.
    fn update_scaled(&mut self, mutable: &str, lens_a: &str, oracle_a: &str) {
        let c = self.rng.constant();
        let (l, v, d) = self.expr(2);
        self.lens_line(format!("{mutable} = {mutable} * {c} + {lens_a} * {l};"));
        self.o(format!("{mutable} = {mutable} * {c} + {oracle_a} * {v};"));
        self.o(format!(
            "d_{mutable} = d_{mutable} * {c} + {oracle_a} * {d};"
        ));
    }

    /// An `if` on `lens_cond` (the oracle's `oracle_cond`, a `bool` already computed), an
    /// assignment in it and sometimes an `else`.
    fn branch(&mut self, mutable: &str, lens_cond: &str, oracle_cond: &str) {
        self.lens_line(format!("if {lens_cond} {{"));
        self.o(format!("if {oracle_cond} {{"));
        self.indent += 1;
        let compound = self.rng.chance(50);
        self.assign(mutable, compound);
        self.indent -= 1;
        if self.rng.chance(40) {
            self.both("} else {".into());
            self.indent += 1;
            let compound = self.rng.chance(50);
            self.assign(mutable, compound);
            self.indent -= 1;
        }
        self.both("}".into());
    }

    /// An effectful call's oracle: the value the `n`-th call returns, `n` counted in `fx`.
    fn effect(&mut self, value: &str) -> String {
        let e = self.tmp();
        self.o(format!("let {e} = {value}(fx);"));
        self.o("fx += 1;".into());
        e
    }

    /// One part of a loop body (or of a block in one); returns how many effectful calls it
    /// makes each time it runs (always the same: none sits in a branch).
    fn part(&mut self, mutable: &str, depth: usize) -> usize {
        let mut choices = vec![0];
        if self.effectful {
            choices.extend([1, 1, 2, 2]);
        }
        if self.masks {
            choices.extend([3, 4]);
        }
        if self.shadowing && depth == 0 {
            choices.extend([5, 5, 6]);
        }
        if self.heap {
            choices.extend([7, 7]);
        }
        match choices[self.rng.below(choices.len())] {
            0 => {
                let c = self.rng.constant();
                let (l, v, d) = self.expr(2);
                self.lens_line(format!(
                    "{mutable} = {mutable} * {c} + {l} * (i as f64 + 1.0);"
                ));
                self.o(format!(
                    "{mutable} = {mutable} * {c} + {v} * (i as f64 + 1.0);"
                ));
                self.o(format!(
                    "d_{mutable} = d_{mutable} * {c} + {d} * (i as f64 + 1.0);"
                ));
                0
            }
            1 => {
                // An effect in a `let`: its value scales an update, and stays in scope.
                self.fresh += 1;
                let w = format!("w{}", self.fresh);
                let (c1, c2) = (self.rng.constant(), self.rng.constant());
                match self.rng.below(4) {
                    0 => {
                        self.lens_line(format!("let {w} = URN.draw::<f64>();"));
                        let e = self.effect("weight");
                        self.o(format!("let {w} = {e};"));
                    }
                    1 => {
                        self.lens_line(format!(
                            "let {w} = if coin::<f64>() {{ {c1} }} else {{ {c2} }};"
                        ));
                        let e = self.effect("flip");
                        self.o(format!("let {w} = if {e} {{ {c1} }} else {{ {c2} }};"));
                    }
                    2 => {
                        self.lens_line(format!("let {w} = if COIN() {{ {c1} }} else {{ {c2} }};"));
                        let e = self.effect("flip");
                        self.o(format!("let {w} = if {e} {{ {c1} }} else {{ {c2} }};"));
                    }
                    _ => {
                        // A `bool` from the effect, read by a later `if`.
                        let f = format!("e{}", self.fresh);
                        self.lens_line(format!("let {f} = COIN();"));
                        let e = self.effect("flip");
                        self.o(format!("let {f} = {e};"));
                        self.lens_line(format!("let {w} = if {f} {{ {c1} }} else {{ {c2} }};"));
                        self.o(format!("let {w} = if {f} {{ {c1} }} else {{ {c2} }};"));
                        self.o(format!("let d_{w} = 0.0;"));
                        self.scalars.push(w.clone());
                        self.branch(mutable, &f, &f);
                        return 1;
                    }
                }
                self.o(format!("let d_{w} = 0.0;"));
                self.scalars.push(w.clone());
                self.update_scaled(mutable, &w, &w);
                1
            }
            2 => {
                // An effect in a condition.
                match self.rng.below(4) {
                    0 => {
                        let e = self.effect("flip");
                        self.branch(mutable, "coin::<f64>()", &e);
                    }
                    1 => {
                        let e = self.effect("flip");
                        self.branch(mutable, "COIN()", &e);
                    }
                    2 => {
                        let c = self.rng.constant();
                        let w = self.effect("weight");
                        let e = self.tmp();
                        self.o(format!("let {e} = {w} > {c};"));
                        self.branch(mutable, &format!("URN.draw::<f64>() > {c}"), &e);
                    }
                    _ => {
                        let e = self.effect("flip");
                        self.lens_line("match coin::<f64>() {".into());
                        self.o(format!("match {e} {{"));
                        for arm in ["true", "false"] {
                            self.indent += 1;
                            self.both(format!("{arm} => {{"));
                            self.indent += 1;
                            let compound = self.rng.chance(50);
                            self.assign(mutable, compound);
                            self.indent -= 1;
                            self.both("}".into());
                            self.indent -= 1;
                        }
                        self.both("}".into());
                    }
                }
                1
            }
            3 => {
                let j = ["i % 3", "(i + 1) % 3", "2 - i % 3"][self.rng.below(3)];
                self.branch(mutable, &format!("mask[{j}]"), &format!("mask[{j}]"));
                0
            }
            4 => {
                let j = ["i % 2", "(i + 1) % 2"][self.rng.below(2)];
                if self.vector {
                    let c = self.rng.constant();
                    let (l, v, d) = self.expr(2);
                    self.lens_line(format!("{mutable} = {mutable} * {c} + v[at[{j}]] * {l};"));
                    // The change first: `{v}` may be `{mutable}` itself.
                    self.o(format!(
                        "d_{mutable} = d_{mutable} * {c} + d_v[at[{j}]] * {v} + v[at[{j}]] * {d};"
                    ));
                    self.o(format!("{mutable} = {mutable} * {c} + v[at[{j}]] * {v};"));
                } else {
                    let a = format!("(at[{j}] as f64 + 1.0)");
                    self.update_scaled(mutable, &a, &a);
                }
                0
            }
            5 => {
                // A block shadowing a name used outside it, read again after the block.
                let shadowable: Vec<String> = self
                    .scalars
                    .iter()
                    .filter(|s| *s != mutable)
                    .cloned()
                    .collect();
                let name = shadowable[self.rng.below(shadowable.len())].clone();
                self.both("{".into());
                self.indent += 1;
                let saved = self.scalars.clone();
                self.shadow(&name);
                if self.rng.chance(40) {
                    let c = self.rng.constant();
                    let (l, v, d) = self.expr(1);
                    self.lens_line(format!("let {name} = {name} * {c} + {l};"));
                    self.o(format!("let {name} = {name} * {c} + {v};"));
                    self.o(format!("let d_{name} = d_{name} * {c} + {d};"));
                }
                let c = self.rng.constant();
                let (l, v, d) = self.expr(1);
                self.lens_line(format!("{mutable} = {mutable} * {c} + {name} * {l};"));
                self.o(format!(
                    "d_{mutable} = d_{mutable} * {c} + d_{name} * {v} + {name} * {d};"
                ));
                self.o(format!("{mutable} = {mutable} * {c} + {name} * {v};"));
                let effects = if self.rng.chance(50) {
                    self.part(mutable, depth + 1)
                } else {
                    0
                };
                self.scalars = saved;
                self.indent -= 1;
                self.both("}".into());
                let c = self.rng.constant();
                self.lens_line(format!("{mutable} = {mutable} + {name} * {c};"));
                self.o(format!("{mutable} = {mutable} + {name} * {c};"));
                self.o(format!("d_{mutable} = d_{mutable} + d_{name} * {c};"));
                effects
            }
            7 => {
                // A heap vector given away (a clone moved into an operation), then read by
                // entry.
                self.fresh += 1;
                let (h, y) = (format!("h{}", self.fresh), format!("y{}", self.fresh));
                let (la, va, da) = self.expr(1);
                self.lens_line(format!("let {h} = to_heap(v * {la});"));
                self.o(format!("let {h} = v * {va};"));
                self.o(format!("let d_{h} = d_v * {va} + v * {da};"));
                let (lq, vq, dq) = match self.rng.below(3) {
                    0 => {
                        let c = self.rng.constant();
                        self.lens_line(format!("let {y} = {h}.clone() * {c};"));
                        self.o(format!("let {y} = {h} * {c};"));
                        self.o(format!("let d_{y} = d_{h} * {c};"));
                        (
                            format!("{y}[(i % 3, 0)]"),
                            format!("{y}[i % 3]"),
                            format!("d_{y}[i % 3]"),
                        )
                    }
                    1 => {
                        self.lens_line(format!("let {y} = to_static({h}.clone());"));
                        self.o(format!("let {y} = {h};"));
                        self.o(format!("let d_{y} = d_{h};"));
                        (
                            format!("{y}.sum()"),
                            format!("{y}.sum()"),
                            format!("d_{y}.sum()"),
                        )
                    }
                    _ => {
                        self.lens_line(format!("let {y} = {h}.clone().norm_squared();"));
                        self.o(format!("let {y} = {h}.norm_squared();"));
                        self.o(format!("let d_{y} = 2.0 * {h}.dot(&d_{h});"));
                        (y.clone(), y.clone(), format!("d_{y}"))
                    }
                };
                let k = self.rng.below(3);
                let entry = if self.rng.chance(50) {
                    format!("{h}[({k}, 0)]")
                } else {
                    format!("{h}[{k}]")
                };
                let c = self.rng.constant();
                let (l, v, d) = self.expr(1);
                self.lens_line(format!(
                    "{mutable} = {mutable} * {c} + {lq} + {entry} * {l};"
                ));
                self.o(format!(
                    "d_{mutable} = d_{mutable} * {c} + {dq} + d_{h}[{k}] * {v} + {h}[{k}] * {d};"
                ));
                self.o(format!(
                    "{mutable} = {mutable} * {c} + {vq} + {h}[{k}] * {v};"
                ));
                0
            }
            _ => {
                // A block expression shadowing a name inside.
                let shadowable: Vec<String> = self
                    .scalars
                    .iter()
                    .filter(|s| *s != mutable)
                    .cloned()
                    .collect();
                let name = shadowable[self.rng.below(shadowable.len())].clone();
                self.fresh += 1;
                let u = format!("u{}", self.fresh);
                self.lens_line(format!("let {u} = {{"));
                self.o(format!("let ({u}, d_{u}) = {{"));
                self.indent += 1;
                let saved = self.scalars.clone();
                self.shadow(&name);
                let (l, v, d) = self.expr(1);
                self.lens_line(format!("{name} * {l}"));
                self.o(format!("({name} * {v}, d_{name} * {v} + {name} * {d})"));
                self.scalars = saved;
                self.indent -= 1;
                self.both("};".into());
                self.scalars.push(u.clone());
                let c = self.rng.constant();
                self.lens_line(format!("{mutable} = {mutable} * {c} + {u} + {name};"));
                self.o(format!("{mutable} = {mutable} * {c} + {u} + {name};"));
                self.o(format!(
                    "d_{mutable} = d_{mutable} * {c} + d_{u} + d_{name};"
                ));
                0
            }
        }
    }

    /// `let name = ..;` shadowing `name`, sometimes reading it.
    fn shadow(&mut self, name: &str) {
        let (l, v, d) = self.expr(2);
        if self.rng.chance(50) {
            let c = self.rng.constant();
            self.lens_line(format!("let {name} = {name} * {c} + {l};"));
            self.o(format!("let {name} = {name} * {c} + {v};"));
            self.o(format!("let d_{name} = d_{name} * {c} + {d};"));
        } else {
            self.lens_line(format!("let {name} = {l};"));
            self.o(format!("let {name} = {v};"));
            self.o(format!("let d_{name} = {d};"));
        }
    }

    /// A loop over a constant range of one to three parts; its names end with it.
    fn kinds_loop(&mut self, mutable: &str) {
        let n = 1 + self.rng.below(4);
        self.both(format!("for i in 0..{n} {{"));
        self.indent += 1;
        let saved = self.scalars.clone();
        let parts = 1 + self.rng.below(3);
        let mut effects = 0;
        for _ in 0..parts {
            effects += self.part(mutable, 0);
        }
        // Several parts compound (a cube of a cube per iteration): each iteration ends by
        // bringing the value back to (-3, 3), near the identity, so it stays finite.
        self.lens_line(format!("{mutable} = 3.0 * ({mutable} / 3.0).tanh();"));
        self.o(format!(
            "d_{mutable} = (1.0 - ({mutable} / 3.0).tanh() * ({mutable} / 3.0).tanh()) * d_{mutable};"
        ));
        self.o(format!("{mutable} = 3.0 * ({mutable} / 3.0).tanh();"));
        self.scalars = saved;
        self.indent -= 1;
        self.both("}".into());
        self.effects += n * effects;
    }
}

/// The effects the section's programs call, and the oracle's knowledge of them: the `n`-th
/// call since `reset()` returns `flip(n)` or `weight(n)`.
const KINDS_PRELUDE: &str = r#"
thread_local! {
    static THROWS: Cell<usize> = const { Cell::new(0) };
}

fn throw() -> usize {
    THROWS.with(|c| {
        let n = c.get();
        c.set(n + 1);
        n
    })
}

fn throws() -> usize {
    THROWS.with(Cell::get)
}

fn reset() {
    THROWS.with(|c| c.set(0));
}

fn flip(n: usize) -> bool {
    (n * 7 + 3) % 5 < 3
}

fn weight(n: usize) -> f64 {
    [1.0, 0.0, 0.5, -0.75, 1.25][(n * 3 + 1) % 5]
}

/// Generic, to be called with a turbofish.
#[allow(clippy::extra_unused_type_parameters)]
fn coin<T>() -> bool {
    flip(throw())
}

#[allow(non_snake_case)]
fn COIN() -> bool {
    flip(throw())
}

struct Urn;
impl Urn {
    fn draw<T>(&self) -> f64 {
        weight(throw())
    }
}
static URN: Urn = Urn;

/// After a run: each effectful call ran once per iteration, never again in the reverse.
fn ran(name: &str, what: &str, want: usize) {
    let got = throws();
    assert_eq!(got, want, "{name}: {what}: the effects ran {got} times, not {want}");
}
"#;

/// Issue 42's section: `kinds` functions from their own stream (so the main corpus is
/// unchanged), in a module of their own with the helpers; returns the module's text.
fn kinds_section(seed: u64, kinds: usize, models: usize) -> String {
    let mut rng = Rng::new(seed ^ 0x4242_4242_4242_4242);
    let mut out = String::new();
    writeln!(
        out,
        "\n// Issue 42's kinds (`h0` to `h{}`, from their own stream): effectful calls in loops \
         (a turbofish call, an upper-case function, a method with a turbofish on a static; in a \
         `let` and in a condition), `#[nodiff]` masks `[bool; 3]` and indices `[usize; 2]`, \
         shadowing in nested blocks in loops, helpers named like the prelude's \
         activations, and heap vectors given away then read by entry. Each `hN` is checked as the `gN` are, and each run of `hN` or `hN_rev` \
         must call the effects exactly once per iteration.\n\
         mod issue42 {{\n\
         use paralens::prelude::*;\n\
         use core::cell::Cell;\n\
         use super::{{check_all, unit, vec3}};\n{KINDS_PRELUDE}",
        kinds.saturating_sub(1)
    )
    .unwrap();
    let mut checks = String::new();
    for (name, ty, value, tangent) in HELPERS {
        writeln!(
            out,
            "\n/// Named like the prelude's `{name}`, and another function.\n#[lens(name = {ty})]\n\
             fn {name}(x: f64) -> f64 {{\n    {value}\n}}\n\n\
             fn {name}_tangent(x: f64, dx: f64) -> (f64, f64) {{\n    ({value}, {tangent})\n}}"
        )
        .unwrap();
        writeln!(
            checks,
            "    check_all(\"{name}\", (1, false), &|x| {name}(x[0]), &|x| vec![{name}_rev(x[0], 1.0)], \
             &|x, k| {name}_tangent(x[0], unit(1, k)[0]));"
        )
        .unwrap();
    }
    for n in 0..kinds {
        let scalars = 1 + rng.below(3);
        let primary = n % 5;
        let vector = primary == 4 || rng.chance(40);
        let names: Vec<String> = ["a", "b", "c"][..scalars]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let name = format!("h{n}");
        let mut g = Gen {
            rng: &mut rng,
            lens: String::new(),
            oracle: String::new(),
            scalars: names.clone(),
            vector,
            fresh: 0,
            earlier: &[],
            indent: 1,
            helpers: false,
            effectful: false,
            masks: false,
            shadowing: false,
            heap: false,
            effects: 0,
        };
        g.effectful = primary == 0 || g.rng.chance(30);
        g.masks = primary == 1 || g.rng.chance(25);
        g.shadowing = primary == 2 || g.rng.chance(35);
        g.helpers = primary == 3 || g.rng.chance(30);
        g.heap = vector && (primary == 4 || g.rng.chance(20));
        if g.effectful {
            g.o("let mut fx = 0usize;".into());
        }
        let (l0, v0, d0) = g.expr(2);
        g.lens_line(format!("let mut m = {l0};"));
        g.o(format!("let mut m = {v0};"));
        g.o(format!("let mut d_m = {d0};"));
        g.scalars.push("m".into());
        if g.rng.chance(50) {
            let (l, v, d) = g.expr(2);
            g.lens_line(format!("let t = {l};"));
            g.o(format!("let t = {v};"));
            g.o(format!("let d_t = {d};"));
            g.scalars.push("t".into());
        }
        let statements = 1 + g.rng.below(3);
        for _ in 0..statements {
            if g.rng.chance(20) {
                g.statement("m");
            }
            g.kinds_loop("m");
        }
        let (l, v, d) = g.expr(2);
        g.lens_line(format!("m * {l} + m"));
        g.o(format!("(m * {v} + m, d_m * {v} + m * {d} + d_m)"));
        let (lens, oracle, effects, masks) = (g.lens, g.oracle, g.effects, g.masks);

        let mut args: Vec<String> = names.iter().map(|a| format!("{a}: f64")).collect();
        let mut dargs: Vec<String> = names.iter().map(|a| format!("d_{a}: f64")).collect();
        let mut call: Vec<String> = (0..scalars).map(|k| format!("x[{k}]")).collect();
        let mut dcall: Vec<String> = (0..scalars).map(|k| format!("u[{k}]")).collect();
        let mut grads: Vec<String> = (0..scalars).map(|k| format!("g.{k}")).collect();
        if vector {
            args.push("v: SVector<f64, 3>".into());
            dargs.push("d_v: SVector<f64, 3>".into());
            call.push(format!("vec3(&x[{scalars}..])"));
            dcall.push(format!("vec3(&u[{scalars}..])"));
            grads.extend((0..3).map(|j| format!("g.{scalars}[{j}]")));
        }
        if scalars == 1 && !vector {
            grads = vec!["g".into()];
        }
        let mut lens_args = args.clone();
        let mut oracle_args = args;
        if masks {
            let mask: Vec<&str> = (0..3)
                .map(|_| if rng.chance(50) { "true" } else { "false" })
                .collect();
            let at: Vec<String> = (0..2).map(|_| rng.below(3).to_string()).collect();
            lens_args.push("#[nodiff] mask: [bool; 3]".into());
            lens_args.push("#[nodiff] at: [usize; 2]".into());
            oracle_args.push("mask: [bool; 3]".into());
            oracle_args.push("at: [usize; 2]".into());
            call.push(format!("[{}]", mask.join(", ")));
            call.push(format!("[{}]", at.join(", ")));
        }
        let len = scalars + if vector { 3 } else { 0 };
        writeln!(
            out,
            "\n#[lens]\nfn {name}({}) -> f64 {{\n{lens}}}",
            lens_args.join(", ")
        )
        .unwrap();
        writeln!(
            out,
            "\n#[allow(clippy::too_many_arguments)]\nfn {name}_tangent({}, {}) -> (f64, f64) {{\n{oracle}}}",
            oracle_args.join(", "),
            dargs.join(", ")
        )
        .unwrap();
        let call = call.join(", ");
        writeln!(
            checks,
            "    check_all(\n        \"{name}\",\n        ({scalars}, {vector}),\n        \
             &|x| {{ reset(); let y = {name}({call}); ran(\"{name}\", \"value\", {effects}); y }},\n        \
             &|x| {{ reset(); let g = {name}_rev({call}, 1.0); ran(\"{name}\", \"reverse\", {effects}); vec![{}] }},\n        \
             &|x, k| {{ let u = unit({len}, k); {name}_tangent({call}, {}) }},\n    );",
            grads.join(", "),
            dcall.join(", ")
        )
        .unwrap();
    }
    writeln!(
        out,
        "\n#[test]\nfn every_issue_42_kind_matches_the_oracle_and_finite_differences() {{\n{checks}}}"
    )
    .unwrap();
    out.push_str(&models_section(seed, models));
    out.push_str("}\n");
    out
}

/// The sub-models of the section's `para!` models: a stateful one, `Scaled` (`k w x`, with
/// `k = weight(n)` at its `n`-th call since `reset()`: a dropout's mask is the everyday case),
/// and the lens type of a `#[lens]` function with a parameter.
const MODELS_PRELUDE: &str = r#"
/// `k w x`, `k` the weight of this call: another value at every forward run.
#[derive(Clone, Copy, Debug, Default)]
pub struct Scaled;

impl Init for Scaled {
    type Param = f64;
    fn init_with<R: rand::Rng + ?Sized>(&self, _: &mut R) -> f64 {
        1.0
    }
}

impl Para<f64> for Scaled {
    type Param = f64;
    type Out = f64;
    fn vjp(&self, w: &f64, x: f64) -> (f64, impl FnOnce(f64, &mut f64) -> f64) {
        let (k, w) = (weight(throw()), *w);
        (k * w * x, move |dy, dw: &mut f64| {
            *dw += k * x * dy;
            k * w * dy
        })
    }
}

#[lens]
fn affine(#[param] w: f64, x: f64) -> f64 {
    w * x.tanh() + x
}
"#;

/// Issue 42's `para!` models (`p0` ...), from a stream of their own: bodies as the section's
/// functions have (effects, shadowing), over the entries of a vector input, with loops that
/// call a stateful sub-model and a `#[lens]` sub-model. Each is checked through `changes` and
/// `vjp_params` (which must agree) against a forward-mode oracle over the input and both
/// parameters, and finite differences; the effects (the stateful sub-model's included) run
/// once per iteration.
fn models_section(seed: u64, models: usize) -> String {
    let mut rng = Rng::new(seed ^ 0x5151_5151_5151_5151);
    let mut out = String::new();
    writeln!(
        out,
        "\n// Issue 42's `para!` models (`p0` to `p{}`): loops calling a stateful sub-model \
         (`Scaled`) and a `#[lens]` one (`Affine`), with effects and shadowing in their bodies.\n{MODELS_PRELUDE}",
        models.saturating_sub(1)
    )
    .unwrap();
    let mut checks = String::new();
    for n in 0..models {
        let name = format!("p{n}");
        let mut g = Gen {
            rng: &mut rng,
            lens: String::new(),
            oracle: String::new(),
            scalars: vec!["a".into(), "b".into(), "c".into()],
            vector: false,
            fresh: 0,
            earlier: &[],
            indent: 2,
            helpers: false,
            effectful: false,
            masks: false,
            shadowing: false,
            heap: false,
            effects: 0,
        };
        g.effectful = n % 2 == 0 || g.rng.chance(30);
        g.shadowing = n % 3 == 0 || g.rng.chance(35);
        // The oracle counts every effect, the sub-model's too, as `throw()` does.
        g.o("let mut fx = 0usize;".into());
        for (k, s) in ["a", "b", "c"].iter().enumerate() {
            g.lens_line(format!("let {s} = x[{k}];"));
            g.o(format!("let {s} = x[{k}];"));
            g.o(format!("let d_{s} = d_x[{k}];"));
        }
        let (l0, v0, d0) = g.expr(2);
        g.lens_line(format!("let mut m = {l0};"));
        g.o(format!("let mut m = {v0};"));
        g.o(format!("let mut d_m = {d0};"));
        g.scalars.push("m".into());
        let loops = 1 + g.rng.below(2);
        for _ in 0..loops {
            let iterations = 1 + g.rng.below(3);
            g.both(format!("for i in 0..{iterations} {{"));
            g.indent += 1;
            let saved = g.scalars.clone();
            let mut effects = 0;
            for _ in 0..1 + g.rng.below(2) {
                effects += g.part("m", 0);
            }
            if g.rng.chance(80) {
                // The stateful sub-model, after its operand's effects (Rust's order).
                let (l, v, d) = g.expr(1);
                let k = g.effect("weight");
                let (sv, sd) = (g.tmp(), g.tmp());
                g.lens_line(format!("m = m * 0.5 + self.s({l});"));
                g.o(format!("let {sv} = {k} * w_s * {v};"));
                g.o(format!("let {sd} = {k} * (d_w_s * {v} + w_s * {d});"));
                g.o(format!("d_m = d_m * 0.5 + {sd};"));
                g.o(format!("m = m * 0.5 + {sv};"));
                effects += 1;
            }
            if g.rng.chance(60) {
                let t = g.tmp();
                g.lens_line("m = self.a(m);".into());
                g.o(format!("let {t} = m.tanh();"));
                g.o(format!(
                    "d_m = d_w_a * {t} + w_a * (1.0 - {t} * {t}) * d_m + d_m;"
                ));
                g.o(format!("m = w_a * {t} + m;"));
            }
            g.lens_line("m = 3.0 * (m / 3.0).tanh();".into());
            g.o("d_m = (1.0 - (m / 3.0).tanh() * (m / 3.0).tanh()) * d_m;".into());
            g.o("m = 3.0 * (m / 3.0).tanh();".into());
            g.scalars = saved;
            g.indent -= 1;
            g.both("}".into());
            g.effects += iterations * effects;
        }
        let (l, v, d) = g.expr(2);
        g.lens_line(format!("m * {l} + m"));
        g.o(format!("(m * {v} + m, d_m * {v} + m * {d} + d_m)"));
        let (lens, oracle, effects) = (g.lens, g.oracle, g.effects);
        let ty = format!("P{n}");
        writeln!(
            out,
            "\npara! {{\n    #[derive(Debug, Default)]\n    pub struct {ty} {{\n        s: Scaled,\n        a: Affine,\n    }}\n    \
             fn forward(&self, x: SVector<f64, 3>) -> f64 {{\n{lens}    }}\n}}"
        )
        .unwrap();
        writeln!(
            out,
            "\n#[allow(clippy::too_many_arguments)]\nfn {name}_tangent(x: SVector<f64, 3>, w_s: f64, w_a: f64, d_x: SVector<f64, 3>, d_w_s: f64, d_w_a: f64) -> (f64, f64) {{\n{oracle}}}"
        )
        .unwrap();
        writeln!(
            checks,
            "    check_all(\n        \"{name}\",\n        (2, true),\n        \
             &|z| {{ reset(); let y = {ty}::default().forward(&{ty}Params {{ s: z[0], a: z[1] }}, vec3(&z[2..])); ran(\"{name}\", \"value\", {effects}); y }},\n        \
             &|z| {{ let p = {ty}Params {{ s: z[0], a: z[1] }}; reset(); let (dp, dx) = {ty}::default().changes(&p, vec3(&z[2..]), 1.0); ran(\"{name}\", \"changes\", {effects}); \
             let model = {ty}::default(); reset(); let (_, pull) = model.vjp_params(&p, vec3(&z[2..])); let mut q = {ty}Params {{ s: 0.0, a: 0.0 }}; pull(1.0, &mut q); ran(\"{name}\", \"vjp_params\", {effects}); \
             assert_eq!((q.s, q.a), (dp.s, dp.a), \"{name}: vjp_params against changes\"); vec![dp.s, dp.a, dx[0], dx[1], dx[2]] }},\n        \
             &|z, k| {{ let u = unit(5, k); reset(); {name}_tangent(vec3(&z[2..]), z[0], z[1], vec3(&u[2..]), u[0], u[1]) }},\n    );"
        )
        .unwrap();
    }
    writeln!(
        out,
        "\n#[test]\nfn every_issue_42_model_matches_the_oracle_and_finite_differences() {{\n{checks}}}"
    )
    .unwrap();
    out
}

fn paren(s: &str) -> String {
    if s.starts_with('(') && s.ends_with(')') || !s.contains(' ') {
        s.to_string()
    } else {
        format!("({s})")
    }
}

/// The whole corpus: `count` functions from `seed`, and the test that checks them; then
/// issue 42's section of `kinds` functions and `models` `para!` models, from streams of
/// their own.
pub fn generate(seed: u64, count: usize, kinds: usize, models: usize) -> String {
    let mut rng = Rng::new(seed);
    let mut out = String::new();
    writeln!(
        out,
        "//! GENERATED by `tests/corpus/generator.rs` (seed {seed}, {count} functions); do not edit.\n\
         //! Regenerate with `PARALENS_REGENERATE=1 cargo test --test corpus`.\n\
         //!\n\
         //! Each `gN` is a random `#[lens]` program; `gN_tangent` is the same program in forward\n\
         //! mode, written by the generator (the oracle). The test compares `gN_rev` with the\n\
         //! oracle and with central finite differences at several points.\n\
         #![deny(warnings)]\n\
         #![allow(unused_mut, unused_variables, unused_parens)]\n\
         #![allow(unused_assignments, dead_code)]\n\
         #![allow(clippy::all, clippy::pedantic)]\n\n\
         // Generated code is kept as generated: `cargo fmt` leaves the module alone.\n\
         #[rustfmt::skip]\n\
         mod generated {{\n\
         use paralens::prelude::*;\n"
    )
    .unwrap();
    let mut sigs: Vec<Sig> = Vec::new();
    let mut checks = String::new();
    for n in 0..count {
        let scalars = 1 + rng.below(3);
        let vector = rng.chance(30);
        let names: Vec<String> = ["a", "b", "c"][..scalars]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let name = format!("g{n}");
        let mut g = Gen {
            rng: &mut rng,
            lens: String::new(),
            oracle: String::new(),
            scalars: names.clone(),
            vector,
            fresh: 0,
            earlier: &sigs,
            indent: 1,
            helpers: false,
            effectful: false,
            masks: false,
            shadowing: false,
            heap: false,
            effects: 0,
        };
        let (l0, v0, d0) = g.expr(2);
        g.lens_line(format!("let mut m = {l0};"));
        g.o(format!("let mut m = {v0};"));
        g.o(format!("let mut d_m = {d0};"));
        g.scalars.push("m".into());
        let statements = 2 + g.rng.below(4);
        for _ in 0..statements {
            g.statement("m");
        }
        // The result always reads `m`, so its changes (mutations, branches, loops) count.
        let (l, v, d) = g.expr(2);
        g.lens_line(format!("m * {l} + m"));
        g.o(format!("(m * {v} + m, d_m * {v} + m * {d} + d_m)"));
        let (lens, oracle) = (g.lens, g.oracle);

        let mut args: Vec<String> = names.iter().map(|a| format!("{a}: f64")).collect();
        let mut dargs: Vec<String> = names.iter().map(|a| format!("d_{a}: f64")).collect();
        if vector {
            args.push("v: SVector<f64, 3>".into());
            dargs.push("d_v: SVector<f64, 3>".into());
        }
        writeln!(
            out,
            "\n#[lens]\nfn {name}({}) -> f64 {{\n{lens}}}",
            args.join(", ")
        )
        .unwrap();
        writeln!(
            out,
            "\n#[allow(clippy::too_many_arguments)]\nfn {name}_tangent({}, {}) -> (f64, f64) {{\n{oracle}}}",
            args.join(", "),
            dargs.join(", ")
        )
        .unwrap();
        writeln!(
            checks,
            "    check_{}(\"{name}\", {name}, {name}_rev, {name}_tangent);",
            arity_key(scalars, vector)
        )
        .unwrap();
        sigs.push(Sig {
            name,
            scalars,
            vector,
        });
    }
    writeln!(
        out,
        "\n#[test]\nfn every_generated_gradient_matches_the_oracle_and_finite_differences() {{\n{checks}}}"
    )
    .unwrap();
    out.push_str(&kinds_section(seed, kinds, models));
    out.push_str(CHECKERS);
    out.push_str("}\n");
    out
}

fn arity_key(scalars: usize, vector: bool) -> String {
    format!("{scalars}{}", if vector { "v" } else { "" })
}

/// The checking functions, one per signature shape: at several points, the reverse
/// derivative against the oracle (to 1e-9, relative) and against central finite differences
/// (to 1e-6 relative plus twice their estimated error, where the function is smooth at the
/// point).
const CHECKERS: &str = r#"
const POINTS: [[f64; 3]; 4] = [[0.3, -0.7, 1.1], [-1.2, 0.4, 0.9], [0.8, 1.3, -0.5], [-0.4, -1.1, 0.2]];
const V: [[f64; 3]; 4] = [[0.5, -0.2, 0.9], [-0.6, 0.3, 0.1], [1.1, -0.8, 0.4], [0.2, 0.7, -1.0]];

fn agree(name: &str, what: &str, got: f64, want: f64, tol: f64) {
    let scale = 1.0 + want.abs();
    assert!(
        (got - want).abs() <= tol * scale,
        "{name}: {what}: reverse {got}, expected {want}"
    );
}

/// The derivative along coordinate `k` by central differences, where the function is smooth
/// at the point: the one-sided differences on either side agree (at a kink of `max`/`min`,
/// a tie such as `0.5.max(1.25 * 0.4)`, or a branch boundary, they do not).
/// Returns the estimate and a bound of its error: the difference from the estimate with twice
/// the step (central differences err as `h^2`, so that difference is three times the error),
/// plus rounding.
fn finite_difference(f: &dyn Fn(&[f64]) -> f64, x: &[f64], k: usize) -> Option<(f64, f64)> {
    let h = 1e-6;
    let at = |s: f64| {
        let mut p = x.to_vec();
        p[k] += s;
        f(&p)
    };
    let (plus, zero, minus) = (at(h), at(0.0), at(-h));
    let (forward, backward) = ((plus - zero) / h, (zero - minus) / h);
    let central = (plus - minus) / (2.0 * h);
    if (forward - backward).abs() > 1e-4 * (1.0 + central.abs()) {
        return None;
    }
    let wide = (at(2.0 * h) - at(-2.0 * h)) / (4.0 * h);
    let rounding = 1e-15 * zero.abs().max(1.0) / h;
    Some((central, (wide - central).abs() + rounding))
}

/// Checks one function at every point: `grad` is the reverse derivative, `tangent(k)` the
/// oracle's derivative along coordinate `k`, `value` the function on a flat point.
fn check_all(
    name: &str,
    (scalars, vector): (usize, bool),
    value: &dyn Fn(&[f64]) -> f64,
    grad: &dyn Fn(&[f64]) -> Vec<f64>,
    tangent: &dyn Fn(&[f64], usize) -> (f64, f64),
) {
    for (p, v) in POINTS.iter().zip(V.iter()) {
        let mut x: Vec<f64> = p[..scalars].to_vec();
        if vector {
            x.extend_from_slice(v);
        }
        let g = grad(&x);
        for k in 0..x.len() {
            let (f0, dk) = tangent(&x, k);
            agree(name, "value", value(&x), f0, 1e-12);
            agree(name, &format!("d/dx{k} against the oracle"), g[k], dk, 1e-9);
            if let Some((fd, err)) = finite_difference(value, &x, k) {
                assert!(
                    (g[k] - fd).abs() <= 1e-6 * (1.0 + fd.abs()) + 2.0 * err,
                    "{name}: d/dx{k}: reverse {}, finite differences {fd} (error bound {err})",
                    g[k]
                );
            }
        }
    }
}

fn unit(n: usize, k: usize) -> Vec<f64> {
    (0..n).map(|i| if i == k { 1.0 } else { 0.0 }).collect()
}

fn check_1(name: &str, f: fn(f64) -> f64, r: fn(f64, f64) -> f64, t: fn(f64, f64) -> (f64, f64)) {
    check_all(name, (1, false), &|x| f(x[0]), &|x| vec![r(x[0], 1.0)], &|x, k| t(x[0], unit(1, k)[0]));
}

fn check_2(
    name: &str,
    f: fn(f64, f64) -> f64,
    r: fn(f64, f64, f64) -> (f64, f64),
    t: fn(f64, f64, f64, f64) -> (f64, f64),
) {
    check_all(
        name,
        (2, false),
        &|x| f(x[0], x[1]),
        &|x| {
            let g = r(x[0], x[1], 1.0);
            vec![g.0, g.1]
        },
        &|x, k| {
            let u = unit(2, k);
            t(x[0], x[1], u[0], u[1])
        },
    );
}

fn check_3(
    name: &str,
    f: fn(f64, f64, f64) -> f64,
    r: fn(f64, f64, f64, f64) -> (f64, f64, f64),
    t: fn(f64, f64, f64, f64, f64, f64) -> (f64, f64),
) {
    check_all(
        name,
        (3, false),
        &|x| f(x[0], x[1], x[2]),
        &|x| {
            let g = r(x[0], x[1], x[2], 1.0);
            vec![g.0, g.1, g.2]
        },
        &|x, k| {
            let u = unit(3, k);
            t(x[0], x[1], x[2], u[0], u[1], u[2])
        },
    );
}

fn vec3(x: &[f64]) -> SVector<f64, 3> {
    SVector::<f64, 3>::new(x[0], x[1], x[2])
}

fn check_1v(
    name: &str,
    f: fn(f64, SVector<f64, 3>) -> f64,
    r: fn(f64, SVector<f64, 3>, f64) -> (f64, SVector<f64, 3>),
    t: fn(f64, SVector<f64, 3>, f64, SVector<f64, 3>) -> (f64, f64),
) {
    let split = |x: &[f64]| (x[0], vec3(&x[1..]));
    check_all(
        name,
        (1, true),
        &|x| {
            let (a, v) = split(x);
            f(a, v)
        },
        &|x| {
            let (a, v) = split(x);
            let (ga, gv) = r(a, v, 1.0);
            vec![ga, gv[0], gv[1], gv[2]]
        },
        &|x, k| {
            let (a, v) = split(x);
            let u = unit(4, k);
            t(a, v, u[0], vec3(&u[1..]))
        },
    );
}

fn check_2v(
    name: &str,
    f: fn(f64, f64, SVector<f64, 3>) -> f64,
    r: fn(f64, f64, SVector<f64, 3>, f64) -> (f64, f64, SVector<f64, 3>),
    t: fn(f64, f64, SVector<f64, 3>, f64, f64, SVector<f64, 3>) -> (f64, f64),
) {
    let split = |x: &[f64]| (x[0], x[1], vec3(&x[2..]));
    check_all(
        name,
        (2, true),
        &|x| {
            let (a, b, v) = split(x);
            f(a, b, v)
        },
        &|x| {
            let (a, b, v) = split(x);
            let (ga, gb, gv) = r(a, b, v, 1.0);
            vec![ga, gb, gv[0], gv[1], gv[2]]
        },
        &|x, k| {
            let (a, b, v) = split(x);
            let u = unit(5, k);
            t(a, b, v, u[0], u[1], vec3(&u[2..]))
        },
    );
}

fn check_3v(
    name: &str,
    f: fn(f64, f64, f64, SVector<f64, 3>) -> f64,
    r: fn(f64, f64, f64, SVector<f64, 3>, f64) -> (f64, f64, f64, SVector<f64, 3>),
    t: fn(f64, f64, f64, SVector<f64, 3>, f64, f64, f64, SVector<f64, 3>) -> (f64, f64),
) {
    let split = |x: &[f64]| (x[0], x[1], x[2], vec3(&x[3..]));
    check_all(
        name,
        (3, true),
        &|x| {
            let (a, b, c, v) = split(x);
            f(a, b, c, v)
        },
        &|x| {
            let (a, b, c, v) = split(x);
            let (ga, gb, gc, gv) = r(a, b, c, v, 1.0);
            vec![ga, gb, gc, gv[0], gv[1], gv[2]]
        },
        &|x, k| {
            let (a, b, c, v) = split(x);
            let u = unit(6, k);
            t(a, b, c, v, u[0], u[1], u[2], vec3(&u[3..]))
        },
    );
}
"#;
