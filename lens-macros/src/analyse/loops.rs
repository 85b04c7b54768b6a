//! `for` loops over a range whose trip count is bounded by a constant.
//!
//! A loop is a block run once per iteration. The `let mut` bindings its body assigns are
//! loop-carried: the body starts from fresh bindings of them (the value the last iteration
//! left) and hands on their new values, so an iteration is a function from the carried values
//! (and the differentiated values it reads from outside) to the carried values. The reverse
//! pass runs the iterations last first, handing the carried changes from one to the one before
//! and adding the changes of the outside values; it either runs each body again from the
//! carried values kept for it (see `recompute.rs`) or pops the pullbacks the forward pass kept
//! on a tape of fixed size (`Tape<_, N>`, `N` read from the range).

use super::{Analyser, Block, Op, Operand, Part, Stmt, StmtKind, VarId, node_key};
use proc_macro2::TokenStream;
use quote::{ToTokens, quote};
use std::collections::BTreeMap;
use syn::spanned::Spanned;
use syn::{BinOp, Expr, Ident, Lit, Pat};

/// A differentiated `for` loop (see the module's documentation).
pub struct Loop {
    /// The loop's pattern as written (`i` or `_`): forward-only data.
    pub pat: TokenStream,
    /// The range as written, with its `.rev()` and `.step_by(k)`.
    pub range: TokenStream,
    /// The range is double-ended for every integer type of its counter (no `.step_by(k)`:
    /// a stepped range is double-ended only where the range under it has an exact size,
    /// which `a..=b` and `a..b` of `i64` have not), so the reverse runs it with `rev()`.
    pub double_ended: bool,
    /// A constant `N` such that the loop runs at most `N + 1` times (the tape's size).
    pub bound: TokenStream,
    /// The body; its value is the tuple of the carried bindings' values at its end.
    pub body: Block,
    /// The carried bindings as the body sees them at its start.
    pub carried: Vec<VarId>,
    /// The carried bindings' values before the loop.
    pub init: Vec<VarId>,
    /// Differentiated values from outside the loop that the body reads.
    pub free: Vec<VarId>,
    /// Type probes run before the loop (`probes.rs`), empty for most loops.
    pub probes: TokenStream,
}

/// What a trip count is bounded by: `base + plus` iterations.
struct Bound {
    base: TokenStream,
    plus: usize,
}

const WRITE: &str = "write `for i in 0..N` (or `0..=N`, `(0..N).rev()`, `(0..N).step_by(k)`) with `N` a literal, a `const` item or a const generic parameter";

