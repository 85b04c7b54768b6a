//! Analysis: a function body into A-normal form (one operation per `let`), with every
//! variable resolved to the binding it refers to and marked differentiated or not.
//!
//! Values that depend on no differentiated variable stay as the user wrote them
//! (`Operand::Const`) and run in the forward pass only. Everything the engine cannot
//! differentiate is an error at that expression, saying what to write instead.

mod loops;
mod recompute;

pub use loops::Loop;
pub use recompute::plan as recompute_plan;

use crate::errors::Errors;
use crate::primitives;
use proc_macro2::{Span, TokenStream, TokenTree};
use quote::{ToTokens, quote, quote_spanned};
use std::collections::{BTreeMap, BTreeSet};
use syn::spanned::Spanned;
use syn::{BinOp, Expr, Ident, Pat, Path, Stmt as SynStmt, Type, UnOp};

/// Index of a variable in [`Analyser::vars`].
pub type VarId = usize;

/// One binding: a user variable (its forward name is the user's identifier) or a temporary.
pub struct Var {
    pub ident: Ident,
    pub diff: bool,
    /// Declared `let mut` (or a rebinding of such a variable): assignments rebind it.
    pub mutable: bool,
    /// Fresh temporary created by the analysis (may be renamed to a user binding).
    temp: bool,
}

/// An operand of an operation: a differentiated variable or a forward-only expression.
#[derive(Clone)]
pub enum Operand {
    Var(VarId),
    Const(TokenStream),
}

/// A block: its statements, its value and the differentiated variables from outside it
/// that it uses (its pullback returns their changes, in this order).
pub struct Block {
    pub stmts: Vec<Stmt>,
    pub result: Operand,
    pub free: Vec<VarId>,
    /// Outer `let mut` bindings a `let` of this block shadowed: slot -> (the binding as it was,
    /// a copy taken just before), so that the block can still hand the binding on.
    kept: BTreeMap<(usize, usize), (VarId, VarId)>,
}

pub struct Stmt {
    pub kind: StmtKind,
    pub span: Span,
}

pub enum StmtKind {
    /// A forward-only statement, emitted as written.
    Verbatim(TokenStream),
    /// `let target = op;` (boxed: an operation is much larger than the other variants)
    Let {
        target: VarId,
        ty: Option<Box<Type>>,
        op: Box<Op>,
    },
    /// `let (a, _, c) = src;` on a differentiated tuple (`let [a, _, c] = src;` on an array
    /// when `array`).
    Destructure {
        src: VarId,
        targets: Vec<Option<VarId>>,
        array: bool,
    },
}

pub enum Op {
    /// `let x = y;`
    Alias(Operand),
    /// A primitive reverse rule: `func(args..., extra...)` returns `(value, pullback)`;
    /// the pullback returns one change per arg (a tuple when there are several).
    Rule {
        func: TokenStream,
        args: Vec<Operand>,
        extra: Vec<TokenStream>,
    },
    /// A call of another lens function through its `_vjp`.
    Call { path: Path, args: Vec<Operand> },
    /// `(a, b, ...)`
    Tuple(Vec<Operand>),
    /// `[a, b, ...]`
    Array(Vec<Operand>),
    /// `base.field` (a named field of a struct, `.0` of a tuple): the reverse adds the change
    /// into that field of `base`'s adjoint, in place.
    Field { base: Operand, member: syn::Member },
    /// `Path { a: x, b: y }`: a struct built from values; the reverse hands each field's
    /// change to its value.
    Struct {
        path: TokenStream,
        fields: Vec<(syn::Member, Operand)>,
    },
    /// `SVector::new(a, b, ...)` (any nalgebra constructor `new` from entries): the callee
    /// as written and the entries in its order (row by row for a matrix).
    Build {
        callee: TokenStream,
        args: Vec<Operand>,
    },
    /// `self.field(args)` inside `para!`.
    Sub { field: Ident, args: Vec<Operand> },
    /// `if` / `match` / a nested block: one pullback per branch, chosen in the forward pass.
    Branch(Branch),
    /// `base[index]` with a forward-only index: the entry, whose change the reverse adds
    /// into `base`'s adjoint at that place.
    Index { base: Operand, index: TokenStream },
    /// A `for` loop over a range bounded by a constant: one pullback per iteration, kept on
    /// a fixed-size tape. Its value is the tuple of the loop-carried bindings.
    Loop(Loop),
}

pub struct Branch {
    pub head: BranchHead,
    pub blocks: Vec<Block>,
    /// Union of the blocks' free variables: what every branch's pullback returns.
    pub free: Vec<VarId>,
}

pub enum BranchHead {
    /// A plain nested block.
    Plain,
    /// `if <cond>` (the condition as written, including `let pat = e` for `if let`).
    If(TokenStream),
    /// `match <scrutinee> { <pat> [if guard] => ... }`.
    Match {
        scrutinee: TokenStream,
        arms: Vec<TokenStream>,
    },
}

/// Methods whose value carries no change (counts, tests, signs, and the step functions,
/// whose derivative is zero wherever it exists).
const NO_CHANGE_METHODS: &[&str] = &[
    "len",
    "nrows",
    "ncols",
    "shape",
    "is_empty",
    "is_nan",
    "is_finite",
    "is_infinite",
    "is_sign_negative",
    "is_sign_positive",
    "signum",
    "floor",
    "ceil",
    "round",
    "trunc",
    "argmax",
    "argmin",
    "imax",
    "imin",
    "count_ones",
];

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
    /// Method calls already refused, so that reading them again is not a second error.
    refused: BTreeSet<String>,
}

