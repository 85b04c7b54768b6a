//! Whether a differentiated loop may run its iterations a second time in the reverse pass,
//! and which carried values that second run needs.
//!
//! A tape of pullbacks keeps every intermediate of every iteration behind a closure, which
//! LLVM cannot see through. Recomputing instead keeps, per iteration, only the carried values
//! whose value the reverse reads (none for a sum `f = f + ...`), and runs the body again from
//! them just before its pullback: the chained Rosenbrock gradient then costs what the
//! hand-written one does. It is sound only when a second run computes the same values and
//! does nothing else, so the check is a whitelist, and anything it does not recognise keeps
//! the tape of pullbacks:
//! - forward-only code in the body is `let` bindings, indices, conditions and constant
//!   arguments, with no macro, no assignment, no `&mut`, and no call other than the pure
//!   methods of numbers listed here and the primitives of `primitives.rs`, called as methods
//!   or through a primitive type (`f64::max`); any other call keeps the tape, whatever its
//!   name or form: a function of the user's (upper-case or not, with or without a turbofish:
//!   `COIN()` and `coin::<f64>()` may have effects), a constructor, a method not listed, a
//!   call of another `#[lens]` function or of a sub-model in `para!` (it could have an
//!   effect, or read state that changes between the two runs: a dropout);
//! - the names it reads are its own bindings, the loop counter, differentiated values,
//!   `self` and the parameters, constants (upper-case) and paths: a forward-only binding from
//!   outside could be a value the reverse would have to move (a `Vec`) or that later code
//!   changes.

use super::{Block, BranchHead, Loop, Op, Operand, StmtKind, Var, VarId};
use crate::primitives::methods;
use proc_macro2::{Delimiter, Spacing, TokenStream, TokenTree};
use std::collections::{HashMap, HashSet};

/// Methods a recomputed body may call besides the primitives (`primitives::methods`,
/// `primitives::NO_CHANGE`): pure methods of numbers. A method call is pure when its name is
/// one of these or a primitive's; a path call only when it is such a method of a primitive
/// type (`f64::max(a, b)`, `usize::pow(2, k)`); any other call (a function of the user's, a
/// constructor, a method not listed, with or without a turbofish) keeps the tape of pullbacks,
/// which runs the body once.
const PURE_METHODS: &[&str] = &[
    "pow",
    "powi",
    "rem_euclid",
    "div_euclid",
    "wrapping_add",
    "wrapping_sub",
    "saturating_sub",
    "saturating_add",
];

/// The primitive types whose inherent methods a path call may name.
const PRIMITIVE_TYPES: &[&str] = &[
    "f32", "f64", "usize", "isize", "u8", "u16", "u32", "u64", "u128", "i8", "i16", "i32", "i64",
    "i128",
];

fn pure_method(name: &str) -> bool {
    PURE_METHODS.contains(&name)
        || methods().iter().any(|m| m.name == name)
        || crate::primitives::NO_CHANGE.contains(&name)
}

/// Whether the identifier at `j` is called: followed by parentheses, after a turbofish
/// (`draw::<f64>()`) if it has one.
fn called(toks: &[TokenTree], j: usize) -> bool {
    let colon = |k: usize| matches!(toks.get(k), Some(TokenTree::Punct(p)) if p.as_char() == ':');
    let mut k = j + 1;
    if colon(k)
        && colon(k + 1)
        && matches!(toks.get(k + 2), Some(TokenTree::Punct(p)) if p.as_char() == '<')
    {
        // Skip the generic arguments to their closing `>`.
        let mut depth = 0usize;
        k += 2;
        while let Some(t) = toks.get(k) {
            if let TokenTree::Punct(p) = t {
                match p.as_char() {
                    '<' => depth += 1,
                    '>' if !matches!(toks.get(k - 1), Some(TokenTree::Punct(q)) if q.as_char() == '-') =>
                    {
                        depth -= 1;
                        if depth == 0 {
                            break;
                        }
                    }
                    _ => {}
                }
            }
            k += 1;
        }
        k += 1;
    }
    matches!(toks.get(k), Some(TokenTree::Group(g)) if g.delimiter() == Delimiter::Parenthesis)
}

