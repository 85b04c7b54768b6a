//! Control flow: `if`, `match` and blocks, analysed from the bindings before them and
//! joined after them.

use super::*;

impl Analyser<'_> {
    pub(super) fn if_expr(&mut self, i: &syn::ExprIf, out: &mut Vec<Stmt>) -> Operand {
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
        let arms_mention = self.needs_lowering(i.then_branch.to_token_stream())
            || i.else_branch
                .as_ref()
                .is_some_and(|(_, e)| self.needs_lowering(e.to_token_stream()));
        if !arms_mention {
            return Operand::Const(i.to_token_stream());
        }
        // No `else` is an empty one: the untaken branch keeps every binding as it was.
        let other = match i.else_branch.as_ref().map(|(_, e)| &**e) {
            None => Part::Empty,
            Some(Expr::Block(b)) if b.label.is_none() => Part::Block(&b.block),
            Some(e) => Part::Expr(e),
        };
        let parts = vec![(Part::Block(&i.then_branch), bindings), (other, Vec::new())];
        self.branches(BranchHead::If(head), parts, span, out)
    }

    pub(super) fn match_expr(&mut self, m: &syn::ExprMatch, out: &mut Vec<Stmt>) -> Operand {
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
            .any(|arm| self.needs_lowering(arm.body.to_token_stream()))
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
                Expr::Block(b) if b.label.is_none() => Part::Block(&b.block),
                e => Part::Expr(e),
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
    pub(super) fn branches(
        &mut self,
        head: BranchHead,
        parts: Vec<(Part<'_>, Vec<(Ident, bool)>)>,
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
            blocks.push(self.block_with(*b, bindings.clone()));
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
        // Forward-only data from every block (`let n = match o { Some(s) => { y *= 2.0;
        // s.len() } None => 0 };`) is so after the branch too. It has no change, so it does
        // not ride in the tuple the blocks hand on (whose change has the tuple's type): it is
        // declared before the branch and assigned in each block.
        let forward_only = blocks
            .iter()
            .all(|b| matches!(&b.result, Operand::Const(_)))
            && blocks.iter().any(|b| !is_unit(&b.result));
        let data = forward_only.then(|| {
            // A variable for a name nothing else uses (it is never differentiated).
            let v = self.temp(span);
            self.vars[v].diff = false;
            let name = self.vars[v].ident.clone();
            out.push(Stmt {
                kind: StmtKind::Verbatim(quote!(let #name;)),
                span,
            });
            name
        });
        for ((blk, changed), hid) in blocks.iter_mut().zip(&changes).zip(&hidden) {
            let mut value = std::mem::replace(&mut blk.result, Operand::Const(quote!(())));
            if let (Some(name), Operand::Const(ts)) = (&data, &value) {
                blk.stmts.push(Stmt {
                    kind: StmtKind::Verbatim(quote!(#name = #ts;)),
                    span,
                });
                value = Operand::Const(quote!(()));
            }
            // A forward-only value is computed before the bindings are read: as the tuple's
            // first element it ran after the copies of them the tuple takes first, and a last
            // expression that changed one (`y += 2.0` without `;`) was lost.
            if let Operand::Const(ts) = &value
                && !is_unit(&value)
            {
                let v = quote::format_ident!("__fv{}", self.vars.len());
                blk.stmts.push(Stmt {
                    kind: StmtKind::Verbatim(quote!(let #v = #ts;)),
                    span,
                });
                value = Operand::Const(quote!(#v));
            }
            let mut elems = vec![value];
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
        let value = data.is_none().then(|| self.temp(span));
        let mut targets = vec![value];
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
        match data {
            // Read by its name, as forward-only data is.
            Some(name) => {
                self.branch_data.insert(name.to_string());
                Operand::Const(quote!(#name))
            }
            None => Operand::Var(value.expect("a differentiated value has a temporary")),
        }
    }

    /// Before a `let` of this block hides an outer `let mut` binding named `ident`, takes a
    /// copy of it: the block may have to hand that binding on after its end (see
    /// [`Analyser::branches`]), where its name no longer refers to it.
    pub(super) fn keep_before_shadowing(&mut self, ident: &Ident, out: &mut Vec<Stmt>) {
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
    pub(super) fn capture(&mut self, v: VarId, span: Span, out: &mut Vec<Stmt>) -> VarId {
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

    pub(super) fn branch(
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

/// A block's value that is `()`, as written or as the analysis leaves a block without one.
fn is_unit(o: &Operand) -> bool {
    matches!(o, Operand::Const(ts) if ts.to_string() == "()")
}