impl Analyser<'_> {
    pub(super) fn for_loop(&mut self, f: &syn::ExprForLoop, out: &mut Vec<Stmt>) -> Operand {
        let unit = Operand::Const(quote!(()));
        let span = f.span();
        let pat_names = match &*f.pat {
            Pat::Ident(pi) if pi.by_ref.is_none() && pi.subpat.is_none() => {
                vec![(pi.ident.clone(), pi.mutability.is_some())]
            }
            Pat::Wild(_) => Vec::new(),
            other => {
                self.errors.at(
                    other,
                    format!(
                        "the pattern of a differentiated loop is a name or `_`, the counter of a range (not an iterator's items): {WRITE}, and read the entries as `v[i]` in the body"
                    ),
                );
                return unit;
            }
        };
        let mut exits = Exits {
            label: f.label.as_ref().map(|l| l.name.ident.to_string()),
            nested: 0,
            found: Vec::new(),
        };
        syn::visit::Visit::visit_block(&mut exits, &f.body);
        for (tokens, what) in exits.found {
            self.errors.at(
                tokens,
                format!("`{what}` in a differentiated loop is not supported: every iteration runs to its end; compute a flag and branch on it with `if` inside the body"),
            );
        }
        let Some(bound) = self.range_bound(&f.expr) else {
            return unit;
        };

        // The `let mut` bindings from outside that the body assigns.
        let mut assigned = Assigned(Vec::new());
        syn::visit::Visit::visit_block(&mut assigned, &f.body);
        let mut slots: Vec<(usize, usize)> = Vec::new();
        for name in assigned.0 {
            if pat_names.iter().any(|(p, _)| *p == name) {
                continue;
            }
            if let Some(slot) = self.lookup_slot(&name.to_string())
                && self.vars[self.scopes[slot.0][slot.1].1].mutable
                && !slots.contains(&slot)
            {
                slots.push(slot);
            }
        }
        slots.sort_unstable();

        // Forward-only bindings stay forward-only (changed in place, `n += 1`) unless the body
        // assigns them a differentiated value (`acc = acc + x` from `let mut acc = 0.0`):
        // then the body is analysed again with them carried.
        let mut carried_slots: Vec<(usize, usize)> = slots
            .iter()
            .copied()
            .filter(|s| self.vars[self.scopes[s.0][s.1].1].diff)
            .collect();
        let (body, carried, init, finals) = loop {
            let n_vars = self.vars.len();
            let scopes = self.scopes.clone();
            let frame = self.frames.last().cloned();
            let errors = std::mem::take(&mut *self.errors);
            let init: Vec<VarId> = carried_slots
                .iter()
                .map(|s| self.scopes[s.0][s.1].1)
                .collect();
            let carried: Vec<VarId> = carried_slots
                .iter()
                .map(|s| {
                    let old = self.scopes[s.0][s.1].1;
                    let ident = self.vars[old].ident.clone();
                    let p = self.new_var(ident, true, false);
                    self.vars[p].mutable = true;
                    self.scopes[s.0][s.1].1 = p;
                    p
                })
                .collect();
            let body = self.block_with(Part::Body(&f.body), pat_names.clone());
            let finals: BTreeMap<(usize, usize), VarId> = slots
                .iter()
                .map(|s| (*s, self.scopes[s.0][s.1].1))
                .collect();
            let grew: Vec<(usize, usize)> = slots
                .iter()
                .copied()
                .filter(|s| !carried_slots.contains(s) && self.vars[finals[s]].diff)
                .collect();
            if grew.is_empty() {
                let found = std::mem::replace(&mut *self.errors, errors);
                self.errors.merge(found);
                self.scopes = scopes;
                break (body, carried, init, finals);
            }
            // Undo this analysis and run it again with those bindings carried.
            self.vars.truncate(n_vars);
            self.scopes = scopes;
            if let (Some(f), Some(saved)) = (self.frames.last_mut(), frame) {
                *f = saved;
            }
            *self.errors = errors;
            carried_slots.extend(grew);
            carried_slots.sort_unstable();
        };
        let mut body = body;

        // The body's value: the carried bindings as it leaves them. Where a `let` of the body
        // hid one, the copy taken before it (see `keep_before_shadowing`).
        let elems: Vec<Operand> = carried_slots
            .iter()
            .map(|s| {
                let mut id = finals[s];
                if let Some(&(was, copy)) = body.kept.get(s)
                    && was == id
                {
                    id = copy;
                }
                Operand::Var(id)
            })
            .collect();
        let t = self.new_var(
            Ident::new(&format!("__t{}", self.vars.len()), span),
            true,
            true,
        );
        body.stmts.push(Stmt {
            kind: StmtKind::Let {
                target: t,
                ty: None,
                op: Box::new(Op::Tuple(elems)),
            },
            span,
        });
        body.result = Operand::Var(t);

        // The carried inputs are the body's own; the enclosing block must not see them as
        // values from outside.
        let free: Vec<VarId> = body
            .free
            .iter()
            .copied()
            .filter(|v| !carried.contains(v))
            .collect();
        self.check_outside_reads(free.len(), span, "loop body");
        if let Some(fr) = self.frames.last_mut() {
            for p in &carried {
                fr.used.remove(p);
            }
        }
        for &v in init.iter().chain(&free) {
            if self.vars[v].diff {
                self.use_var(v);
            }
        }
        let op = Op::Loop(Box::new(Loop {
            pat: f.pat.to_token_stream(),
            range: f.expr.to_token_stream(),
            probes: self.probes.get(&node_key(f)).cloned().unwrap_or_default(),
            double_ended: !steps(&f.expr),
            bound: bound.base,
            body,
            carried,
            init,
            free,
        }));
        let Operand::Var(value) = self.push_op(op, span, out) else {
            unreachable!("a loop is bound to a temporary")
        };
        // After the loop the carried names refer to what the last iteration left.
        let mut targets = Vec::new();
        for s in &carried_slots {
            let ident = self.vars[self.scopes[s.0][s.1].1].ident.clone();
            let id = self.new_var(ident, true, false);
            self.vars[id].mutable = true;
            if let Some(fr) = self.frames.last_mut() {
                fr.defined.insert(id);
            }
            self.scopes[s.0][s.1].1 = id;
            targets.push(Some(id));
        }
        self.use_var(value);
        out.push(Stmt {
            kind: StmtKind::Destructure {
                src: value,
                targets,
                array: false,
            },
            span,
        });
        unit
    }

    /// The constant bounding the trip count of `range` (its `.rev()` and `.step_by(k)` run
    /// no more often), or an error at the part that is not one.
    fn range_bound(&mut self, e: &Expr) -> Option<Bound> {
        match e {
            Expr::Paren(p) => self.range_bound(&p.expr),
            Expr::Group(g) => self.range_bound(&g.expr),
            Expr::MethodCall(m) if m.method == "rev" && m.args.is_empty() => {
                self.range_bound(&m.receiver)
            }
            Expr::MethodCall(m) if m.method == "step_by" && m.args.len() == 1 => {
                if self.mentions_diff(m.args.to_token_stream()) {
                    self.errors.at(
                        &m.args,
                        "the step of a differentiated loop is forward-only data",
                    );
                    return None;
                }
                self.range_bound(&m.receiver)
            }
            Expr::Range(r) => {
                if let Some(start) = r.start.as_deref()
                    && negative(start)
                {
                    self.errors.at(
                        start,
                        "a differentiated loop's range starts at 0 or later (its storage is sized by the end); shift the counter: `for j in 0..M { let k = j as i32 - 2; ... }`",
                    );
                    return None;
                }
                if let Some(start) = &r.start
                    && self.mentions_diff(start.to_token_stream())
                {
                    self.errors.at(
                        start,
                        "the start of a differentiated loop's range is forward-only data",
                    );
                    return None;
                }
                let Some(end) = &r.end else {
                    self.errors.at(
                        r,
                        format!("a differentiated loop needs a range with an end; {WRITE}"),
                    );
                    return None;
                };
                let mut b = self.end_bound(end)?;
                if matches!(r.limits, syn::RangeLimits::Closed(_)) {
                    b.plus += 1;
                }
                if b.plus > 1 {
                    self.errors.at(
                        end,
                        format!("this range may run `{} + 2` times, and a differentiated loop's storage holds at most `{} + 1` iterations for a bound `{}`; write `a..{} + 1` or `a..={}`", b.base, b.base, b.base, b.base, b.base),
                    );
                    return None;
                }
                Some(b)
            }
            other => {
                self.errors.at(
                    other,
                    format!("`{}` is not a range: a differentiated loop must run over a range whose trip count is bounded by a constant; {WRITE}", other.to_token_stream()),
                );
                None
            }
        }
    }

    /// `N`, `N - k`, `N / k`, `N + 1`, `8`: a constant bounding the value of `e`.
    fn end_bound(&mut self, e: &Expr) -> Option<Bound> {
        let runtime = |this: &mut Self, node: &Expr| {
            this.errors.at(
                node,
                format!("the trip count of a differentiated loop must be bounded by a constant, and `{}` is a value known only when the function runs; {WRITE}; for a range that depends on another loop's index (`0..i`), run over the constant range and skip the rest with `if j < i {{ .. }}`", node.to_token_stream()),
            );
            None
        };
        match e {
            Expr::Paren(p) => self.end_bound(&p.expr),
            Expr::Group(g) => self.end_bound(&g.expr),
            Expr::Lit(l) => match &l.lit {
                // The storage's size is a `usize`: `3i64` becomes `3`.
                Lit::Int(i) => {
                    let n = proc_macro2::Literal::usize_unsuffixed(i.base10_parse().ok()?);
                    Some(Bound {
                        base: n.to_token_stream(),
                        plus: 0,
                    })
                }
                _ => runtime(self, e),
            },
            Expr::Path(p) if p.qself.is_none() => {
                // A local binding (an argument, a `let`) is a runtime value; any other path
                // names a constant (a const generic parameter, a `const` item).
                match p.path.get_ident() {
                    Some(i) if self.lookup(&i.to_string()).is_some() => runtime(self, e),
                    // A const generic parameter is named as it is (it must be a `usize`);
                    // a `const` item of another integer type is converted.
                    Some(i) if self.const_params.contains(&i.to_string()) => Some(Bound {
                        base: e.to_token_stream(),
                        plus: 0,
                    }),
                    _ => Some(Bound {
                        base: quote!({ #e as usize }),
                        plus: 0,
                    }),
                }
            }
            Expr::Binary(b) if matches!(b.op, BinOp::Sub(_) | BinOp::Div(_)) => {
                if self.mentions_diff(b.right.to_token_stream()) {
                    return runtime(self, &b.right);
                }
                self.end_bound(&b.left)
            }
            Expr::Binary(b) if matches!(b.op, BinOp::Add(_)) => {
                let one = |x: &Expr| matches!(x, Expr::Lit(l) if matches!(&l.lit, Lit::Int(i) if i.base10_digits() == "1"));
                let inner = if one(&b.right) {
                    &b.left
                } else if one(&b.left) {
                    &b.right
                } else {
                    self.errors.at(
                        e,
                        format!(
                            "only `+ 1` can be added to a differentiated loop's bound; {WRITE}"
                        ),
                    );
                    return None;
                };
                let mut bound = self.end_bound(inner)?;
                bound.plus += 1;
                Some(bound)
            }
            Expr::Path(_) => runtime(self, e),
            other => {
                self.errors.at(
                    other,
                    format!("`{}` is not a bound a differentiated loop can read; the bound is a literal, a constant `N` (a `const` item or const generic parameter), `N - k`, `N / k` or `N + 1` (the loop's storage is sized by `N`); for a multiple of a const generic nest two loops (`for j in 0..2 {{ for i in 0..N {{ .. }} }}`), for anything else declare a `const` item", other.to_token_stream()),
                );
                None
            }
        }
    }
}

/// Names assigned (`x = ..`, `x += ..`) anywhere in a loop body, nested loops and branches
/// included (closures and items excepted).
struct Assigned(Vec<Ident>);

impl<'a> syn::visit::Visit<'a> for Assigned {
    fn visit_expr(&mut self, e: &'a Expr) {
        let left = match e {
            Expr::Assign(a) => Some(&*a.left),
            Expr::Binary(b) if super::compound_op(&b.op).is_some() => Some(&*b.left),
            _ => None,
        };
        // `v[i] = e` assigns `v`.
        let left = match left {
            Some(Expr::Index(ix)) => Some(&*ix.expr),
            other => other,
        };
        if let Some(Expr::Path(p)) = left
            && let Some(i) = p.path.get_ident()
            && !self.0.contains(i)
        {
            self.0.push(i.clone());
        }
        syn::visit::visit_expr(self, e);
    }
    fn visit_expr_closure(&mut self, _: &'a syn::ExprClosure) {}
    fn visit_item(&mut self, _: &'a syn::Item) {}
}

/// `break` and `continue` that leave or skip the loop being analysed: unlabelled ones outside
/// nested loops, and those naming its label anywhere (closures and items excepted).
struct Exits {
    label: Option<String>,
    nested: usize,
    found: Vec<(TokenStream, &'static str)>,
}

impl Exits {
    fn targets_us(&self, label: Option<&syn::Lifetime>) -> bool {
        match label {
            None => self.nested == 0,
            Some(l) => self.label.as_deref() == Some(&*l.ident.to_string()),
        }
    }
}

impl<'a> syn::visit::Visit<'a> for Exits {
    fn visit_expr_break(&mut self, b: &'a syn::ExprBreak) {
        if self.targets_us(b.label.as_ref()) {
            self.found.push((b.to_token_stream(), "break"));
        }
        syn::visit::visit_expr_break(self, b);
    }
    fn visit_expr_continue(&mut self, c: &'a syn::ExprContinue) {
        if self.targets_us(c.label.as_ref()) {
            self.found.push((c.to_token_stream(), "continue"));
        }
    }
    fn visit_expr_for_loop(&mut self, f: &'a syn::ExprForLoop) {
        self.nested += 1;
        syn::visit::visit_expr_for_loop(self, f);
        self.nested -= 1;
    }
    fn visit_expr_while(&mut self, w: &'a syn::ExprWhile) {
        self.nested += 1;
        syn::visit::visit_expr_while(self, w);
        self.nested -= 1;
    }
    fn visit_expr_loop(&mut self, l: &'a syn::ExprLoop) {
        self.nested += 1;
        syn::visit::visit_expr_loop(self, l);
        self.nested -= 1;
    }
    fn visit_expr_closure(&mut self, _: &'a syn::ExprClosure) {}
    fn visit_item(&mut self, _: &'a syn::Item) {}
}

/// Whether the range expression `e` has a `.step_by(k)` anywhere in its chain.
fn steps(e: &Expr) -> bool {
    match e {
        Expr::Paren(p) => steps(&p.expr),
        Expr::Group(g) => steps(&g.expr),
        Expr::MethodCall(m) => m.method == "step_by" || steps(&m.receiver),
        _ => false,
    }
}

/// Whether `e` is negative as written: a negation (`-2`, `-(k)`, in parentheses or not), or
/// integer literals whose sum, difference or product is below 0 (`0 - 2`, `(1 - 3) * 2`).
fn negative(e: &Expr) -> bool {
    match e {
        Expr::Paren(p) => negative(&p.expr),
        Expr::Group(g) => negative(&g.expr),
        Expr::Unary(u) if matches!(u.op, syn::UnOp::Neg(_)) => {
            // `-(-2)` is 2.
            !matches!(literal_value(&u.expr), Some(v) if v <= 0)
        }
        other => literal_value(other).is_some_and(|v| v < 0),
    }
}

/// The value of integer literals combined by `+`, `-`, `*` and negation, in parentheses.
fn literal_value(e: &Expr) -> Option<i128> {
    match e {
        Expr::Paren(p) => literal_value(&p.expr),
        Expr::Group(g) => literal_value(&g.expr),
        Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Int(i),
            ..
        }) => i.base10_parse().ok(),
        Expr::Unary(u) if matches!(u.op, syn::UnOp::Neg(_)) => {
            literal_value(&u.expr)?.checked_neg()
        }
        Expr::Binary(b) => {
            let (l, r) = (literal_value(&b.left)?, literal_value(&b.right)?);
            match b.op {
                syn::BinOp::Add(_) => l.checked_add(r),
                syn::BinOp::Sub(_) => l.checked_sub(r),
                syn::BinOp::Mul(_) => l.checked_mul(r),
                _ => None,
            }
        }
        _ => None,
    }
}