/// The segment before the path segment at `j` (`f64` in `f64::max`, `SVector` in
/// `SVector::<f64, 3>::zeros`), if there is one.
fn qualifier(toks: &[TokenTree], j: usize) -> Option<String> {
    let colon = |k: usize| matches!(toks.get(k), Some(TokenTree::Punct(p)) if p.as_char() == ':');
    if j < 3 || !colon(j - 1) || !colon(j - 2) {
        return None;
    }
    let mut k = j - 3;
    if matches!(&toks[k], TokenTree::Punct(p) if p.as_char() == '>') {
        // Back over the generic arguments to their `::<`.
        let mut depth = 0usize;
        loop {
            if let TokenTree::Punct(p) = &toks[k] {
                match p.as_char() {
                    '>' => depth += 1,
                    '<' => {
                        depth -= 1;
                        if depth == 0 {
                            break;
                        }
                    }
                    _ => {}
                }
            }
            k = k.checked_sub(1)?;
        }
        if k < 3 || !colon(k - 1) || !colon(k - 2) {
            return None;
        }
        k -= 3;
    }
    match &toks[k] {
        TokenTree::Ident(i) => Some(i.to_string()),
        _ => None,
    }
}

/// Words that are not variables.
const KEYWORDS: &[&str] = &[
    "as", "if", "else", "match", "let", "in", "true", "false", "self", "__p", "usize", "isize",
    "u8", "u16", "u32", "u64", "u128", "i8", "i16", "i32", "i64", "i128", "f32", "f64", "bool",
    "crate", "super",
];

/// What [`plan`] found: whether to recompute, and for each carried value whether the
/// reverse reads it.
pub struct Plan {
    pub recompute: bool,
    pub needed: Vec<bool>,
    /// The reverse may run the iterations in any order, first to last (see [`any_order`]).
    pub any_order: bool,
    /// The names the body's forward-only code reads (a condition, an index, `x.len()`): the
    /// recomputing closure captures these as written, by value.
    pub mentioned: HashSet<String>,
}

/// The plan for loop `l`.
pub fn plan(l: &Loop, vars: &[Var]) -> Plan {
    let mut known: HashSet<String> = HashSet::new();
    for p in pattern_names(&l.pat) {
        known.insert(p);
    }
    for v in l.carried.iter().chain(&l.free) {
        known.insert(vars[*v].ident.to_string());
    }
    let mut walk = Walk {
        vars,
        known,
        pure: true,
        mentioned: HashSet::new(),
        roots: HashSet::new(),
        edges: Vec::new(),
    };
    walk.block(&l.body);
    if !walk.pure {
        return Plan {
            recompute: false,
            needed: vec![true; l.carried.len()],
            any_order: false,
            mentioned: walk.mentioned,
        };
    }
    // Values the reverse reads: the roots, and what they are computed from.
    let mut needed = walk.roots.clone();
    for (id, v) in vars.iter().enumerate() {
        if walk.mentioned.contains(&v.ident.to_string()) {
            needed.insert(id);
        }
    }
    loop {
        let before = needed.len();
        for (target, from) in &walk.edges {
            if needed.contains(target) {
                needed.extend(from.iter().copied());
            }
        }
        if needed.len() == before {
            break;
        }
    }
    let needed: Vec<bool> = l.carried.iter().map(|c| needed.contains(c)).collect();
    Plan {
        recompute: true,
        any_order: !needed.contains(&true) && any_order(l),
        needed,
        mentioned: walk.mentioned,
    }
}

/// Whether every carried value is a sum the body only adds to (`f = f + e`, `f += e`,
/// `f = e + f`, `f -= e`, through `let` aliases), each step of the sum read by the next
/// alone: its change then passes through every iteration unchanged, so, with no carried
/// value read by the reverse, the iterations' pullbacks are independent of one another and
/// may run first to last. Backwards, as the general loop must run, the chained Rosenbrock
/// gradient's entries were each written by two iterations, the later one first, which LLVM
/// compiled to vector pairs carrying a lane from one iteration to the next; forwards, with the
/// entries' changes added in the order the body reads them (`expand::reverse::Sweep::
/// deferred`), it is the hand-written loop's order, the entry two iterations share kept in a
/// register. The changes of the values from outside are summed in another order: the same up
/// to rounding.
fn any_order(l: &Loop) -> bool {
    let mut reads: HashMap<VarId, usize> = HashMap::new();
    count_reads(&l.body, &mut reads);
    let lets: Vec<(VarId, &Op)> = l
        .body
        .stmts
        .iter()
        .filter_map(|s| match &s.kind {
            StmtKind::Let { target, op, .. } => Some((*target, &**op)),
            _ => None,
        })
        .collect();
    let Operand::Var(result) = l.body.result else {
        return false;
    };
    let Some((_, Op::Tuple(ends))) = lets.iter().find(|(t, _)| *t == result) else {
        return false;
    };
    if ends.len() != l.carried.len() {
        return false;
    }
    l.carried.iter().zip(ends).all(|(c, end)| {
        let Operand::Var(end) = end else {
            return false;
        };
        let mut v = *c;
        // Each step of the sum is read once: by the next step, or (the last) by the result.
        while reads.get(&v) == Some(&1) {
            if v == *end {
                return true;
            }
            let next = lets.iter().find_map(|(target, op)| {
                let is_v = |o: &Operand| matches!(o, Operand::Var(u) if *u == v);
                let summed = match op {
                    Op::Alias(o) => is_v(o),
                    Op::Rule {
                        checked: Some("Add" | "AddAssign"),
                        args,
                        ..
                    } => args.iter().any(is_v),
                    Op::Rule {
                        checked: Some("Sub" | "SubAssign"),
                        args,
                        ..
                    } => args.first().is_some_and(is_v),
                    _ => false,
                };
                summed.then_some(*target)
            });
            match next {
                Some(t) => v = t,
                None => return false,
            }
        }
        false
    })
}

