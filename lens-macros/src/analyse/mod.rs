//! Analysis: a function body into A-normal form (one operation per `let`), with every
//! variable resolved to the binding it refers to and marked differentiated or not.
//!
//! Values that depend on no differentiated variable stay as the user wrote them
//! (`Operand::Const`) and run in the forward pass only. Everything the engine cannot
//! differentiate is an error at that expression, saying what to write instead.

mod call_form;
mod calls;
mod control;
mod ir;
mod loops;
mod mutation;
mod probes;
mod reads;
mod recompute;
mod syntax;
mod whitelist;

pub(crate) use call_form::capitalised;
use call_form::{CallForm, SCALARS, shape_in_call};
pub use calls::{infer_operand, place, token_ends};
pub use ir::*;
use syntax::*;
pub use syntax::{any_token, compound_op, mentions, scalar_type_params};
use whitelist::{EarlyExits, format_captures};

pub use loops::Loop;
pub use reads::{frame_bound, read_after_loops, read_again};
pub use recompute::plan as recompute_plan;

use crate::errors::Errors;
use crate::primitives;
use proc_macro2::{Span, TokenStream, TokenTree};
use quote::{ToTokens, quote, quote_spanned};
use std::collections::{BTreeMap, BTreeSet};
use syn::spanned::Spanned;
use syn::{BinOp, Expr, Ident, Pat, Stmt as SynStmt, Type, UnOp};

#[derive(Clone)]
struct Frame {
    defined: BTreeSet<VarId>,
    used: BTreeSet<VarId>,
    kept: BTreeMap<(usize, usize), (VarId, VarId)>,
}

/// Walks a body, building A-normal form.
pub struct Analyser<'e> {
    pub vars: Vec<Var>,
    scopes: Vec<Vec<(String, VarId)>>,
    frames: Vec<Frame>,
    errors: &'e mut Errors,
    /// Sub-model fields (inside `para!`).
    fields: Vec<Ident>,
    para: bool,
    /// The function's const generic parameters (loop bounds name them as they are).
    const_params: Vec<String>,
    /// The function's type parameters (`T::exp(x)` is `x.exp()`).
    type_params: Vec<String>,
    /// The `#[lens]` function's own name (none in `para!`): a call of it is refused.
    own_name: Option<String>,
    /// Method calls already refused, so that reading them again is not a second error.
    refused: BTreeSet<String>,
    /// `&mut` arguments, refused by `validate`: assigning through one (`*x = ...`) is the
    /// same mistake, not a second error.
    mut_ref_args: BTreeSet<String>,
    /// The operators and methods of the body lowered to rules, by [`node_key`], in order
    /// (a lowering found to be forward-only data after all drops the entries it added).
    in_place: Vec<(usize, InPlace)>,
    /// For a second sweep of a body (`vjp_params`'): the methods, by [`node_key`], that the
    /// first ran in a one-sided form; no others are. `None`: no restriction.
    one_sided: Option<BTreeSet<usize>>,
    /// Arguments that are data behind a shared reference (`#[nodiff] w: &HeapMatrix<..>`):
    /// an operand of `+ - * /` reads them as an owned value (`rules::owned`), as a method's
    /// borrowed operand is read.
    borrowed_data: BTreeSet<VarId>,
    /// The type probes of the body's loops, by [`node_key`] of the loop (`probes.rs`).
    probes: BTreeMap<usize, TokenStream>,
    /// Names declared by a `let` without a value, already refused: assigning them later is
    /// the same mistake, not a second error.
    unvalued: BTreeSet<String>,
    /// The names of branches' values that are forward-only data (`Analyser::branches`):
    /// as a statement, such a branch has run already.
    branch_data: BTreeSet<String>,
}

/// The one-sided form of the rule at `func` for the differentiated operand `side`
/// (0: the receiver, `Dot::dot_vjp_left`; 1: the operand, `Dot::dot_vjp_right`): the path's
/// last segment suffixed, at its own span.
pub fn sided_rule(func: &TokenStream, side: usize) -> TokenStream {
    let suffix = if side == 0 { "left" } else { "right" };
    let mut tokens: Vec<proc_macro2::TokenTree> = func.clone().into_iter().collect();
    if let Some(proc_macro2::TokenTree::Ident(last)) = tokens.last_mut() {
        *last = syn::Ident::new(&format!("{last}_{suffix}"), last.span());
    }
    tokens.into_iter().collect()
}