fn rules_path(span: Span, item: TokenStream) -> TokenStream {
    quote_spanned!(span=> ::paralens::__private::rules::#item)
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
            refused: BTreeSet::new(),
        }
    }

    /// Declares the function's generic parameters.
    pub fn declare_generics(&mut self, generics: &syn::Generics) {
        self.const_params = generics
            .const_params()
            .map(|c| c.ident.to_string())
            .collect();
        self.type_params = generics
            .type_params()
            .map(|t| t.ident.to_string())
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
        self.block_with(block, Vec::new())
    }

    fn block_with(&mut self, block: &syn::Block, bindings: Vec<(Ident, bool)>) -> Block {
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
        let n = block.stmts.len();
        for (i, stmt) in block.stmts.iter().enumerate() {
            match stmt {
                SynStmt::Expr(e, None) if i + 1 == n => result = self.expr(e, &mut stmts),
                other => self.stmt(other, &mut stmts),
            }
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
                    Operand::Const(ts) => out.push(Stmt {
                        kind: StmtKind::Verbatim(quote!(#ts #semi)),
                        span,
                    }),
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
                out.push(Stmt {
                    kind: StmtKind::Destructure {
                        src,
                        targets,
                        array,
                    },
                    span,
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
            Op::Tuple(elems) | Op::Array(elems) | Op::Build { args: elems, .. } => elems,
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
                    format!("`{name}` is read here and assigned again later in the same expression; assign it in a statement of its own first"),
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
                    UnOp::Neg(_) => quote!(NegRule::neg_vjp),
                    UnOp::Not(_) => quote!(NotRule::not_vjp),
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
                self.push_op(
                    Op::Rule {
                        func,
                        args: vec![arg],
                        extra: vec![],
                    },
                    span,
                    out,
                )
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
                self.push_op(Op::Array(elems), span, out)
            }
            Expr::Block(b) if b.label.is_none() && !self.mentions_diff(b.to_token_stream()) => {
                // A block that never names a differentiated value is forward-only data.
                Operand::Const(e.to_token_stream())
            }
            Expr::Block(b) if b.label.is_none() => {
                let parts = vec![(b.block.clone(), Vec::new())];
                self.branches(BranchHead::Plain, parts, span, out)
            }
            Expr::If(i) => self.if_expr(i, out),
            Expr::Match(m) => self.match_expr(m, out),
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
                self.push_op(Op::Struct { path, fields }, span, out)
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

    fn has_sub_call(&self, e: &Expr) -> bool {
        self.para && e.to_token_stream().into_iter().any(|t| is_self(&t))
    }

    fn binary(&mut self, b: &syn::ExprBinary, out: &mut Vec<Stmt>) -> Operand {
        let span = b.span();
        let rule = match b.op {
            BinOp::Add(_) => quote!(AddRule::add_vjp),
            BinOp::Sub(_) => quote!(SubRule::sub_vjp),
            BinOp::Mul(_) => quote!(MulRule::mul_vjp),
            BinOp::Div(_) => quote!(DivRule::div_vjp),
            BinOp::BitXor(_) => quote!(XorRule::xor_vjp),
            BinOp::BitAnd(_) => quote!(AndRule::and_vjp),
            BinOp::BitOr(_) => quote!(OrRule::or_vjp),
            BinOp::Eq(_)
            | BinOp::Ne(_)
            | BinOp::Lt(_)
            | BinOp::Le(_)
            | BinOp::Gt(_)
            | BinOp::Ge(_)
            | BinOp::And(_)
            | BinOp::Or(_) => {
                // Forward-only data computed from differentiated values: read, never changed.
                self.check_read(b);
                return Operand::Const(b.to_token_stream());
            }
            BinOp::Rem(_) => {
                self.errors.at(
                    b,
                    "`%` has no reverse rule; write the operation as a `#[lens]` function",
                );
                return Operand::Const(b.to_token_stream());
            }
            BinOp::Shl(_) | BinOp::Shr(_) => {
                self.errors.at(
                    b,
                    "shifts of differentiated words are not supported; shift non-differentiated values",
                );
                return Operand::Const(b.to_token_stream());
            }
            _ => unreachable!("compound assignments are lowered by `assign`"),
        };
        let l = self.expr(&b.left, out);
        let r = self.expr(&b.right, out);
        if let (Operand::Const(_), Operand::Const(_)) = (&l, &r) {
            // Both sides are forward-only data (`n + (x > 0.0) as usize`).
            self.check_read(b);
            return Operand::Const(b.to_token_stream());
        }
        if let (BinOp::Mul(_), Operand::Var(a), Operand::Var(c)) = (&b.op, &l, &r)
            && a == c
        {
            // `x * x`: one change `2 x d` instead of two to be added.
            let func = rules_path(span, quote!(SquareRule::square_vjp));
            return self.push_op(
                Op::Rule {
                    func,
                    args: vec![l],
                    extra: vec![],
                },
                span,
                out,
            );
        }
        let func = rules_path(span, rule);
        self.push_op(
            Op::Rule {
                func,
                args: vec![l, r],
                extra: vec![],
            },
            span,
            out,
        )
    }

    fn method(&mut self, m: &syn::ExprMethodCall, out: &mut Vec<Stmt>) -> Operand {
        let span = m.span();
        let name = m.method.to_string();
        if is_self_expr(&m.receiver) {
            return self.sub_call(m, out);
        }
        // An iterator chain (`v.iter().map(..).sum()`): one error, at the iterator.
        if let Some(it) = iterator_in_chain(m) {
            self.errors.at(
                &it.method,
                "iterators over differentiated values are not differentiated; use `sum`, `dot` or `norm` on the vector, or a `for i in 0..N` loop with indexing (`v[i]`)",
            );
            let mut e: &Expr = &Expr::MethodCall(m.clone());
            while let Expr::MethodCall(c) = e {
                self.refused.insert(c.to_token_stream().to_string());
                e = &c.receiver;
            }
            return Operand::Const(m.to_token_stream());
        }
        if NO_CHANGE_METHODS.contains(&name.as_str()) {
            self.check_read(m);
            return Operand::Const(m.to_token_stream());
        }
        if let Some(t) = &m.turbofish {
            self.errors
                .at(t, "turbofish on a differentiated method is not supported");
        }
        let args: Vec<&Expr> = m.args.iter().collect();
        let mut extra = Vec::new();
        let (func, operands): (TokenStream, Vec<&Expr>) = match name.as_str() {
            "powi" => {
                if args.len() != 1 {
                    self.errors.at(
                        m,
                        format!("`powi` takes 1 argument here, found {}", args.len()),
                    );
                    return Operand::Const(m.to_token_stream());
                }
                if self.mentions_diff(args[0].to_token_stream()) {
                    self.errors.at(
                        args[0],
                        "the exponent of `powi` is an integer and is not differentiated; use `powf` for a differentiated exponent",
                    );
                }
                extra.push(args[0].to_token_stream());
                (quote!(PowiRule::powi_vjp), Vec::new())
            }
            "map" => {
                let [f] = args.as_slice() else {
                    self.errors.at(
                        m,
                        format!("`map` takes 1 argument here, found {}", args.len()),
                    );
                    return Operand::Const(m.to_token_stream());
                };
                let Expr::Path(p) = f else {
                    self.errors.at(
                        f,
                        "`map` on a differentiated value takes the name of a `#[lens]` function (`x.map(f)`), not a closure",
                    );
                    return Operand::Const(m.to_token_stream());
                };
                let f_rev = suffixed(&p.path, "_rev");
                let f = &p.path;
                extra.extend([quote!(#f), quote!(#f_rev)]);
                (quote!(map_vjp), Vec::new())
            }
            "clone" => {
                let recv = self.expr(&m.receiver, out);
                return self.push_op(Op::Alias(recv), span, out);
            }
            _ => match primitives::find(&name, args.len()) {
                Some(p) => {
                    // `x.dot(&x)` and `x.component_mul(&x)`: one change, not two to be added.
                    let same = p.square.is_some()
                        && matches!(
                            (self.expr_var(&m.receiver), self.expr_var(strip_ref(args[0]))),
                            (Some(a), Some(b)) if a == b
                        );
                    let rule = if same {
                        p.square.unwrap_or(p.rule)
                    } else {
                        p.rule
                    };
                    let rule: TokenStream = rule.parse().expect("the table's rules are paths");
                    let operands = if same { Vec::new() } else { args.clone() };
                    (rule, operands)
                }
                None => {
                    let arities = primitives::arities(&name);
                    let msg = if arities.is_empty() {
                        format!(
                            "no reverse rule for the method `{name}`; supported: {}; or write `{name}` as a `#[lens]` function and call it as `{name}(x)`",
                            primitives::supported()
                        )
                    } else {
                        let n: Vec<String> = arities.iter().map(ToString::to_string).collect();
                        format!(
                            "`{name}` is differentiated with {} argument(s), found {}",
                            n.join(" or "),
                            args.len()
                        )
                    };
                    self.errors.at(&m.method, msg);
                    self.refused.insert(m.to_token_stream().to_string());
                    return Operand::Const(m.to_token_stream());
                }
            },
        };
        let recv = self.expr(&m.receiver, out);
        let rest: Vec<Operand> = operands
            .iter()
            .map(|a| self.expr(strip_ref(a), out))
            .collect();
        if matches!(recv, Operand::Const(_)) && rest.iter().all(|o| matches!(o, Operand::Const(_)))
        {
            // Forward-only data on every side (`(x > 0.0 as i32 as f64).exp()`).
            self.check_read(m);
            return Operand::Const(m.to_token_stream());
        }
        let mut ops = vec![recv];
        ops.extend(rest);
        let func = rules_path(span, func);
        self.push_op(
            Op::Rule {
                func,
                args: ops,
                extra,
            },
            span,
            out,
        )
    }

    /// The variable a plain name refers to, if it is a differentiated one (no code emitted).
    fn expr_var(&self, e: &Expr) -> Option<VarId> {
        match e {
            Expr::Path(p) => p
                .path
                .get_ident()
                .and_then(|i| self.lookup(&i.to_string()))
                .filter(|id| self.vars[*id].diff),
            Expr::Paren(p) => self.expr_var(&p.expr),
            _ => None,
        }
    }

    /// `x[i]`, `m[(r, c)]`, `a[i]`: the index is forward-only data.
    fn index(&mut self, ix: &syn::ExprIndex, out: &mut Vec<Stmt>) -> Operand {
        if matches!(&*ix.index, Expr::Range(_)) && self.mentions_diff(ix.expr.to_token_stream()) {
            self.errors.at(
                &ix.index,
                "slicing a differentiated value is not supported; read the entries one by one (`v[i]` in a `for` loop) or build the part with `SVector::new(v[1], v[2])`",
            );
            return Operand::Const(ix.to_token_stream());
        }
        // Forward-only data, possibly read from differentiated values by a comparison
        // (`v[(x > 0.0) as usize]`).
        if let Operand::Var(_) = self.expr(&ix.index, out) {
            self.errors.at(
                &ix.index,
                "an index is forward-only data (a `usize`, or a pair for a matrix); it cannot be computed from a differentiated value",
            );
            return Operand::Const(ix.to_token_stream());
        }
        let base = self.expr(&ix.expr, out);
        if let Operand::Const(_) = base {
            self.check_read(ix);
            return Operand::Const(ix.to_token_stream());
        }
        let index = ix.index.to_token_stream();
        self.push_op(Op::Index { base, index }, ix.span(), out)
    }

    fn sub_call(&mut self, m: &syn::ExprMethodCall, out: &mut Vec<Stmt>) -> Operand {
        if !self.para {
            self.errors.at(
                &m.receiver,
                "`self` is not available in a `#[lens]` function; declare models with sub-models with `para!`",
            );
            return Operand::Const(m.to_token_stream());
        }
        if !self.fields.contains(&m.method) {
            let names: Vec<String> = self.fields.iter().map(ToString::to_string).collect();
            self.errors.at(
                &m.method,
                format!(
                    "`{}` is not a sub-model of this model; its sub-models are: {}",
                    m.method,
                    names.join(", ")
                ),
            );
            return Operand::Const(m.to_token_stream());
        }
        let args = m.args.iter().map(|a| self.expr(a, out)).collect();
        self.push_op(
            Op::Sub {
                field: m.method.clone(),
                args,
            },
            m.span(),
            out,
        )
    }

    fn call(&mut self, c: &syn::ExprCall, out: &mut Vec<Stmt>) -> Operand {
        let Expr::Path(p) = &*c.func else {
            self.errors.at(
                &c.func,
                "only calls of named `#[lens]` functions are differentiated",
            );
            return Operand::Const(c.to_token_stream());
        };
        if p.qself.is_some() {
            self.errors.at(
                p,
                "qualified paths (`<T as Trait>::f`) are not supported; call a `#[lens]` function by name",
            );
            return Operand::Const(c.to_token_stream());
        }
        // `SMatrix::<T, R, C>::from_fn(|r, c| e)`: filled entry by entry, by the loop a user
        // would write.
        if p.path.segments.last().is_some_and(|s| s.ident == "from_fn")
            && p.path.segments.iter().any(|s| is_nalgebra_type(&s.ident))
        {
            return self.build_from_fn(c, &p.path, out);
        }
        // `SVector::new(a, b, c)`, `Vector3::<f64>::new(..)`, `Matrix2::new(..)`: a nalgebra
        // value built from entries.
        if p.path.segments.last().is_some_and(|s| s.ident == "new")
            && p.path.segments.iter().any(|s| is_nalgebra_type(&s.ident))
        {
            let args = c.args.iter().map(|a| self.expr(a, out)).collect();
            let callee = c.func.to_token_stream();
            return self.push_op(Op::Build { callee, args }, c.span(), out);
        }
        // `W(a, b)`: a tuple struct (deriving `Tangent`) built from values, as `W { 0: a, 1: b }`.
        if let Some(last) = p.path.segments.last()
            && last
                .ident
                .to_string()
                .starts_with(|c: char| c.is_ascii_uppercase())
            && !["Some", "Ok", "Err"].contains(&last.ident.to_string().as_str())
            && p.path.segments.len() == 1
        {
            let fields: Vec<(syn::Member, Operand)> = c
                .args
                .iter()
                .enumerate()
                .map(|(i, a)| (syn::Member::Unnamed(syn::Index::from(i)), self.expr(a, out)))
                .collect();
            let path = p.path.to_token_stream();
            return self.push_op(Op::Struct { path, fields }, c.span(), out);
        }
        // `f64::max(x, y)`, `T::exp(x)`: the method of a scalar type, called as a function.
        if let [ty, method] = p.path.segments.iter().collect::<Vec<_>>().as_slice()
            && (ty.ident == "f32"
                || ty.ident == "f64"
                || self.type_params.contains(&ty.ident.to_string()))
            && primitives::known(&method.ident.to_string())
            && let Some(receiver) = c.args.first()
        {
            let call = syn::ExprMethodCall {
                attrs: Vec::new(),
                receiver: Box::new(receiver.clone()),
                dot_token: Default::default(),
                method: method.ident.clone(),
                turbofish: None,
                paren_token: c.paren_token,
                args: c.args.iter().skip(1).cloned().collect(),
            };
            return self.method(&call, out);
        }
        let args = c.args.iter().map(|a| self.expr(a, out)).collect();
        let path = suffixed(&p.path, "_vjp");
        self.push_op(Op::Call { path, args }, c.span(), out)
    }

    /// `SMatrix::<T, R, C>::from_fn(|r, c| e)` (or `SVector::<T, N>`) whose entries read
    /// differentiated values, as `let mut m = zeros(); for c in 0..C { for r in 0..R {
    /// m[(r, c)] = e } }`: each entry's change goes to what `e` read, through the entry
    /// assignment's rule. The shape must be written in the call, so that the loops have
    /// constant bounds.
    fn build_from_fn(
        &mut self,
        c: &syn::ExprCall,
        path: &syn::Path,
        out: &mut Vec<Stmt>,
    ) -> Operand {
        let closure = match c.args.iter().collect::<Vec<_>>().as_slice() {
            [Expr::Closure(cl)] if cl.inputs.len() == 2 => cl.clone(),
            _ => {
                self.errors.at(
                    &c.args,
                    "`from_fn` is differentiated with one closure of the row and column, `|r, c| ...`",
                );
                return Operand::Const(c.to_token_stream());
            }
        };
        let mut ty = path.clone();
        ty.segments.pop();
        let ty_seg = ty.segments.last().cloned();
        let args: Vec<TokenStream> = match ty_seg.as_ref().map(|s| &s.arguments) {
            Some(syn::PathArguments::AngleBracketed(a)) => {
                a.args.iter().map(ToTokens::to_token_stream).collect()
            }
            _ => Vec::new(),
        };
        let kind = ty_seg.map(|s| s.ident.to_string()).unwrap_or_default();
        let (rows, cols) = match (kind.as_str(), args.as_slice()) {
            ("SMatrix", [_, r, c]) => (r.clone(), c.clone()),
            ("SVector", [_, n]) => (n.clone(), quote!(1)),
            _ => {
                self.errors.at(
                    path,
                    "write the shape in the call, `SMatrix::<f64, R, C>::from_fn(|r, c| ...)` or `SVector::<f64, N>::from_fn(|i, _| ...)`: its entries are filled by loops whose lengths must be constants",
                );
                return Operand::Const(c.to_token_stream());
            }
        };
        let ty = syn::Path {
            leading_colon: ty.leading_colon,
            segments: ty.segments.into_iter().collect(),
        };
        let (pr, pc) = (&closure.inputs[0], &closure.inputs[1]);
        let body = &closure.body;
        let span = c.span();
        let block: Expr = syn::parse2(quote_spanned!(span=> {
            let mut __from_fn = #ty::zeros();
            for __from_fn_c in 0..#cols {
                for __from_fn_r in 0..#rows {
                    let #pr = __from_fn_r;
                    let #pc = __from_fn_c;
                    __from_fn[(__from_fn_r, __from_fn_c)] = #body;
                }
            }
            __from_fn
        }))
        .expect("the loops of `from_fn` parse");
        self.expr(&block, out)
    }

    fn if_expr(&mut self, i: &syn::ExprIf, out: &mut Vec<Stmt>) -> Operand {
        let span = i.span();
        let (head, bindings) = match &*i.cond {
            Expr::Let(l) => {
                if self.mentions_diff(l.expr.to_token_stream()) {
                    self.errors.at(
                        &l.expr,
                        "`if let` on a differentiated value is not supported; destructure it with `let`",
                    );
                }
                (l.to_token_stream(), pattern_bindings(&l.pat))
            }
            cond => {
                self.check_read(cond);
                (cond.to_token_stream(), Vec::new())
            }
        };
        // Branches that never name a differentiated value yield forward-only data (an `i32`
        // chosen by `if y > 1.0`), whatever the condition reads: emitted as written.
        let arms_mention = self.mentions_diff(i.then_branch.to_token_stream())
            || i.else_branch
                .as_ref()
                .is_some_and(|(_, e)| self.mentions_diff(e.to_token_stream()));
        if !arms_mention {
            return Operand::Const(i.to_token_stream());
        }
        // No `else` is an empty one: the untaken branch keeps every binding as it was.
        let other = match i.else_branch.as_ref().map(|(_, e)| &**e) {
            None => empty_block(),
            Some(Expr::Block(b)) if b.label.is_none() => b.block.clone(),
            Some(e) => wrap_block(e.clone()),
        };
        let parts = vec![(i.then_branch.clone(), bindings), (other, Vec::new())];
        self.branches(BranchHead::If(head), parts, span, out)
    }

    fn match_expr(&mut self, m: &syn::ExprMatch, out: &mut Vec<Stmt>) -> Operand {
        if let Operand::Var(_) = self.expr(&m.expr, out) {
            self.errors.at(
                &m.expr,
                "matching on a differentiated value is not supported; match on a condition computed from it (`match x > 0.0 { ... }`)",
            );
            return Operand::Const(m.to_token_stream());
        }
        for arm in &m.arms {
            if let Some((_, g)) = &arm.guard {
                self.check_read(g);
            }
        }
        // Arms that never name a differentiated value (guards only read): forward-only data.
        if !m
            .arms
            .iter()
            .any(|arm| self.mentions_diff(arm.body.to_token_stream()))
        {
            return Operand::Const(m.to_token_stream());
        }
        let mut arms = Vec::new();
        let mut blocks = Vec::new();
        for arm in &m.arms {
            let pat = &arm.pat;
            let guard = arm.guard.as_ref().map(|(i, g)| quote!(#i #g));
            arms.push(quote!(#pat #guard));
            let names = pattern_bindings(&arm.pat);
            let block = match &*arm.body {
                Expr::Block(b) if b.label.is_none() => b.block.clone(),
                e => wrap_block(e.clone()),
            };
            blocks.push((block, names));
        }
        let scrutinee = m.expr.to_token_stream();
        self.branches(BranchHead::Match { scrutinee, arms }, blocks, m.span(), out)
    }

    /// Analyses the blocks of a branch, each from the bindings as they are before it, and joins
    /// the outer `let mut` bindings that any of them reassigns: every block then yields
    /// `(value, final bindings...)` (a block that leaves one alone yields it unchanged), and
    /// after the branch the names are rebound to what the taken block yielded.
    fn branches(
        &mut self,
        head: BranchHead,
        parts: Vec<(syn::Block, Vec<(Ident, bool)>)>,
        span: Span,
        out: &mut Vec<Stmt>,
    ) -> Operand {
        // A pattern binding (`Some(a) =>`, `if let Some(a)`) hides an outer binding from the
        // start of its block: copy such bindings before the branch, in case it hands them on.
        let mut hidden: Vec<BTreeMap<(usize, usize), VarId>> = Vec::new();
        for (_, bindings) in &parts {
            let mut h = BTreeMap::new();
            for (ident, _) in bindings {
                if let Some((si, ei)) = self.lookup_slot(&ident.to_string()) {
                    let v = self.scopes[si][ei].1;
                    if self.vars[v].mutable && !h.contains_key(&(si, ei)) {
                        let copy = self.capture(v, ident.span(), out);
                        h.insert((si, ei), copy);
                    }
                }
            }
            hidden.push(h);
        }
        let before = self.scopes.clone();
        let mut blocks = Vec::new();
        let mut changes = Vec::new();
        for (b, bindings) in &parts {
            blocks.push(self.block_with(b, bindings.clone()));
            let mut changed = BTreeMap::new();
            for (si, scope) in before.iter().enumerate() {
                for (ei, (_, id)) in scope.iter().enumerate() {
                    let now = self.scopes[si][ei].1;
                    if now != *id {
                        changed.insert((si, ei), now);
                    }
                }
            }
            changes.push(changed);
            self.scopes = before.clone();
        }
        let slots: BTreeSet<(usize, usize)> =
            changes.iter().flat_map(|c| c.keys().copied()).collect();
        if slots.is_empty() {
            return self.branch(head, blocks, span, out);
        }
        let old = |s: &(usize, usize)| before[s.0][s.1].1;
        for ((blk, changed), hid) in blocks.iter_mut().zip(&changes).zip(&hidden) {
            let mut elems = vec![std::mem::replace(
                &mut blk.result,
                Operand::Const(quote!(())),
            )];
            for s in &slots {
                let mut id = changed.get(s).copied().unwrap_or_else(|| old(s));
                // Where the block's own `let` or pattern hid the binding, hand on the copy.
                match (blk.kept.get(s), hid.get(s)) {
                    (Some(&(was, copy)), _) if was == id => id = copy,
                    (_, Some(&copy)) if !changed.contains_key(s) => id = copy,
                    _ => {}
                }
                let inside =
                    changed.get(s) == Some(&id) || blk.kept.get(s).is_some_and(|&(_, c)| c == id);
                if self.vars[id].diff && !inside && !blk.free.contains(&id) {
                    // Defined outside the block: its pullback returns the change.
                    blk.free.push(id);
                    blk.free.sort_unstable();
                }
                elems.push(Operand::Var(id));
            }
            let n = self.vars.len();
            let t = self.new_var(Ident::new(&format!("__t{n}"), span), true, true);
            blk.stmts.push(Stmt {
                kind: StmtKind::Let {
                    target: t,
                    ty: None,
                    op: Box::new(Op::Tuple(elems)),
                },
                span,
            });
            blk.result = Operand::Var(t);
        }
        let Operand::Var(joined) = self.branch(head, blocks, span, out) else {
            unreachable!("a branch is bound to a temporary")
        };
        let value = self.temp(span);
        let mut targets = vec![Some(value)];
        for s in &slots {
            let diff = changes
                .iter()
                .map(|c| c.get(s).copied().unwrap_or_else(|| old(s)))
                .any(|id| self.vars[id].diff);
            let ident = self.vars[old(s)].ident.clone();
            let id = self.new_var(ident, diff, false);
            self.vars[id].mutable = true;
            if let Some(f) = self.frames.last_mut() {
                f.defined.insert(id);
            }
            self.scopes[s.0][s.1].1 = id;
            targets.push(Some(id));
        }
        self.use_var(joined);
        out.push(Stmt {
            kind: StmtKind::Destructure {
                src: joined,
                targets,
                array: false,
            },
            span,
        });
        Operand::Var(value)
    }

    /// Before a `let` of this block hides an outer `let mut` binding named `ident`, takes a
    /// copy of it: the block may have to hand that binding on after its end (see
    /// [`Analyser::branches`]), where its name no longer refers to it.
    fn keep_before_shadowing(&mut self, ident: &Ident, out: &mut Vec<Stmt>) {
        let depth = self.scopes.len() - 1;
        let Some((si, ei)) = self.lookup_slot(&ident.to_string()) else {
            return;
        };
        let current = self.scopes[si][ei].1;
        let known = self
            .frames
            .last()
            .is_some_and(|f| f.kept.contains_key(&(si, ei)));
        if si >= depth || !self.vars[current].mutable || known {
            return;
        }
        let copy = self.capture(current, ident.span(), out);
        if let Some(f) = self.frames.last_mut() {
            f.kept.insert((si, ei), (current, copy));
        }
    }

    /// `let __t = v;`: a copy of `v` under a name nothing can shadow.
    fn capture(&mut self, v: VarId, span: Span, out: &mut Vec<Stmt>) -> VarId {
        let copy = self.temp(span);
        if self.vars[v].diff {
            let op = Box::new(Op::Alias(self.use_var(v)));
            out.push(Stmt {
                kind: StmtKind::Let {
                    target: copy,
                    ty: None,
                    op,
                },
                span,
            });
        } else {
            self.vars[copy].diff = false;
            let (c, o) = (&self.vars[copy].ident, &self.vars[v].ident);
            out.push(Stmt {
                kind: StmtKind::Verbatim(quote!(let #c = #o;)),
                span,
            });
        }
        copy
    }

    /// `x = e` and `x op= e` on a `let mut` binding: `x` is rebound to the new value (a fresh
    /// binding, as if the user had written `let x = e;`), in the scope where `x` was declared,
    /// so that the code after it, and after an enclosing branch, sees the new value.
    fn assign(
        &mut self,
        e: &Expr,
        left: &Expr,
        op: Option<BinOp>,
        right: &Expr,
        out: &mut Vec<Stmt>,
    ) -> Operand {
        let unit = Operand::Const(quote!(()));
        // `v[i] = e` rebinds `v` to a copy with that entry replaced.
        let entry = match left {
            Expr::Index(ix) => Some(ix),
            _ => None,
        };
        let whole = entry.map_or(left, |ix| &*ix.expr);
        let target = match whole {
            Expr::Path(p) if p.qself.is_none() => p.path.get_ident(),
            _ => None,
        };
        let Some(name) = target else {
            self.errors.at(
                left,
                "only whole variables and their entries (`v[i]`, `m[(r, c)]`) can be assigned in a `#[lens]` body; build the new value and bind it (`let v = ...;`)",
            );
            return unit;
        };
        let Some((si, ei)) = self.lookup_slot(&name.to_string()) else {
            self.errors.at(
                left,
                format!("`{name}` is not a local binding of this function; only `let mut` bindings can be assigned here"),
            );
            return unit;
        };
        let old = self.scopes[si][ei].1;
        if !self.vars[old].mutable {
            self.errors.at(
                left,
                format!("cannot assign to `{name}`: it is not declared mutable; write `let mut {name} = ...;`"),
            );
            return unit;
        }
        if let Some(ix) = entry {
            return self.assign_entry(e, ix, op, right, out);
        }
        let value = match op {
            None => self.expr(right, out),
            Some(op) => {
                let combined = syn::ExprBinary {
                    attrs: Vec::new(),
                    left: Box::new(left.clone()),
                    op,
                    right: Box::new(Expr::Paren(syn::ExprParen {
                        attrs: Vec::new(),
                        paren_token: syn::token::Paren(right.span()),
                        expr: Box::new(right.clone()),
                    })),
                };
                self.binary(&combined, out)
            }
        };
        self.rebind(e, name, (si, ei), value, out)
    }

    /// `v[i] = e` and `v[i] op= e` (the binding and its mutability checked): `v` is rebound
    /// to the value of the rule `set_at(v, e, i)`, a copy with the entry replaced, whose
    /// reverse hands the entry's change to `e` and the rest to the old `v`.
    fn assign_entry(
        &mut self,
        e: &Expr,
        ix: &syn::ExprIndex,
        op: Option<BinOp>,
        right: &Expr,
        out: &mut Vec<Stmt>,
    ) -> Operand {
        let unit = Operand::Const(quote!(()));
        let Expr::Path(p) = &*ix.expr else {
            return unit;
        };
        let Some(name) = p.path.get_ident().cloned() else {
            return unit;
        };
        let Some((si, ei)) = self.lookup_slot(&name.to_string()) else {
            return unit;
        };
        if matches!(&*ix.index, Expr::Range(_)) {
            self.errors.at(
                &ix.index,
                "assigning to a slice of a value is not supported; assign the entries one by one (`w[i] = e` in a `for` loop)",
            );
            return unit;
        }
        if let Operand::Var(_) = self.expr(&ix.index, out) {
            self.errors.at(
                &ix.index,
                "an index is forward-only data (a `usize`, or a pair for a matrix); it cannot be computed from a differentiated value",
            );
            return unit;
        }
        let value = match op {
            None => self.expr(right, out),
            Some(op) => {
                let combined = syn::ExprBinary {
                    attrs: Vec::new(),
                    left: Box::new(Expr::Index(ix.clone())),
                    op,
                    right: Box::new(Expr::Paren(syn::ExprParen {
                        attrs: Vec::new(),
                        paren_token: syn::token::Paren(right.span()),
                        expr: Box::new(right.clone()),
                    })),
                };
                self.binary(&combined, out)
            }
        };
        let old = self.scopes[si][ei].1;
        if let Operand::Const(_) = value
            && !self.vars[old].diff
        {
            // Forward-only data changed by forward-only data: run as written.
            out.push(Stmt {
                kind: StmtKind::Verbatim(quote!(#e;)),
                span: e.span(),
            });
            return unit;
        }
        let base = if self.vars[old].diff {
            self.use_var(old)
        } else {
            Operand::Const(quote!(#name))
        };
        let index = ix.index.to_token_stream();
        let set = self.push_op(
            Op::Rule {
                func: quote!(::paralens::__private::rules::SetRule::set_at_vjp),
                args: vec![base, value],
                extra: vec![index],
            },
            e.span(),
            out,
        );
        self.rebind(e, &name, (si, ei), set, out)
    }

    /// Rebinds the `let mut` binding `name` (in scope slot `slot`) to `value`.
    fn rebind(
        &mut self,
        e: &Expr,
        name: &Ident,
        (si, ei): (usize, usize),
        value: Operand,
        out: &mut Vec<Stmt>,
    ) -> Operand {
        let unit = Operand::Const(quote!(()));
        let old = self.scopes[si][ei].1;
        let span = e.span();
        let new = match value {
            Operand::Const(_) if !self.vars[old].diff => {
                // Forward-only data changed by forward-only data: run as written.
                out.push(Stmt {
                    kind: StmtKind::Verbatim(quote!(#e;)),
                    span,
                });
                return unit;
            }
            Operand::Const(ts) => {
                let id = self.new_var(name.clone(), false, false);
                out.push(Stmt {
                    kind: StmtKind::Verbatim(quote_spanned!(span=> let mut #name = #ts;)),
                    span,
                });
                id
            }
            Operand::Var(src) if self.vars[src].temp && self.last_defines(out, src) => {
                self.vars[src].ident = name.clone();
                self.vars[src].temp = false;
                src
            }
            Operand::Var(src) => {
                let id = self.new_var(name.clone(), self.vars[src].diff, false);
                let op = Box::new(Op::Alias(self.use_var(src)));
                out.push(Stmt {
                    kind: StmtKind::Let {
                        target: id,
                        ty: None,
                        op,
                    },
                    span,
                });
                id
            }
        };
        self.vars[new].mutable = true;
        if let Some(f) = self.frames.last_mut() {
            f.defined.insert(new);
        }
        self.scopes[si][ei].1 = new;
        unit
    }

    /// Refuses, in forward-only code that reads differentiated values (a condition, a
    /// comparison, a `println!`), anything that could change a binding: the change would be
    /// invisible to the reverse sweep.
    fn check_read(&mut self, node: &(impl ToTokens + ?Sized)) {
        let tokens = node.to_token_stream();
        if !self.mentions_diff(tokens.clone()) {
            return;
        }
        let Ok(e) = syn::parse2::<Expr>(tokens) else {
            return;
        };
        let mut effects = Effects::default();
        syn::visit::Visit::visit_expr(&mut effects, &e);
        for (tokens, what) in effects.0 {
            if self.mentions_diff(tokens.clone()) {
                self.errors.at(
                    tokens,
                    format!("{what} in forward-only code that reads a differentiated value is not supported; compute the value in its own statement"),
                );
            }
        }
        for (name, call) in effects.1 {
            if !READ_METHODS.contains(&name.as_str())
                && !NO_CHANGE_METHODS.contains(&name.as_str())
                && !self.refused.contains(&call.to_string())
                && self.mentions_diff(call.clone())
            {
                self.errors.at(
                    call,
                    format!("`{name}` in forward-only code that reads a differentiated value might change a binding or keep the value where the reverse sweep cannot see it; only methods that just read (math such as `abs`, `norm`, `max`, and comparisons) are allowed here; compute it in its own `let` first"),
                );
            }
        }
        for (func, call) in effects.2 {
            let float_fn = func
                .segments
                .first()
                .is_some_and(|s| s.ident == "f32" || s.ident == "f64")
                && func.segments.len() == 2;
            if !float_fn && self.mentions_diff(call.clone()) {
                self.errors.at(
                    call,
                    "a call given a differentiated value in forward-only code (a condition, a comparison, a `println!`) might keep the value where the reverse sweep cannot see it; bind the call's result with `let` first (a `#[lens]` function is then differentiated)",
                );
            }
        }
    }

    /// A macro statement that sees differentiated values: only the printing, assertion and
    /// panic macros, whose arguments are read.
    fn check_macro(&mut self, mac: &syn::Macro) {
        if !self.mentions_diff(mac.tokens.clone()) {
            return;
        }
        let name = mac
            .path
            .segments
            .last()
            .map(|s| s.ident.to_string())
            .unwrap_or_default();
        if !READING_MACROS.contains(&name.as_str()) {
            self.errors.at(
                mac,
                format!("`{name}!` cannot see differentiated values (only {} can); compute its input in a `let` first", READING_MACROS.iter().map(|m| format!("`{m}!`")).collect::<Vec<_>>().join(", ")),
            );
            return;
        }
        let parser = syn::punctuated::Punctuated::<Expr, syn::Token![,]>::parse_terminated;
        let Ok(args) = mac.parse_body_with(parser) else {
            self.errors.at(
                mac,
                format!("the arguments of `{name}!` could not be read as expressions"),
            );
            return;
        };
        for arg in &args {
            match arg {
                // A named format argument (`x = expr`).
                Expr::Assign(a) if matches!(&*a.left, Expr::Path(_)) => self.check_read(&*a.right),
                other => self.check_read(other),
            }
        }
    }

    /// A branch or loop body's pullback adds into the adjoints of the values it reads from
    /// outside through a helper of fixed arity (`__private::adjoints0` to `adjoints12`).
    fn check_outside_reads(&mut self, n: usize, span: Span, what: &str) {
        const MAX: usize = 12;
        if n > MAX {
            self.errors.push(syn::Error::new(
                span,
                format!("this {what} reads {n} differentiated values from outside it, more than the {MAX} supported; put some of them in a tuple or a vector first, or move the {what}'s work into a `#[lens]` function"),
            ));
        }
    }

    fn branch(
        &mut self,
        head: BranchHead,
        blocks: Vec<Block>,
        span: Span,
        out: &mut Vec<Stmt>,
    ) -> Operand {
        let free: BTreeSet<VarId> = blocks.iter().flat_map(|b| b.free.iter().copied()).collect();
        let free: Vec<VarId> = free.into_iter().collect();
        self.check_outside_reads(free.len(), span, "branch");
        for &v in &free {
            self.use_var(v);
        }
        self.push_op(Op::Branch(Branch { head, blocks, free }), span, out)
    }
}

/// Macros whose arguments are only read, so they may print or check differentiated values.
const READING_MACROS: &[&str] = &[
    "print",
    "println",
    "eprint",
    "eprintln",
    "assert",
    "assert_eq",
    "assert_ne",
    "debug_assert",
    "debug_assert_eq",
    "debug_assert_ne",
    "panic",
    "unreachable",
];

/// Methods forward-only code may call on (or with) a differentiated value: they read it and
/// return plain data.
const READ_METHODS: &[&str] = &[
    "exp",
    "ln",
    "sqrt",
    "powi",
    "powf",
    "sin",
    "cos",
    "tan",
    "tanh",
    "sinh",
    "cosh",
    "asin",
    "acos",
    "atan",
    "atan2",
    "log2",
    "log10",
    "exp2",
    "hypot",
    "abs",
    "max",
    "min",
    "clamp",
    "recip",
    "floor",
    "ceil",
    "round",
    "trunc",
    "fract",
    "mul_add",
    "transpose",
    "dot",
    "component_mul",
    "component_div",
    "sum",
    "mean",
    "norm",
    "norm_squared",
    "amax",
    "amin",
    "clone",
    "partial_cmp",
    "total_cmp",
    "eq",
    "ne",
    "lt",
    "le",
    "gt",
    "ge",
    "is_normal",
];

/// What in an expression could change a binding or keep a value: assignments, `&mut`, blocks
/// and closures (which may hold either), nested macros; and, kept apart by name, method calls
/// (a method may take its receiver by `&mut`, or store its argument) and calls of functions.
#[derive(Default)]
struct Effects(
    Vec<(TokenStream, &'static str)>,
    Vec<(String, TokenStream)>,
    Vec<(syn::Path, TokenStream)>,
);

impl<'a> syn::visit::Visit<'a> for Effects {
    fn visit_expr(&mut self, e: &'a Expr) {
        // A branch may read differentiated values in its condition, scrutinee and guards (it
        // then chooses forward-only data); its arms must not name them.
        match e {
            Expr::If(i) => {
                self.visit_expr(&i.cond);
                self.0.push((i.then_branch.to_token_stream(), "a branch"));
                if let Some((_, other)) = &i.else_branch {
                    self.0.push((other.to_token_stream(), "a branch"));
                }
                return;
            }
            Expr::Match(m) => {
                self.visit_expr(&m.expr);
                for arm in &m.arms {
                    if let Some((_, g)) = &arm.guard {
                        self.visit_expr(g);
                    }
                    self.0.push((arm.body.to_token_stream(), "a branch"));
                }
                return;
            }
            _ => {}
        }
        let what = match e {
            Expr::Assign(_) => Some("an assignment"),
            Expr::Binary(b) if compound_op(&b.op).is_some() => Some("an assignment"),
            Expr::Reference(r) if r.mutability.is_some() => Some("`&mut`"),
            Expr::Block(_) | Expr::Unsafe(_) => Some("a block"),
            Expr::ForLoop(_) | Expr::While(_) | Expr::Loop(_) => Some("a loop"),
            Expr::Closure(_) => Some("a closure"),
            Expr::Macro(_) => Some("a macro"),
            _ => None,
        };
        if let Some(what) = what {
            self.0.push((e.to_token_stream(), what));
            return;
        }
        match e {
            Expr::MethodCall(m) => self.1.push((m.method.to_string(), e.to_token_stream())),
            Expr::Call(c) => match &*c.func {
                Expr::Path(p) => self.2.push((p.path.clone(), e.to_token_stream())),
                other => self
                    .0
                    .push((other.to_token_stream(), "a call of a computed function")),
            },
            _ => {}
        }
        syn::visit::visit_expr(self, e);
    }
}

/// The names a string literal's inline format arguments capture (`"{x} {y:?}"`: `x`, `y`).
fn format_captures(literal: &str) -> Vec<String> {
    if !literal.contains('"') {
        return Vec::new();
    }
    let mut names = Vec::new();
    let mut rest = literal;
    while let Some(open) = rest.find('{') {
        rest = &rest[open + 1..];
        if rest.starts_with('{') {
            rest = &rest[1..]; // `{{` is a literal brace
            continue;
        }
        let end = rest
            .find(|c: char| !(c.is_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        let name = &rest[..end];
        if name
            .chars()
            .next()
            .is_some_and(|c| c.is_alphabetic() || c == '_')
        {
            names.push(name.to_string());
        }
        rest = &rest[end..];
    }
    names
}

/// Whether `e` is an assignment (`x = e` or `x op= e`).
fn is_assignment(e: &Expr) -> bool {
    match e {
        Expr::Assign(_) => true,
        Expr::Binary(b) => compound_op(&b.op).is_some(),
        _ => false,
    }
}

/// The operator of a compound assignment (`+` for `+=`), spanned at it.
fn compound_op(op: &BinOp) -> Option<BinOp> {
    Some(match op {
        BinOp::AddAssign(t) => BinOp::Add(syn::Token![+](t.spans[0])),
        BinOp::SubAssign(t) => BinOp::Sub(syn::Token![-](t.spans[0])),
        BinOp::MulAssign(t) => BinOp::Mul(syn::Token![*](t.spans[0])),
        BinOp::DivAssign(t) => BinOp::Div(syn::Token![/](t.spans[0])),
        BinOp::RemAssign(t) => BinOp::Rem(syn::Token![%](t.spans[0])),
        BinOp::BitXorAssign(t) => BinOp::BitXor(syn::Token![^](t.spans[0])),
        BinOp::BitAndAssign(t) => BinOp::BitAnd(syn::Token![&](t.spans[0])),
        BinOp::BitOrAssign(t) => BinOp::BitOr(syn::Token![|](t.spans[0])),
        BinOp::ShlAssign(t) => BinOp::Shl(syn::Token![<<](t.spans[0])),
        BinOp::ShrAssign(t) => BinOp::Shr(syn::Token![>>](t.spans[0])),
        _ => return None,
    })
}

fn empty_block() -> syn::Block {
    syn::Block {
        brace_token: Default::default(),
        stmts: Vec::new(),
    }
}

/// An expression as the one statement of a block (a `match` arm, an `else if`).
fn wrap_block(e: Expr) -> syn::Block {
    syn::Block {
        brace_token: Default::default(),
        stmts: vec![SynStmt::Expr(e, None)],
    }
}

/// The identifiers a pattern binds, with whether each is `mut`.
fn pattern_bindings(pat: &Pat) -> Vec<(Ident, bool)> {
    let mut out = Vec::new();
    collect_bindings(pat, &mut out);
    out
}

fn collect_bindings(pat: &Pat, out: &mut Vec<(Ident, bool)>) {
    match pat {
        Pat::Ident(pi) => {
            out.push((pi.ident.clone(), pi.mutability.is_some()));
            if let Some((_, sub)) = &pi.subpat {
                collect_bindings(sub, out);
            }
        }
        Pat::Tuple(t) => t.elems.iter().for_each(|p| collect_bindings(p, out)),
        Pat::TupleStruct(t) => t.elems.iter().for_each(|p| collect_bindings(p, out)),
        Pat::Struct(s) => s.fields.iter().for_each(|f| collect_bindings(&f.pat, out)),
        Pat::Slice(s) => s.elems.iter().for_each(|p| collect_bindings(p, out)),
        Pat::Or(o) => {
            if let Some(first) = o.cases.first() {
                collect_bindings(first, out);
            }
        }
        Pat::Paren(p) => collect_bindings(&p.pat, out),
        Pat::Reference(r) => collect_bindings(&r.pat, out),
        Pat::Type(t) => collect_bindings(&t.pat, out),
        _ => {}
    }
}

/// `return` and `?` anywhere in a body (closures and nested items excepted).
struct EarlyExits(Vec<(TokenStream, &'static str)>);

impl<'a> syn::visit::Visit<'a> for EarlyExits {
    fn visit_expr_return(&mut self, r: &'a syn::ExprReturn) {
        self.0.push((
            r.to_token_stream(),
            "`return` is not supported in a `#[lens]` body; make the value the block's last expression",
        ));
    }
    fn visit_expr_try(&mut self, t: &'a syn::ExprTry) {
        self.0.push((
            t.to_token_stream(),
            "`?` is not supported in a `#[lens]` body; a lens always produces its value",
        ));
    }
    fn visit_expr_closure(&mut self, _: &'a syn::ExprClosure) {}
    fn visit_item(&mut self, _: &'a syn::Item) {}
}

fn is_self(t: &TokenTree) -> bool {
    match t {
        TokenTree::Ident(i) => i == "self",
        TokenTree::Group(g) => g.stream().into_iter().any(|t| is_self(&t)),
        _ => false,
    }
}

fn is_self_expr(e: &Expr) -> bool {
    matches!(e, Expr::Path(p) if p.path.is_ident("self"))
}

/// `a::b::f` with `suffix` appended to the last segment's name (`a::b::f_rev`).
pub fn suffixed(path: &Path, suffix: &str) -> Path {
    let mut p = path.clone();
    if let Some(last) = p.segments.last_mut() {
        // `r#match` gives `match_vjp`.
        let name = syn::ext::IdentExt::unraw(&last.ident);
        last.ident = Ident::new(&format!("{name}{suffix}"), last.ident.span());
    }
    p
}

/// `&x` as `x` (a method's operand may be borrowed: `x.dot(&y)`).
fn strip_ref(e: &Expr) -> &Expr {
    match e {
        Expr::Reference(r) if r.mutability.is_none() => &r.expr,
        other => other,
    }
}

/// Whether `ident` names a static nalgebra matrix or vector type (`SVector`, `SMatrix`,
/// `Vector3`, `Matrix2x3`, `RowVector4`, ...).
fn is_nalgebra_type(ident: &Ident) -> bool {
    let s = ident.to_string();
    [
        "SVector",
        "SMatrix",
        "Vector",
        "Matrix",
        "RowSVector",
        "RowVector",
    ]
    .iter()
    .any(|p| {
        s.strip_prefix(p)
            .is_some_and(|rest| rest.chars().all(|c| c.is_ascii_digit() || c == 'x'))
    })
}

/// The first `iter`/`into_iter`/`iter_mut` call in a method chain, if any.
fn iterator_in_chain(m: &syn::ExprMethodCall) -> Option<&syn::ExprMethodCall> {
    let mut e = m;
    loop {
        if ["iter", "into_iter", "iter_mut"].contains(&e.method.to_string().as_str()) {
            return Some(e);
        }
        match &*e.receiver {
            Expr::MethodCall(inner) => e = inner,
            _ => return None,
        }
    }
}