/// How many times the block's statements and value read each variable (a nested block's
/// reads of outer values once, as its operation's).
fn count_reads(b: &Block, reads: &mut HashMap<VarId, usize>) {
    let mut read = |o: &Operand| {
        if let Operand::Var(v) = o {
            *reads.entry(*v).or_default() += 1;
        }
    };
    for s in &b.stmts {
        match &s.kind {
            StmtKind::Verbatim(_) => {}
            StmtKind::Destructure { src, .. } => read(&Operand::Var(*src)),
            StmtKind::Let { op, .. } => match &**op {
                Op::Field { base, .. } | Op::Index { base, .. } => read(base),
                Op::Branch(br) => br.free.iter().for_each(|v| read(&Operand::Var(*v))),
                Op::Loop(inner) => inner
                    .init
                    .iter()
                    .chain(&inner.free)
                    .for_each(|v| read(&Operand::Var(*v))),
                other => other.taken().into_iter().for_each(&mut read),
            },
        }
    }
    read(&b.result);
}

fn pattern_names(pat: &TokenStream) -> Vec<String> {
    pat.clone()
        .into_iter()
        .filter_map(|t| match t {
            TokenTree::Ident(i) if i != "mut" => Some(i.to_string()),
            _ => None,
        })
        .collect()
}

struct Walk<'a> {
    vars: &'a [Var],
    /// Names the body may read: its own bindings and the loop's inputs.
    known: HashSet<String>,
    pure: bool,
    /// Names that forward-only code reads (their values are needed, whatever they are).
    mentioned: HashSet<String>,
    /// Values a pullback reads.
    roots: HashSet<VarId>,
    /// `target` computed from these values.
    edges: Vec<(VarId, Vec<VarId>)>,
}