fn rules_path(span: Span, item: TokenStream) -> TokenStream {
    // Every token at the expression: one left at the macro's own span widens the call's span
    // to the whole `#[lens]`, where a type error in the expression was then reported.
    let item = crate::respan(item, span);
    {
        let __rt = crate::rt::at(span);
        quote_spanned!(span=> #__rt::rules::#item)
    }
}

impl<'e> Analyser<'e> {
    pub fn new(errors: &'e mut Errors) -> Self {
        Self {
            vars: Vec::new(),
            scopes: vec![Vec::new()],
            frames: Vec::new(),
            errors,
            fields: Vec::new(),
            para: false,
            const_params: Vec::new(),
            type_params: Vec::new(),
            own_name: None,
            refused: BTreeSet::new(),
            mut_ref_args: BTreeSet::new(),
            in_place: Vec::new(),
            one_sided: None,
            borrowed_data: BTreeSet::new(),
            probes: BTreeMap::new(),
            unvalued: BTreeSet::new(),
            branch_data: BTreeSet::new(),
        }
    }

    /// Declares the function's generic parameters: its const generics (loop bounds) and its
    /// scalar type parameters (`T::exp(x)` is `x.exp()`; not `A::tanh(h)` of another type
    /// parameter, whose `tanh` may be anything, which read as the float's would give a
    /// gradient that disagrees with the forward map).
    pub fn declare_generics(&mut self, generics: &syn::Generics) {
        self.const_params = generics
            .const_params()
            .map(|c| c.ident.to_string())
            .collect();
        self.type_params = scalar_type_params(generics)
            .into_iter()
            .map(|t| t.to_string())
            .collect();
    }

    /// Declares the sub-model fields of a `para!` model.
    pub fn declare_fields(&mut self, fields: &[Ident]) {
        self.para = true;
        self.fields = fields.to_vec();
    }

    /// Declares a function argument in the outermost scope.
    pub fn declare_arg(&mut self, ident: &Ident, diff: bool, mutable: bool) -> VarId {
        let id = self.new_var(ident.clone(), diff, false);
        self.vars[id].mutable = mutable;
        self.scopes[0].push((ident.to_string(), id));
        id
    }

    fn new_var(&mut self, ident: Ident, diff: bool, temp: bool) -> VarId {
        self.vars.push(Var {
            ident,
            diff,
            mutable: false,
            temp,
        });
        self.vars.len() - 1
    }

    fn temp(&mut self, span: Span) -> VarId {
        let n = self.vars.len();
        let id = self.new_var(Ident::new(&format!("__t{n}"), span), true, true);
        if let Some(f) = self.frames.last_mut() {
            f.defined.insert(id);
        }
        id
    }

    fn bind(&mut self, ident: &Ident, diff: bool) -> VarId {
        let id = self.new_var(ident.clone(), diff, false);
        self.scopes
            .last_mut()
            .expect("a scope is open")
            .push((ident.to_string(), id));
        if let Some(f) = self.frames.last_mut() {
            f.defined.insert(id);
        }
        id
    }

    fn lookup(&self, name: &str) -> Option<VarId> {
        self.lookup_slot(name).map(|(s, e)| self.scopes[s][e].1)
    }

    /// Where the binding `name` refers to lives: (scope, entry).
    fn lookup_slot(&self, name: &str) -> Option<(usize, usize)> {
        self.scopes
            .iter()
            .enumerate()
            .rev()
            .find_map(|(si, scope)| {
                scope
                    .iter()
                    .rposition(|(n, _)| n == name)
                    .map(|ei| (si, ei))
            })
    }

    fn use_var(&mut self, id: VarId) -> Operand {
        if let Some(f) = self.frames.last_mut() {
            f.used.insert(id);
        }
        Operand::Var(id)
    }

    /// `true` when `tokens` name a differentiated variable in scope.
    fn mentions_diff(&self, tokens: TokenStream) -> bool {
        let is_diff = |name: &str| self.lookup(name).is_some_and(|id| self.vars[id].diff);
        tokens.into_iter().any(|tt| match tt {
            TokenTree::Ident(i) => is_diff(&i.to_string()),
            TokenTree::Group(g) => self.mentions_diff(g.stream()),
            // A format string's inline captures (`"{x}"`, `"{x:.3}"`) read `x` too.
            TokenTree::Literal(l) => format_captures(&l.to_string()).iter().any(|n| is_diff(n)),
            TokenTree::Punct(_) => false,
        })
    }

    /// Analyses a function body: the outermost block, whose free variables are the
    /// arguments (and, in `para!`, the sub-model parameters).
    pub fn body(&mut self, block: &syn::Block) -> Block {
        // Early exits would leave the generated sweep from anywhere: refuse them all, also
        // inside forward-only code.
        let mut exits = EarlyExits(Vec::new());
        syn::visit::Visit::visit_block(&mut exits, block);
        for (tokens, msg) in exits.0 {
            self.errors.at(tokens, msg);
        }
        self.block_with(Part::Block(block), Vec::new())
    }

    fn block_with(&mut self, part: Part<'_>, bindings: Vec<(Ident, bool)>) -> Block {
        self.scopes.push(Vec::new());
        self.frames.push(Frame {
            defined: BTreeSet::new(),
            used: BTreeSet::new(),
            kept: BTreeMap::new(),
        });
        for (ident, mutable) in bindings {
            // Pattern bindings of `if let` and `match` arms: forward-only data.
            let id = self.bind(&ident, false);
            self.vars[id].mutable = mutable;
        }
        let mut stmts = Vec::new();
        let mut result = Operand::Const(quote!(()));
        let (body, tail, valued): (&[SynStmt], _, _) = match part {
            Part::Block(b) => (&b.stmts, None, true),
            Part::Body(b) => (&b.stmts, None, false),
            Part::Expr(e) => (&[], Some(e), true),
            Part::Empty => (&[], None, true),
        };
        let n = body.len();
        for (i, stmt) in body.iter().enumerate() {
            match stmt {
                SynStmt::Expr(e, None) if i + 1 == n && valued => {
                    result = self.expr(e, &mut stmts);
                }
                other => self.stmt(other, &mut stmts),
            }
        }
        if let Some(e) = tail {
            result = self.expr(e, &mut stmts);
        }
        self.scopes.pop();
        let frame = self.frames.pop().expect("frame pushed above");
        let free: Vec<VarId> = frame.used.difference(&frame.defined).copied().collect();
        if let Some(parent) = self.frames.last_mut() {
            parent.used.extend(free.iter().copied());
        }
        Block {
            stmts,
            result,
            free,
            kept: frame.kept,
        }
    }

    fn stmt(&mut self, stmt: &SynStmt, out: &mut Vec<Stmt>) {
        let span = stmt.span();
        match stmt {
            SynStmt::Local(local) => self.local(local, out),
            SynStmt::Expr(e, semi) => {
                if matches!(e, Expr::Return(_)) {
                    return; // reported by `EarlyExits`
                }
                let assigns = is_assignment(e);
                let lowered_loop = matches!(e, Expr::ForLoop(_))
                    && (self.mentions_diff(e.to_token_stream()) || self.has_sub_call(e));
                match self.expr(e, out) {
                    // A differentiated loop has been lowered; its value is `()`.
                    Operand::Const(_) if lowered_loop => {}
                    // An assignment that rebinds has already been lowered.
                    Operand::Const(_) if assigns && self.mentions_diff(e.to_token_stream()) => {}
                    // A lowered branch valued in forward-only data has run.
                    Operand::Const(ts) if self.branch_data.contains(&ts.to_string()) => {}
                    Operand::Const(ts) => {
                        // A body's last expression (`Part::Body`) ends with its own `;` here.
                        let semi = match semi {
                            None if !block_like(e) => Some(syn::Token![;](span)),
                            semi => *semi,
                        };
                        out.push(Stmt {
                            kind: StmtKind::Verbatim(quote!(#ts #semi)),
                            span,
                        });
                    }
                    Operand::Var(_) => {}
                }
            }
            SynStmt::Macro(m) => {
                self.check_macro(&m.mac);
                out.push(Stmt {
                    kind: StmtKind::Verbatim(m.to_token_stream()),
                    span,
                });
            }
            SynStmt::Item(item) => self.errors.at(
                item,
                "items inside a `#[lens]` body are not supported; move them outside the function",
            ),
        }
    }

    fn local(&mut self, local: &syn::Local, out: &mut Vec<Stmt>) {
        let span = local.span();
        let Some(init) = &local.init else {
            self.errors.at(
                local,
                "a `let` without a value is not supported; bind the value where it is computed",
            );
            for (ident, _) in pattern_bindings(&local.pat) {
                self.unvalued.insert(ident.to_string());
            }
            return;
        };
        if let Some((_, diverge)) = &init.diverge
            && (self.mentions_diff(init.expr.to_token_stream())
                || self.mentions_diff(diverge.to_token_stream()))
        {
            self.errors.at(
                diverge,
                "`let ... else` on a differentiated value is not supported; use `match`",
            );
            return;
        }
        let (pat, ty) = match &local.pat {
            Pat::Type(pt) => (&*pt.pat, Some((*pt.ty).clone())),
            p => (p, None),
        };
        let value = if init.diverge.is_some() {
            Operand::Const(init.expr.to_token_stream())
        } else {
            self.expr(&init.expr, out)
        };
        for (ident, _) in pattern_bindings(pat) {
            self.keep_before_shadowing(&ident, out);
        }
        match value {
            Operand::Const(ts) => {
                // Forward only: emit as written, with the bindings not differentiated.
                let attrs = &local.attrs;
                let pat_tokens = &local.pat;
                let diverge = init.diverge.as_ref().map(|(e, b)| quote!(#e #b));
                out.push(Stmt {
                    kind: StmtKind::Verbatim(quote!(#(#attrs)* let #pat_tokens = #ts #diverge;)),
                    span,
                });
                for (ident, mutable) in pattern_bindings(pat) {
                    let id = self.bind(&ident, false);
                    self.vars[id].mutable = mutable;
                }
            }
            Operand::Var(src) => self.bind_pattern(pat, ty, src, out, span),
        }
    }

    /// Binds a differentiated value to a pattern.
    fn bind_pattern(
        &mut self,
        pat: &Pat,
        ty: Option<Type>,
        src: VarId,
        out: &mut Vec<Stmt>,
        span: Span,
    ) {
        match pat {
            Pat::Ident(pi) if pi.by_ref.is_none() && pi.subpat.is_none() => {
                let mutable = pi.mutability.is_some();
                if self.vars[src].temp && ty.is_none() && self.last_defines(out, src) {
                    // The value was just computed into a temporary: give it the user's name.
                    self.vars[src].ident = pi.ident.clone();
                    self.vars[src].temp = false;
                    self.vars[src].mutable = mutable;
                    self.scopes
                        .last_mut()
                        .expect("scope")
                        .push((pi.ident.to_string(), src));
                } else {
                    let target = self.bind(&pi.ident, true);
                    self.vars[target].mutable = mutable;
                    let op = Box::new(Op::Alias(self.use_var(src)));
                    let ty = ty.map(Box::new);
                    out.push(Stmt {
                        kind: StmtKind::Let { target, ty, op },
                        span,
                    });
                }
            }
            Pat::Wild(_) => {}
            Pat::Paren(p) => self.bind_pattern(&p.pat, ty, src, out, span),
            Pat::Tuple(_) | Pat::Slice(_) => {
                let (elems, array) = match pat {
                    Pat::Tuple(t) => (&t.elems, false),
                    Pat::Slice(s) => (&s.elems, true),
                    _ => unreachable!("matched above"),
                };
                if ty.is_some() {
                    self.errors.at(
                        pat,
                        "annotate the parts of a differentiated tuple, not the whole (`let (a, b) = ...;` then `let a: T = a;`)",
                    );
                }
                let mut targets = Vec::new();
                let mut nested = Vec::new();
                for elem in elems {
                    match elem {
                        Pat::Wild(_) => targets.push(None),
                        Pat::Ident(pi) if pi.by_ref.is_none() && pi.subpat.is_none() => {
                            let id = self.bind(&pi.ident, true);
                            self.vars[id].mutable = pi.mutability.is_some();
                            targets.push(Some(id));
                        }
                        Pat::Rest(r) => {
                            self.errors.at(
                                r,
                                "`..` in a pattern of a differentiated tuple is not supported; name or `_` every element",
                            );
                            return;
                        }
                        other => {
                            let tmp = self.temp(other.span());
                            targets.push(Some(tmp));
                            nested.push((other.clone(), tmp));
                        }
                    }
                }
                let src_op = self.use_var(src);
                let Operand::Var(src) = src_op else {
                    unreachable!()
                };
                // At the pattern: a pattern that does not fit the value is then the function
                // as written's one error there.
                out.push(Stmt {
                    kind: StmtKind::Destructure {
                        src,
                        targets,
                        array,
                    },
                    span: pat.span(),
                });
                for (p, tmp) in nested {
                    self.bind_pattern(&p, None, tmp, out, span);
                }
            }
            other => self.errors.at(
                other,
                "this pattern cannot bind a differentiated value; use a name or a tuple pattern",
            ),
        }
    }

    fn last_defines(&self, out: &[Stmt], id: VarId) -> bool {
        matches!(out.last(), Some(Stmt { kind: StmtKind::Let { target, .. }, .. }) if *target == id)
    }

    /// Pushes `let tmp = op;` and returns the temporary.
    fn push_op(&mut self, op: Op, span: Span, out: &mut Vec<Stmt>) -> Operand {
        // An operand read by name before a later part of the same expression rebound that
        // name (`a * { a = 2.0 * a; a }`) would be read after the rebinding: refuse it.
        let operands: &[Operand] = match &op {
            Op::Rule { args, .. } | Op::Call { args, .. } | Op::Sub { args, .. } => args,
            Op::Tuple(elems) | Op::Array(elems, _) | Op::Build { args: elems, .. } => elems,
            Op::Alias(o) | Op::Index { base: o, .. } | Op::Field { base: o, .. } => {
                core::slice::from_ref(o)
            }
            Op::Struct { .. } | Op::Branch(_) | Op::Loop(_) => &[],
        };
        for o in operands {
            if let Operand::Var(id) = o
                && !self.vars[*id].temp
                && self.lookup(&self.vars[*id].ident.to_string()) != Some(*id)
            {
                let name = self.vars[*id].ident.to_string();
                self.errors.push(syn::Error::new(
                    span,
                    format!("this operation reads `{name}`, which is assigned again later in the same expression; assign it in a statement of its own first"),
                ));
            }
        }
        let target = self.temp(span);
        out.push(Stmt {
            kind: StmtKind::Let {
                target,
                ty: None,
                op: Box::new(op),
            },
            span,
        });
        Operand::Var(target)
    }

    fn expr(&mut self, e: &Expr, out: &mut Vec<Stmt>) -> Operand {
        if !self.mentions_diff(e.to_token_stream()) && !self.has_sub_call(e) {
            return Operand::Const(e.to_token_stream());
        }
        let span = e.span();
        match e {
            Expr::Paren(p) => self.expr(&p.expr, out),
            Expr::Group(g) => self.expr(&g.expr, out),
            Expr::Path(p) => match p.path.get_ident().and_then(|i| self.lookup(&i.to_string())) {
                Some(id) if self.vars[id].diff => self.use_var(id),
                _ => Operand::Const(e.to_token_stream()),
            },
            Expr::Lit(_) => Operand::Const(e.to_token_stream()),
            Expr::Binary(b) if compound_op(&b.op).is_none() => self.binary(b, out),
            Expr::Unary(u) => {
                let rule = match u.op {
                    UnOp::Neg(_) => crate::primitives::operator("-", 1).tokens(),
                    UnOp::Not(_) => crate::primitives::operator("!", 1).tokens(),
                    _ => {
                        self.errors.at(
                            u,
                            "dereferencing is not differentiated; lens bodies work on values",
                        );
                        return Operand::Const(e.to_token_stream());
                    }
                };
                let arg = self.expr(&u.expr, out);
                if let Operand::Const(_) = arg {
                    self.check_read(u);
                    return Operand::Const(e.to_token_stream());
                }
                let func = rules_path(span, rule);
                let op = Op::Rule {
                    func,
                    args: vec![arg],
                    extra: vec![],
                    tied: false,
                    checked: None,
                    sided: false,
                };
                // `!x` runs through its rule in the function as written too: of a type the
                // rule does not take (a float) it is the rule's one error, where rustc's own
                // for the operator came beside it. `-x` stays as written (every type it
                // differentiates has the operator).
                if let UnOp::Not(_) = u.op {
                    return self.push_rule(node_key(u), op, Vec::new(), false, span, out);
                }
                self.push_op(op, span, out)
            }
            Expr::MethodCall(m) => self.method(m, out),
            Expr::Call(c) => self.call(c, out),
            Expr::Tuple(t) => {
                let elems: Vec<Operand> = t.elems.iter().map(|x| self.expr(x, out)).collect();
                if elems.iter().all(|o| matches!(o, Operand::Const(_))) {
                    self.check_read(t);
                    return Operand::Const(e.to_token_stream());
                }
                self.push_op(Op::Tuple(elems), span, out)
            }
            Expr::Array(a) => {
                let elems: Vec<Operand> = a.elems.iter().map(|x| self.expr(x, out)).collect();
                if elems.iter().all(|o| matches!(o, Operand::Const(_))) {
                    self.check_read(a);
                    return Operand::Const(e.to_token_stream());
                }
                let places = a.elems.iter().map(place).collect();
                self.push_op(Op::Array(elems, places), span, out)
            }
            Expr::Block(b) if b.label.is_none() && !self.needs_lowering(b.to_token_stream()) => {
                // A block that never names a differentiated value is forward-only data.
                Operand::Const(e.to_token_stream())
            }
            Expr::Block(b) if b.label.is_none() => self.lowered_or_data(e, out, |an, out| {
                let parts = vec![(Part::Block(&b.block), Vec::new())];
                an.branches(BranchHead::Plain, parts, span, out)
            }),
            Expr::If(i) => self.lowered_or_data(e, out, |an, out| an.if_expr(i, out)),
            Expr::Match(m) => self.lowered_or_data(e, out, |an, out| an.match_expr(m, out)),
            Expr::ForLoop(f) => self.for_loop(f, out),
            Expr::While(w) => self.refuse(w.while_token, e, "a `while` loop is not differentiated: its trip count is not bounded by a constant; write `for i in 0..N` with `N` a literal, a `const` item or a const generic parameter"),
            Expr::Loop(l) => self.refuse(l.loop_token, e, "`loop` is not differentiated: its trip count is not bounded by a constant; write `for i in 0..N` with `N` a literal, a `const` item or a const generic parameter"),
            Expr::Return(_) => Operand::Const(e.to_token_stream()), // see `EarlyExits`
            Expr::Assign(a) => self.assign(e, &a.left, None, &a.right, out),
            Expr::Binary(b) if compound_op(&b.op).is_some() => {
                self.assign(e, &b.left, compound_op(&b.op), &b.right, out)
            }
            Expr::Macro(m) => {
                self.check_macro(&m.mac);
                Operand::Const(e.to_token_stream())
            }
            Expr::Field(f) => {
                let base = self.expr(&f.base, out);
                if let Operand::Const(_) = base {
                    self.check_read(f);
                    return Operand::Const(e.to_token_stream());
                }
                let member = f.member.clone();
                self.push_op(Op::Field { base, member }, span, out)
            }
            Expr::Struct(st) => {
                if let Some(rest) = &st.rest {
                    if self.mentions_diff(rest.to_token_stream()) {
                        self.errors.at(
                            rest,
                            "`..base` with a differentiated base is not supported; name every field",
                        );
                    }
                    return Operand::Const(e.to_token_stream());
                }
                let fields: Vec<(syn::Member, Operand)> = st
                    .fields
                    .iter()
                    .map(|fv| (fv.member.clone(), self.expr(&fv.expr, out)))
                    .collect();
                if fields.iter().all(|(_, o)| matches!(o, Operand::Const(_))) {
                    self.check_read(st);
                    return Operand::Const(e.to_token_stream());
                }
                let path = st.path.to_token_stream();
                let places = st.fields.iter().map(|fv| place(&fv.expr)).collect();
                self.push_op(
                    Op::Struct {
                        path,
                        fields,
                        places,
                        tuple: None,
                    },
                    span,
                    out,
                )
            }
            Expr::Index(ix) => self.index(ix, out),
            Expr::Cast(c) if matches!(self.expr(&c.expr, out), Operand::Const(_)) => {
                Operand::Const(e.to_token_stream())
            }
            Expr::Cast(_) => self.refuse(e, e, "`as` casts of differentiated values are not supported; keep one float type through the lens (for an index, round first: `x.floor() as usize` is forward-only data)"),
            Expr::Reference(r) => self.refuse(r, e, "references to differentiated values are only supported as method arguments (`x.dot(&y)`)"),
            Expr::Repeat(r) => self.refuse(r, e, "`[x; N]` of a differentiated value is not supported; write the elements out (`[x, x, x]`): each use of `x` then receives its change"),
            Expr::Closure(c) => self.refuse(c, e, "a closure that reads a differentiated value is not differentiated; write its body where it is called, or make it a `#[lens]` function and call that"),
            _ => self.refuse(e, e, "this expression cannot be differentiated; compute it from non-differentiated values, or move it into a `#[lens]` function"),
        }
    }

    /// Records that `node` cannot be differentiated; the expression stays as written so that
    /// analysis goes on and finds the function's other mistakes.
    fn refuse(&mut self, node: impl ToTokens, e: &Expr, msg: &str) -> Operand {
        self.errors.at(node, msg);
        Operand::Const(e.to_token_stream())
    }

    /// In `para!`, whether `e` calls a sub-model (`self.l(x)`). A configuration field
    /// (`self.scale`, `self.scale.into()`) is forward-only data. In a macro, whose tokens are
    /// not read as expressions, a call is `self . field (` (`tokens_call_sub`).
    fn has_sub_call(&self, e: &Expr) -> bool {
        struct Find<'a> {
            fields: &'a [Ident],
            found: bool,
        }
        impl<'ast> syn::visit::Visit<'ast> for Find<'_> {
            fn visit_expr_method_call(&mut self, m: &'ast syn::ExprMethodCall) {
                self.found |= is_self_expr(&m.receiver) && self.fields.contains(&m.method);
                syn::visit::visit_expr_method_call(self, m);
            }
            fn visit_macro(&mut self, mac: &'ast syn::Macro) {
                self.found |= tokens_call_sub(mac.tokens.clone(), self.fields);
            }
        }
        if !self.para {
            return false;
        }
        let mut find = Find {
            fields: &self.fields,
            found: false,
        };
        syn::visit::Visit::visit_expr(&mut find, e);
        find.found
    }

    /// In `para!`, whether `tokens` name `self` (whose sub-models are calls the analysis
    /// rewrites).
    fn names_self(&self, tokens: TokenStream) -> bool {
        self.para && tokens.into_iter().any(|t| is_self(&t))
    }

    /// Whether code must be lowered rather than emitted as written: it names a differentiated
    /// variable, or a sub-model.
    /// Lowers a block, `if` or `match` with `lower`, and takes it back for forward-only data
    /// when the lowered branch turns out to read no differentiated value from outside, call
    /// no sub-model and rebind nothing: its differentiated names were all hidden by its own
    /// `let`s or patterns (`let k = { let y = 2; y + 1 };` under a differentiated `y`).
    fn lowered_or_data(
        &mut self,
        e: &Expr,
        out: &mut Vec<Stmt>,
        lower: impl FnOnce(&mut Self, &mut Vec<Stmt>) -> Operand,
    ) -> Operand {
        let (mark, errors, lowered) = (out.len(), self.errors.count(), self.in_place.len());
        let value = lower(self, out);
        let only_branch = match (&value, &out[mark..]) {
            (Operand::Var(v), [stmt]) => matches!(
                &stmt.kind,
                StmtKind::Let { target, op, .. }
                    if target == v && matches!(&**op, Op::Branch(b) if b.free.is_empty())
            ),
            _ => false,
        };
        if only_branch && self.errors.count() == errors && !self.names_self(e.to_token_stream()) {
            out.truncate(mark);
            self.in_place.truncate(lowered);
            return Operand::Const(e.to_token_stream());
        }
        value
    }

    fn needs_lowering(&self, tokens: TokenStream) -> bool {
        self.mentions_diff(tokens.clone()) || self.names_self(tokens)
    }
}

/// What the analysis gives the expansion: every variable, the body in A-normal form, and the
/// variables of the arguments, in order.
pub struct Analysed {
    pub vars: Vec<Var>,
    pub body: Block,
    pub arg_ids: Vec<VarId>,
    /// The operators and methods of the body as written that are lowered to rules.
    pub in_place: BTreeMap<usize, InPlace>,
    /// The type probes of the body's loops, by [`node_key`] of the loop (`probes.rs`).
    pub probes: BTreeMap<usize, TokenStream>,
}

/// Analyses the body of a `#[lens]` function.
pub fn lens_fn(f: &crate::parse::LensFn, errors: &mut Errors) -> Analysed {
    lens_fn_with(f, errors, None, |kind| {
        kind != crate::parse::ArgKind::NoDiff
    })
}

/// [`lens_fn`] with only the `#[param]` arguments differentiated: the sweep of a lens type's
/// `vjp_params`, whose inputs are data (a learner wants no input change). `first` is the
/// first analysis ([`lens_fn`]): a method's rule runs one-sided only where it did there.
pub fn lens_fn_params(f: &crate::parse::LensFn, first: &Analysed, errors: &mut Errors) -> Analysed {
    let one_sided = first
        .in_place
        .iter()
        .filter(|(_, w)| w.side.is_some())
        .map(|(k, _)| *k)
        .collect();
    lens_fn_with(f, errors, Some(one_sided), |kind| {
        kind == crate::parse::ArgKind::Param
    })
}

fn lens_fn_with(
    f: &crate::parse::LensFn,
    errors: &mut Errors,
    one_sided: Option<BTreeSet<usize>>,
    diff: impl Fn(crate::parse::ArgKind) -> bool,
) -> Analysed {
    let mut an = Analyser::new(errors);
    an.one_sided = one_sided;
    an.own_name = Some(syn::ext::IdentExt::unraw(&f.original.sig.ident).to_string());
    an.declare_generics(&f.generics);
    an.mut_ref_args = f
        .args
        .iter()
        .filter(|a| matches!(&a.ty, syn::Type::Reference(r) if r.mutability.is_some()))
        .map(|a| a.ident.to_string())
        .collect();
    let arg_ids: Vec<VarId> = f
        .args
        .iter()
        .map(|a| an.declare_arg(&a.ident, diff(a.kind), a.mutable))
        .collect();
    an.borrowed_data = f
        .args
        .iter()
        .zip(&arg_ids)
        .filter(|(a, _)| {
            !diff(a.kind) && matches!(&a.ty, syn::Type::Reference(r) if r.mutability.is_none())
        })
        .map(|(_, id)| *id)
        .collect();
    an.analysed(&f.body, arg_ids)
}

/// Analyses the forward function of a `para!` model, whose sub-models it calls by field.
pub fn para_model(m: &crate::parse::ParaModel, errors: &mut Errors) -> Analysed {
    let mut an = Analyser::new(errors);
    an.declare_fields(&m.fields());
    // The struct's generics are the forward function's too (a loop bound `0..N - 1` with the
    // struct's `N`, which was read as a `const` item and refused by rustc in const position).
    let mut generics = m.item.generics.clone();
    generics
        .params
        .extend(m.forward.sig.generics.params.iter().cloned());
    an.declare_generics(&generics);
    let arg_ids = m
        .args
        .iter()
        .zip(&m.mutable)
        .map(|((i, t), mutable)| an.declare_arg(i, !crate::parse::nodiff_type(t), *mutable))
        .collect();
    an.analysed(&m.forward.block, arg_ids)
}

impl Analyser<'_> {
    /// The body analysed, its arguments declared as `arg_ids`: what the expansion takes.
    fn analysed(mut self, block: &syn::Block, arg_ids: Vec<VarId>) -> Analysed {
        self.probes = probes::for_loops(block);
        let body = self.body(block);
        Analysed {
            vars: self.vars,
            body,
            arg_ids,
            in_place: self.in_place.into_iter().collect(),
            probes: self.probes,
        }
    }
}
