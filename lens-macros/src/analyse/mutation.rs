//! Mutation as rebinding: `x = e`, `x op= e` and entry assignment `v[i] = e`.

use super::*;
use crate::rt::RT;

impl Analyser<'_> {
    /// `x = e` and `x op= e` on a `let mut` binding: `x` is rebound to the new value (a fresh
    /// binding, as if the user had written `let x = e;`), in the scope where `x` was declared,
    /// so that the code after it, and after an enclosing branch, sees the new value.
    pub(super) fn assign(
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
            // `*x = ...` through a `&mut` argument: `validate` already refused the argument.
            if let Expr::Unary(syn::ExprUnary {
                op: syn::UnOp::Deref(_),
                expr,
                ..
            }) = whole
                && let Expr::Path(p) = &**expr
                && p.path
                    .get_ident()
                    .is_some_and(|i| self.mut_ref_args.contains(&i.to_string()))
            {
                return unit;
            }
            let message = if matches!(left, Expr::Tuple(_)) {
                // In a loop a new `let` would not reach the next iteration: assign in turn.
                "assigning several bindings at once (`(a, b) = (b, a + b)`) is not supported; assign them one by one through a temporary (`let t = a; a = b; b = t + b;`)"
            } else {
                "only whole variables and their entries (`v[i]`, `m[(r, c)]`) can be assigned in a `#[lens]` body; build the new value and bind it (`let v = ...;`)"
            };
            self.errors.at(left, message);
            return unit;
        };
        let Some((si, ei)) = self.lookup_slot(&name.to_string()) else {
            if self.unvalued.contains(&name.to_string()) {
                return unit;
            }
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
            Some(op) => self.compound(e, op, out),
        };
        self.rebind(e, name, (si, ei), value, out)
    }

    /// The value of `x op= e` (`e`, a compound assignment) as `x op (e)`, its operands read
    /// in place and the assignment the node the function as written rewrites.
    fn compound(&mut self, e: &Expr, op: BinOp, out: &mut Vec<Stmt>) -> Operand {
        let Expr::Binary(b) = e else {
            unreachable!("a compound assignment is a binary expression")
        };
        // `x op (e)` for the operator and the tokens of messages; the operands themselves are
        // read where they are.
        let combined = syn::ExprBinary {
            attrs: Vec::new(),
            left: b.left.clone(),
            op,
            right: Box::new(Expr::Paren(syn::ExprParen {
                attrs: Vec::new(),
                paren_token: syn::token::Paren(b.right.span()),
                expr: b.right.clone(),
            })),
        };
        self.binary_of(&combined, true, &b.left, &b.right, node_key(b), out)
    }

    /// `v[i] = e` and `v[i] op= e` (the binding and its mutability checked): `v` is rebound
    /// to the value of the rule `set_at(v, e, i)`, a copy with the entry replaced, whose
    /// reverse hands the entry's change to `e` and the rest to the old `v`.
    pub(super) fn assign_entry(
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
        if op.is_some() && !without_effects(&ix.index) && self.needs_lowering(e.to_token_stream()) {
            // `v[i] op= e` reads the entry and then replaces it: the index is computed for
            // each, and one with an effect (`v[{ k += 1; k }] += x`) would name two entries.
            self.errors.at(
                &ix.index,
                "the index of `v[i] op= e` is computed twice here (to read the entry, then to replace it); bind it first: `let k = ...; v[k] += e;`",
            );
            return unit;
        }
        let value = match op {
            None => self.expr(right, out),
            Some(op) => self.compound(e, op, out),
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
                func: quote!(#RT::rules::set_checked!),
                args: vec![base, value],
                extra: vec![index],
                tied: false,
                checked: None,
                sided: false,
            },
            e.span(),
            out,
        );
        self.rebind(e, &name, (si, ei), set, out)
    }

    /// Rebinds the `let mut` binding `name` (in scope slot `slot`) to `value`.
    pub(super) fn rebind(
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
}