impl Walk<'_> {
    fn block(&mut self, b: &Block) {
        for s in &b.stmts {
            match &s.kind {
                StmtKind::Verbatim(ts) => self.verbatim(ts),
                StmtKind::Destructure { src, targets, .. } => {
                    for t in targets.iter().flatten() {
                        self.bind(*t);
                        self.edges.push((*t, vec![*src]));
                    }
                }
                StmtKind::Let { target, op, .. } => {
                    self.op(*target, op);
                    self.bind(*target);
                }
            }
        }
        if let Operand::Const(ts) = &b.result {
            self.tokens(ts);
        }
    }

    fn bind(&mut self, id: VarId) {
        self.known.insert(self.vars[id].ident.to_string());
    }

    fn operands(&mut self, ops: &[Operand]) -> Vec<VarId> {
        let mut ids = Vec::new();
        for o in ops {
            match o {
                Operand::Var(id) => ids.push(*id),
                Operand::Const(ts) => self.tokens(ts),
            }
        }
        ids
    }

    fn op(&mut self, target: VarId, op: &Op) {
        match op {
            Op::Alias(o) => {
                let from = self.operands(std::slice::from_ref(o));
                self.edges.push((target, from));
            }
            Op::Tuple(xs) | Op::Array(xs, _) | Op::Build { args: xs, .. } => {
                let from = self.operands(xs);
                self.edges.push((target, from));
            }
            Op::Struct { fields, .. } => {
                let xs: Vec<Operand> = fields.iter().map(|(_, o)| o.clone()).collect();
                let from = self.operands(&xs);
                self.edges.push((target, from));
            }
            Op::Field { base, .. } => {
                let from = self.operands(std::slice::from_ref(base));
                self.edges.push((target, from));
            }
            Op::Index { base, index, .. } => {
                self.tokens(index);
                let from = self.operands(std::slice::from_ref(base));
                self.edges.push((target, from));
            }
            Op::Rule {
                func, args, extra, ..
            } => {
                for e in extra {
                    self.tokens(e);
                }
                let from = self.operands(args);
                // The pullbacks of sums, differences and negations read no operand (named in
                // full: `MulAddRule::mul_add_vjp` ends in `add_vjp` too, and reads them).
                let name: String = func.to_string().split_whitespace().collect();
                let linear = [
                    "::AddRule::add_vjp",
                    "::SubRule::sub_vjp",
                    "::NegRule::neg_vjp",
                ]
                .iter()
                .any(|n| name.ends_with(n));
                if !linear {
                    self.roots.extend(from.iter().copied());
                }
                self.edges.push((target, from));
            }
            Op::Call { args, .. } => {
                self.pure = false;
                let from = self.operands(args);
                self.edges.push((target, from));
            }
            Op::Sub { args, .. } => {
                // A sub-model may keep state that its forward run changes (a dropout's
                // generator): its pullback is taped, never run again.
                self.pure = false;
                let from = self.operands(args);
                self.roots.extend(from.iter().copied());
                self.edges.push((target, from));
            }
            Op::Branch(b) => {
                match &b.head {
                    BranchHead::Plain => {}
                    BranchHead::If(c) => self.tokens(c),
                    BranchHead::Match { scrutinee, arms } => {
                        self.tokens(scrutinee);
                        for a in arms {
                            // An arm's pattern binds names; its guard (after `if`) reads.
                            let toks: Vec<TokenTree> = a.clone().into_iter().collect();
                            let cut = toks
                                .iter()
                                .position(|t| matches!(t, TokenTree::Ident(i) if i == "if"))
                                .unwrap_or(toks.len());
                            let pat: TokenStream = toks[..cut].iter().cloned().collect();
                            let guard: TokenStream = toks[cut..].iter().cloned().collect();
                            for n in pattern_names(&pat) {
                                self.known.insert(n);
                            }
                            self.tokens(&guard);
                        }
                    }
                }
                self.roots.extend(b.free.iter().copied());
                for blk in &b.blocks {
                    self.block(blk);
                }
            }
            Op::Loop(l) => {
                self.tokens(&l.range);
                for p in pattern_names(&l.pat) {
                    self.known.insert(p);
                }
                self.roots.extend(l.free.iter().chain(&l.init).copied());
                for c in &l.carried {
                    self.bind(*c);
                }
                self.block(&l.body);
            }
        }
    }

    /// A forward-only statement: only `let pattern = expression;` is allowed, and the two
    /// statements of a branch valued in forward-only data (`Analyser::branches`): `let __tN;`
    /// before it and `__tN = expression;` in each block.
    fn verbatim(&mut self, ts: &TokenStream) {
        let toks: Vec<TokenTree> = ts.clone().into_iter().collect();
        let generated = |t: Option<&TokenTree>| match t {
            Some(TokenTree::Ident(i)) => i.to_string().starts_with("__t").then(|| i.to_string()),
            _ => None,
        };
        let lone = |t: Option<&TokenTree>, c: char| matches!(t, Some(TokenTree::Punct(p)) if p.as_char() == c && p.spacing() == Spacing::Alone);
        if toks.len() == 3
            && matches!(&toks[0], TokenTree::Ident(i) if i == "let")
            && lone(toks.get(2), ';')
            && let Some(name) = generated(toks.get(1))
        {
            self.known.insert(name);
            return;
        }
        if let Some(name) = generated(toks.first())
            && self.known.contains(&name)
            && lone(toks.get(1), '=')
        {
            let init: TokenStream = toks[2..].iter().cloned().collect();
            self.tokens(&init);
            return;
        }
        // Attributes first (`#[...]`), then `let`.
        let mut k = 0;
        while k + 1 < toks.len()
            && matches!(&toks[k], TokenTree::Punct(p) if p.as_char() == '#')
            && matches!(&toks[k + 1], TokenTree::Group(_))
        {
            k += 2;
        }
        if !matches!(toks.get(k), Some(TokenTree::Ident(i)) if i == "let") {
            self.pure = false;
            return;
        }
        // The pattern runs to the first lone `=`.
        let Some(eq) = (k + 1..toks.len())
            .find(|&j| matches!(&toks[j], TokenTree::Punct(p) if p.as_char() == '=' && p.spacing() == Spacing::Alone))
        else {
            self.pure = false;
            return;
        };
        let init: TokenStream = toks[eq + 1..].iter().cloned().collect();
        self.tokens(&init);
        let pat: TokenStream = toks[k + 1..eq].iter().cloned().collect();
        // A type annotation's names are types, not reads.
        let pat: TokenStream = pat
            .into_iter()
            .take_while(|t| !matches!(t, TokenTree::Punct(p) if p.as_char() == ':'))
            .collect();
        for n in pattern_names(&pat) {
            self.known.insert(n);
        }
    }

    /// Forward-only tokens: refuses effects and reads of unknown names, and records the
    /// names read.
    fn tokens(&mut self, ts: &TokenStream) {
        let toks: Vec<TokenTree> = ts.clone().into_iter().collect();
        for (j, t) in toks.iter().enumerate() {
            let prev = j.checked_sub(1).map(|p| &toks[p]);
            let next = toks.get(j + 1);
            match t {
                TokenTree::Group(g) => {
                    // A closure's parameters are its own names.
                    self.tokens(&g.stream());
                }
                TokenTree::Punct(p) => match p.as_char() {
                    '=' if p.spacing() == Spacing::Alone => {
                        // `==`, `<=`, `>=`, `!=` end in a lone `=` after a joint punct.
                        let comparison = matches!(prev, Some(TokenTree::Punct(q))
                            if q.spacing() == Spacing::Joint && matches!(q.as_char(), '=' | '<' | '>' | '!'));
                        let compound = matches!(prev, Some(TokenTree::Punct(q))
                            if q.spacing() == Spacing::Joint && !matches!(q.as_char(), '=' | '<' | '>' | '!'));
                        if !comparison || compound {
                            self.pure = false;
                        }
                    }
                    '&' if matches!(next, Some(TokenTree::Ident(i)) if i == "mut") => {
                        self.pure = false;
                    }
                    '!' if matches!(prev, Some(TokenTree::Ident(i)) if !KEYWORDS.contains(&i.to_string().as_str()))
                        && matches!(next, Some(TokenTree::Group(_))) =>
                    {
                        self.pure = false; // a macro
                    }
                    '|' if p.spacing() == Spacing::Alone
                        && (prev.is_none()
                            || matches!(prev, Some(TokenTree::Punct(q)) if q.as_char() != '|')
                            || matches!(prev, Some(TokenTree::Ident(i)) if i == "move")) =>
                    {
                        // `|a, b| ...` where an expression starts: a closure's parameters,
                        // up to the next `|` (not `a | b`, not `a || b`).
                        for t in toks[j + 1..].iter() {
                            match t {
                                TokenTree::Punct(q) if q.as_char() == '|' => break,
                                TokenTree::Ident(i) => {
                                    self.known.insert(i.to_string());
                                }
                                _ => {}
                            }
                        }
                    }
                    _ => {}
                },
                TokenTree::Ident(i) => {
                    let name = i.to_string();
                    let after_dot = matches!(prev, Some(TokenTree::Punct(q)) if q.as_char() == '.');
                    let after_path =
                        matches!(prev, Some(TokenTree::Punct(q)) if q.as_char() == ':');
                    let path_head = matches!(next, Some(TokenTree::Punct(q)) if q.as_char() == ':');
                    if called(&toks, j) {
                        let pure = if after_dot {
                            pure_method(&name)
                        } else {
                            // A path call is pure only as an inherent method of a primitive
                            // type (`f64::max(a, b)`): any other function, an upper-case one
                            // included (`COIN()` is not always a constructor), may have an
                            // effect, and is taped.
                            qualifier(&toks, j)
                                .is_some_and(|q| PRIMITIVE_TYPES.contains(&q.as_str()))
                                && pure_method(&name)
                        };
                        if !pure {
                            self.pure = false;
                        }
                    } else if !after_dot
                        && !after_path
                        && !path_head
                        && !KEYWORDS.contains(&name.as_str())
                        && !name.starts_with(|c: char| c.is_uppercase())
                    {
                        if !self.known.contains(&name) {
                            self.pure = false;
                        }
                        self.mentioned.insert(name);
                    }
                }
                TokenTree::Literal(_) => {}
            }
        }
    }
}
