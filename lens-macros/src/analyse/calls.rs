//! Expressions to rules: operators, methods, indexing, calls of `#[lens]` functions and
//! sub-models, and values built from entries.

use super::*;

impl Analyser<'_> {
    pub(super) fn binary(&mut self, b: &syn::ExprBinary, out: &mut Vec<Stmt>) -> Operand {
        self.binary_of(b, false, &b.left, &b.right, node_key(b), out)
    }

    /// `b` with the operands `left` and `right`, read in place (`b` is a copy for `x += e`,
    /// read as `x + (e)`, `assign`), the node found at `key` in the function as written.
    pub(super) fn binary_of(
        &mut self,
        b: &syn::ExprBinary,
        assign: bool,
        left: &Expr,
        right: &Expr,
        key: usize,
        out: &mut Vec<Stmt>,
    ) -> Operand {
        // The rule's code sits at the operator: a type error in it is reported there.
        let span = b.op.span();
        // The sweep runs `+ - * /` through `rules::checked` (`Some(tag)`); the Z2 rules take
        // both words at one type (tied).
        // A compound assignment's own tag: with no rule, the sweep goes on at the binding's
        // type, which the assignment keeps (not the other operand's, a second error).
        let of = |symbol: &str| {
            let o = crate::primitives::operator(symbol, 2);
            let checked = o
                .checked
                .map(|(op, assign_op)| if assign { assign_op } else { op });
            (o.tokens(), checked)
        };
        let (rule, checked) = match b.op {
            BinOp::Add(_) => of("+"),
            BinOp::Sub(_) => of("-"),
            BinOp::Mul(_) => of("*"),
            BinOp::Div(_) => of("/"),
            BinOp::BitXor(_) => of("^"),
            BinOp::BitAnd(_) => of("&"),
            BinOp::BitOr(_) => of("|"),
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
            BinOp::Rem(_) | BinOp::Shl(_) | BinOp::Shr(_) => {
                // Of forward-only data read from differentiated values (`(x.floor() as
                // usize) % 4`, `((x > 0.0) as u32) << 1`): forward-only data too.
                let l = self.expr(left, out);
                let r = self.expr(right, out);
                if matches!((&l, &r), (Operand::Const(_), Operand::Const(_))) {
                    return Operand::Const(b.to_token_stream());
                }
                let message = if matches!(b.op, BinOp::Rem(_)) {
                    "`%` has no reverse rule; write the operation as a `#[lens]` function"
                } else {
                    "shifts of differentiated words are not supported; shift non-differentiated values"
                };
                self.errors.at(b, message);
                return Operand::Const(b.to_token_stream());
            }
            _ => unreachable!("compound assignments are lowered by `assign`"),
        };
        let l = self.expr(left, out);
        let r = self.expr(right, out);
        if let (Operand::Const(_), Operand::Const(_)) = (&l, &r) {
            // Both sides are forward-only data (`n + (x > 0.0) as usize`).
            self.check_read(b);
            return Operand::Const(b.to_token_stream());
        }
        // `x * 2` of a differentiated `x`: no rule takes an integer (differentiated values
        // are floats, matrices of floats, words), and the rule's error came with two more
        // naming the sweep's `Unmatched` and `add_vjp`.
        if checked.is_some()
            && let Some(int) = [(left, &r), (right, &l)]
                .into_iter()
                .find_map(|(e, other)| {
                    (matches!(other, Operand::Var(_)) && is_integer_literal(e)).then_some(e)
                })
        {
            self.errors.at(
                int,
                format!(
                    "`{}` is an integer literal, and a differentiated value is a float (or a matrix of floats): write `{}.0`",
                    int.to_token_stream(),
                    int.to_token_stream()
                ),
            );
            return Operand::Const(b.to_token_stream());
        }
        // `w * x` with `#[nodiff] w: &HeapMatrix<..>`: the rule takes values, so borrowed
        // data is read as an owned copy (a pooled block for a heap matrix), in the function
        // as written too (`InPlace::owned`).
        let borrowed = [left, right].map(|e| self.is_borrowed_data(e));
        let [l, r] = [(l, borrowed[0]), (r, borrowed[1])].map(|(o, b)| match o {
            Operand::Const(k) if b => Operand::Const(owned(span, &k)),
            o => o,
        });
        let owned_operands = if borrowed.contains(&true) {
            borrowed.to_vec()
        } else {
            Vec::new()
        };
        if let (BinOp::Mul(_), Operand::Var(a), Operand::Var(c)) = (&b.op, &l, &r)
            && a == c
        {
            // `x * x`: one change `2 x d` instead of two to be added.
            let func = rules_path(span, quote!(SquareRule::square_vjp));
            let rule = Op::Rule {
                func,
                args: vec![l],
                extra: vec![],
                tied: false,
                checked: None,
                sided: false,
            };
            return self.push_rule(key, rule, Vec::new(), false, span, out);
        }
        let func = rules_path(span, rule);
        let rule = Op::Rule {
            func,
            args: vec![l, r],
            extra: vec![],
            tied: checked.is_none(),
            checked,
            sided: false,
        };
        self.push_rule(key, rule, owned_operands, false, span, out)
    }

    /// `e` names an argument that is data behind a shared reference (`borrowed_data`).
    fn is_borrowed_data(&self, mut e: &Expr) -> bool {
        while let Expr::Paren(p) = e {
            e = &p.expr;
        }
        match e {
            Expr::Path(p) => p
                .path
                .get_ident()
                .and_then(|i| self.lookup(&i.to_string()))
                .is_some_and(|id| self.borrowed_data.contains(&id)),
            _ => false,
        }
    }

    /// The rule `rule` (an `Op::Rule`), lowered from the node at `key` in the function as
    /// written, which runs the same rule on the first `args.len()` of its operands (those
    /// flagged in `owned` read through `rules::owned`, see `InPlace::owned`; those after the
    /// receiver of a float method of several operands through `guard::Tie` when `tie`).
    pub(super) fn push_rule(
        &mut self,
        key: usize,
        rule: Op,
        owned: Vec<bool>,
        tie: bool,
        span: Span,
        out: &mut Vec<Stmt>,
    ) -> Operand {
        if let Op::Rule {
            func,
            args,
            extra,
            checked,
            sided,
            ..
        } = &rule
        {
            // A method's one-sided form as the sweep runs it (`expand::differentiated_side`):
            // an operand its rule refuses is then the same error in both, reported once.
            let diff: Vec<bool> = args
                .iter()
                .map(|a| matches!(a, Operand::Var(id) if self.vars[*id].diff))
                .collect();
            let side = match diff.as_slice() {
                [true, false] if *sided => Some(0),
                [false, true] if *sided => Some(1),
                _ => None,
            };
            let func = match side {
                Some(i) => super::sided_rule(func, i),
                None => func.clone(),
            };
            self.in_place.push((
                key,
                InPlace {
                    func,
                    extra: extra.clone(),
                    operands: args.len(),
                    infer: infer_operand(*checked, args, &self.fields),
                    owned,
                    side,
                    tie,
                },
            ));
        }
        self.push_op(rule, span, out)
    }

    pub(super) fn method(&mut self, m: &syn::ExprMethodCall, out: &mut Vec<Stmt>) -> Operand {
        let args = m.args.iter().collect();
        self.method_of(m, &m.receiver, args, node_key(m), out)
    }

    /// `m` with the receiver `receiver` and the arguments `args`, read in place (`m` is a
    /// copy for `f64::max(x, y)`, read as `x.max(y)`), the node found at `key` in the
    /// function as written.
    pub(super) fn method_of(
        &mut self,
        m: &syn::ExprMethodCall,
        receiver: &Expr,
        args: Vec<&Expr>,
        key: usize,
        out: &mut Vec<Stmt>,
    ) -> Operand {
        // The rule's code sits at the method's name: a type error in it is reported there.
        let span = m.method.span();
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
        if crate::primitives::NO_CHANGE.contains(&name.as_str()) {
            self.check_read(m);
            return Operand::Const(m.to_token_stream());
        }
        if let Some(t) = &m.turbofish {
            self.errors
                .at(t, "turbofish on a differentiated method is not supported");
        }
        let mut extra = Vec::new();
        let mut tied = false;
        // A matrix method with operands (`dot`, `component_mul`, `component_div`) borrows its
        // receiver and may borrow its operand, so forward-only data there stays the caller's.
        let mut borrows = false;
        let mut sided = false;
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
                // `v.map(f64::sin)`: a scalar type's method is no `#[lens]` function (rustc
                // said "no function `sin_rev` found for `f64`").
                if let [ty, method] = p.path.segments.iter().collect::<Vec<_>>().as_slice()
                    && (SCALARS.contains(&ty.ident.to_string().as_str())
                        || self.type_params.contains(&ty.ident.to_string()))
                {
                    self.errors.at(
                        f,
                        format!(
                            "`map` on a differentiated value takes the name of a `#[lens]` function, and `{}::{}` is not one: write `#[lens] fn {}_of(x: {}) -> {} {{ x.{}() }}` outside this function and `map({}_of)`",
                            ty.ident, method.ident, method.ident, ty.ident, ty.ident, method.ident, method.ident
                        ),
                    );
                    return Operand::Const(m.to_token_stream());
                }
                // Its reverse tied to `f` itself (see `crate::tie`).
                let f_rev = suffixed(&p.path, "_lens_rev");
                let f = &p.path;
                extra.extend([quote!(#f), quote!(#f_rev)]);
                // In the sweep through `map_checked!`, which reports nothing when `f` takes
                // another type; the function as written runs `map_written!(v, f)`, which
                // reports it once (`f_rev` is the sweep's to check).
                (quote!(map_checked!), Vec::new())
            }
            "clone" => {
                let recv = self.expr(receiver, out);
                return self.push_op(Op::Alias(recv), span, out);
            }
            _ => match primitives::find(&name, args.len()) {
                Some(p) => {
                    // `x.dot(&x)` and `x.component_mul(&x)`: one change, not two to be added.
                    let same = p.square.is_some()
                        && matches!(
                            (self.expr_var(receiver), self.expr_var(strip_ref(args[0]))),
                            (Some(a), Some(b)) if a == b
                        );
                    let rule = if same {
                        p.square.unwrap_or(p.rule)
                    } else {
                        p.rule
                    };
                    tied = !same && primitives::tied(p);
                    borrows = !same && p.args > 0 && !primitives::tied(p);
                    // In `vjp_params`' sweep, only where the first sweep ran one too: a rule
                    // refusing an operand is then the same error in both, reported once.
                    sided = !same
                        && p.sided
                        && self.one_sided.as_ref().is_none_or(|k| k.contains(&key));
                    let rule: TokenStream = rule.parse().expect("the table's rules are paths");
                    let operands = if same { Vec::new() } else { args.clone() };
                    (rule, operands)
                }
                None => {
                    let arities = primitives::arities(&name);
                    let msg = if let Some(msg) = in_place_or_forward(&name, receiver) {
                        msg
                    } else if arities.is_empty() {
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
        let recv = self.expr(receiver, out);
        let rest: Vec<Operand> = operands
            .iter()
            .map(|a| match self.expr(strip_ref(a), out) {
                // `h.dot(&k)`: a forward-only operand, which the method borrows, is read as an
                // owned matrix (`rules::owned`), so `k` is still there to read afterwards.
                Operand::Const(k) if borrows => Operand::Const(owned(span, &k)),
                o => o,
            })
            .collect();
        if matches!(recv, Operand::Const(_)) && rest.iter().all(|o| matches!(o, Operand::Const(_)))
        {
            // Forward-only data on every side (`(x > 0.0 as i32 as f64).exp()`).
            self.check_read(m);
            return Operand::Const(m.to_token_stream());
        }
        // `k.dot(&h)`: a forward-only receiver, which the method borrows, is read as an owned
        // matrix (a copy of a static one, a pooled block for a heap one; through a reference
        // too), so `k` stays the caller's and `k: &SMatrix` is a receiver like `k: SMatrix`.
        // `r.max(x)` with `#[nodiff] r: &f64`: the rule takes its receiver by value, so a
        // borrowed receiver is read as an owned copy too (it was "no rule for `&f64`").
        let recv_owned = borrows || self.is_borrowed_data(receiver);
        let recv = match recv {
            Operand::Const(k) if recv_owned => Operand::Const(owned(span, &k)),
            o => o,
        };
        // `b.component_div(&b)`: the method borrows both, so this is Rust for a heap matrix
        // too, where the rule takes two owned values. The operand is an alias of the
        // receiver (its change added back), so each is moved once.
        let rest: Vec<Operand> = rest
            .into_iter()
            .map(|o| match (&o, &recv) {
                (Operand::Var(a), Operand::Var(r)) if borrows && a == r => {
                    self.push_op(Op::Alias(o), span, out)
                }
                _ => o,
            })
            .collect();
        let mut ops = vec![recv];
        ops.extend(rest);
        // The function as written reads the same operands so (`expand::written`).
        let read_owned: Vec<bool> = ops
            .iter()
            .enumerate()
            .map(|(i, o)| (borrows || (i == 0 && recv_owned)) && matches!(o, Operand::Const(_)))
            .collect();
        let func = rules_path(span, func);
        let rule = Op::Rule {
            func,
            args: ops,
            extra,
            tied,
            checked: None,
            sided,
        };
        if name == "map" {
            let Op::Rule { extra, .. } = &rule else {
                unreachable!("built as a rule above")
            };
            let written = InPlace {
                func: rules_path(span, quote!(map_written!)),
                extra: extra[..1].to_vec(),
                operands: 1,
                infer: None,
                owned: Vec::new(),
                side: None,
                tie: false,
            };
            self.in_place.push((key, written));
            return self.push_op(rule, span, out);
        }
        self.push_rule(key, rule, read_owned, tied, span, out)
    }

    /// The variable a plain name refers to, if it is a differentiated one (no code emitted).
    pub(super) fn expr_var(&self, e: &Expr) -> Option<VarId> {
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
    pub(super) fn index(&mut self, ix: &syn::ExprIndex, out: &mut Vec<Stmt>) -> Operand {
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
        // `v[1.0]`: a float literal is no index (rustc's own message comes with several more
        // about the rule's index types).
        let parts: Vec<&Expr> = match &*ix.index {
            Expr::Tuple(t) => t.elems.iter().collect(),
            e => vec![e],
        };
        if let Some(float) = parts
            .into_iter()
            .find(|e| matches!(e, Expr::Lit(l) if matches!(l.lit, syn::Lit::Float(_))))
        {
            self.errors.at(
                float,
                "an index is a `usize` (`v[1]`, `m[(0, 2)]`, a loop counter), not a float",
            );
            return Operand::Const(ix.to_token_stream());
        }
        let index = ix.index.to_token_stream();
        let brackets = ix.bracket_token.span.join();
        self.push_op(
            Op::Index {
                base,
                index,
                brackets,
            },
            ix.span(),
            out,
        )
    }

    pub(super) fn sub_call(&mut self, m: &syn::ExprMethodCall, out: &mut Vec<Stmt>) -> Operand {
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
        let ends = m.args.iter().map(token_ends).collect();
        self.push_op(
            Op::Sub {
                field: m.method.clone(),
                args,
                ends,
            },
            m.span(),
            out,
        )
    }

    /// The call `c`, lowered by its form (`call_form.rs`).
    pub(super) fn call(&mut self, c: &syn::ExprCall, out: &mut Vec<Stmt>) -> Operand {
        match self.call_form(c) {
            CallForm::Refused { error, once } => {
                self.errors.push(error);
                if once {
                    self.refused.insert(c.to_token_stream().to_string());
                }
                Operand::Const(c.to_token_stream())
            }
            CallForm::FromFn { path } => self.build_from_fn(c, path, out),
            CallForm::Repeat { path, value } => {
                let mut filled = c.clone();
                let closure: Expr = syn::parse_quote_spanned!(value.span()=> |_, _| #value);
                filled.args = std::iter::once(closure).collect();
                self.build_from_fn(&filled, path, out)
            }
            CallForm::Constructor => {
                let args = c.args.iter().map(|a| self.expr(a, out)).collect();
                let callee = c.func.to_token_stream();
                let places = c.args.iter().map(place).collect();
                self.push_op(
                    Op::Build {
                        callee,
                        args,
                        places,
                    },
                    c.span(),
                    out,
                )
            }
            CallForm::TupleStruct { path } => {
                let fields: Vec<(syn::Member, Operand)> = c
                    .args
                    .iter()
                    .enumerate()
                    .map(|(i, a)| (syn::Member::Unnamed(syn::Index::from(i)), self.expr(a, out)))
                    .collect();
                let path = path.to_token_stream();
                let places = c.args.iter().map(place).collect();
                self.push_op(
                    Op::Struct {
                        path,
                        fields,
                        places,
                        tuple: Some(c.paren_token.span.join()),
                    },
                    c.span(),
                    out,
                )
            }
            CallForm::ScalarMethod { method, receiver } => {
                let call = syn::ExprMethodCall {
                    attrs: Vec::new(),
                    receiver: Box::new(receiver.clone()),
                    dot_token: Default::default(),
                    method: method.clone(),
                    turbofish: None,
                    paren_token: c.paren_token,
                    args: c.args.iter().skip(1).cloned().collect(),
                };
                // Its operands read in place: the function as written keeps the call.
                let args = c.args.iter().skip(1).collect();
                self.method_of(&call, receiver, args, node_key(c), out)
            }
            CallForm::ScalarData => {
                self.check_read(c);
                Operand::Const(c.to_token_stream())
            }
            CallForm::Lens {
                path,
                type_relative,
            } => {
                let args = c.args.iter().map(|a| self.expr(a, out)).collect();
                let spans = c.args.iter().map(written_span).collect();
                let (suffix, item) = if type_relative {
                    ("_vjp", None)
                } else {
                    ("_lens_vjp", Some(path.clone()))
                };
                let parens = c.paren_token.span.join();
                self.push_op(
                    Op::Call {
                        path: suffixed(path, suffix),
                        item,
                        args,
                        spans,
                        parens,
                    },
                    c.span(),
                    out,
                )
            }
        }
    }

    /// `SMatrix::<T, R, C>::from_fn(|r, c| e)` (or `SVector::<T, N>`) whose entries read
    /// differentiated values, as `let mut m = zeros(); for c in 0..C { for r in 0..R {
    /// m[(r, c)] = e } }`: each entry's change goes to what `e` read, through the entry
    /// assignment's rule. The shape must be written in the call, so that the loops have
    /// constant bounds.
    pub(super) fn build_from_fn(
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
                let method = path.segments.last().map(|s| s.ident.to_string());
                self.errors
                    .at(path, shape_in_call(method.as_deref().unwrap_or("from_fn")));
                return Operand::Const(c.to_token_stream());
            }
        };
        let ty = syn::Path {
            leading_colon: ty.leading_colon,
            segments: ty.segments.into_iter().collect(),
        };
        let (pr, pc) = (&closure.inputs[0], &closure.inputs[1]);
        let body = &closure.body;
        // Its body becomes the loops' body, where `return` would leave the function.
        let mut exits = super::whitelist::EarlyExits(Vec::new());
        syn::visit::Visit::visit_expr(&mut exits, body);
        if !exits.0.is_empty() {
            for (tokens, _) in exits.0 {
                self.errors.at(
                    tokens,
                    "`return` and `?` are not supported in the closure of a differentiated `from_fn`; give the entry's value as the closure's last expression (`if r == c { x } else { x * x }`)",
                );
            }
            return Operand::Const(c.to_token_stream());
        }
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
}

/// Where the function as written has the value of `e` as an argument, for the sweep to read
/// it at the same place (see `Op::Call::spans`): a name at the name; an operation, a method
/// of the table, an entry, a sign or parentheses over their whole extent, where rustc
/// reports them (the rewrite spans an operation's value over it, see `Value`), in the same
/// form. At its operator alone, the sweep's help for a sign was `-.into()x`.
fn written_span(e: &Expr) -> Option<ArgAt> {
    let point = |point| {
        Some(ArgAt {
            point,
            ends: None,
            prefix: false,
        })
    };
    let whole = |point, e: &Expr, prefix| {
        Some(ArgAt {
            point,
            ends: Some(token_ends(e)?),
            prefix,
        })
    };
    match e {
        Expr::Path(p) if p.qself.is_none() && p.path.get_ident().is_some() => point(p.span()),
        Expr::Binary(b) => whole(b.op.span(), e, true),
        Expr::MethodCall(m) if primitives::known(&m.method.to_string()) => {
            whole(m.method.span(), e, false)
        }
        // A lost change at the brackets, at the sign, at what the parentheses hold.
        Expr::Index(i) => whole(i.bracket_token.span.join(), e, false),
        Expr::Unary(u) => whole(u.op.span(), e, true),
        Expr::Paren(p) => {
            let inner = written_span(&p.expr);
            let point = inner.map_or(p.span(), |a| a.point);
            whole(point, e, inner.is_some_and(|a| a.prefix))
        }
        _ => None,
    }
}

/// Where a part of a value built from parts is as written (see [`Place`]).
pub fn place(e: &Expr) -> Place {
    Place {
        first: e.span(),
        written: written_span(e),
    }
}

/// An integer literal without a suffix (`2`, `(2)`), which Rust types by its use.
fn is_integer_literal(e: &Expr) -> bool {
    match e {
        Expr::Paren(p) => is_integer_literal(&p.expr),
        Expr::Lit(l) => matches!(&l.lit, syn::Lit::Int(i) if i.suffix().is_empty()),
        _ => false,
    }
}

/// The spans of an expression's first and last token as written: an expression spread from
/// one to the other (`(v,).0`, see `Op::Call::spans`) is reported where the written one is.
pub fn token_ends(e: &Expr) -> Option<(Span, Span)> {
    let spans: Vec<Span> = e.to_token_stream().into_iter().map(|t| t.span()).collect();
    Some((*spans.first()?, *spans.last()?))
}

/// The operand of an operator read with a type taken from the other when nothing fixes its
/// own (see [`InPlace::infer`]): the one from forward-only data, when the other is
/// differentiated, with what it takes. `subs` are a `para!` model's sub-model fields.
pub fn infer_operand(
    checked: Option<&str>,
    args: &[Operand],
    subs: &[Ident],
) -> Option<(usize, Infer)> {
    let kind = match checked? {
        "Add" | "Sub" | "AddAssign" | "SubAssign" => Infer::Same,
        "Mul" | "Div" | "MulAssign" | "DivAssign" => Infer::Scalar,
        _ => return None,
    };
    match args {
        [Operand::Const(c), Operand::Var(_)] if !declared_read(c, subs) => Some((0, kind)),
        [Operand::Var(_), Operand::Const(c)] if !declared_read(c, subs) => Some((1, kind)),
        _ => None,
    }
}

/// Whether `tokens` read a named field of `self` (`self.scale`, `self.l1.w`) or call a method
/// of a sub-model (`self.l1.weights()`, `l1` in `subs`): their types are declared, so the
/// guard has nothing to infer there, and it would hide a mistake. A field or method that does
/// not exist (`self.l1.w`, a sub-model's weight read instead of calling it) is an error whose
/// type, once passed to a function, is a type nothing fixes; the guard then made it the other
/// operand's scalar, and the mistake's value went on with a valid type, reported again at a
/// later, correct `self.l2(h)`. Without the guard that value has no type, and rustc reports
/// nothing more of it. A method of a configuration field (`self.scale.into()`) is still
/// guarded: its type may be left to inference.
fn declared_read(tokens: &TokenStream, subs: &[Ident]) -> bool {
    let Ok(mut e) = syn::parse2::<Expr>(tokens.clone()) else {
        return false;
    };
    while let Expr::Paren(p) = e {
        e = *p.expr;
    }
    if let Expr::MethodCall(m) = &e
        && let Expr::Field(syn::ExprField {
            base,
            member: syn::Member::Named(sub),
            ..
        }) = &*m.receiver
        && is_self_expr(base)
        && subs.contains(sub)
    {
        return true;
    }
    loop {
        match e {
            Expr::Field(syn::ExprField {
                base,
                member: syn::Member::Named(_),
                ..
            }) => e = *base,
            Expr::Paren(p) => e = *p.expr,
            Expr::Path(p) => return p.qself.is_none() && p.path.is_ident("self"),
            _ => return false,
        }
    }
}

/// `rules::owned(&(k))`: forward-only data that a matrix method borrows, read as an owned
/// matrix (a copy, or a pooled block), whatever the references around it.
fn owned(span: proc_macro2::Span, k: &TokenStream) -> TokenStream {
    // At the method, as the function as written reads it: an operand of the wrong type is
    // then one error there, the same in both.
    let f = rules_path(span, quote!(owned));
    quote_spanned!(span=> #f(&(#k)))
}

/// The message for a method without a rule that changes its receiver in place (`swap`,
/// `fill`, `*_assign`, `*_mut`), or for a sub-model's `forward` called by name in `para!`:
/// the general "write it as a `#[lens]` function" cannot be followed there.
fn in_place_or_forward(name: &str, receiver: &Expr) -> Option<String> {
    const IN_PLACE: &[&str] = &[
        "swap",
        "swap_rows",
        "swap_columns",
        "fill",
        "fill_with",
        "fill_diagonal",
        "fill_row",
        "fill_column",
        "set_row",
        "set_column",
        "copy_from",
        "apply",
        "push",
        "insert",
        "clear",
        "sort",
        "reverse",
    ];
    let of_self = matches!(receiver, Expr::Field(f) if matches!(&*f.base, Expr::Path(p) if p.path.is_ident("self")));
    if of_self && ["forward", "vjp", "vjp_params"].contains(&name) {
        let Expr::Field(f) = receiver else {
            return None;
        };
        let field = f.member.to_token_stream();
        return Some(format!(
            "a sub-model is called through its field: `self.{field}(x)`, not `self.{field}.{name}(x)`"
        ));
    }
    if let Some(base) = name.strip_suffix("_assign") {
        return Some(format!(
            "`{name}` changes its receiver in place, which a differentiated value cannot be: assign the new value instead (`w = w.{base}(..)`, or the operator)"
        ));
    }
    (IN_PLACE.contains(&name) || name.ends_with("_mut")).then(|| {
        format!(
            "`{name}` changes its receiver in place, which a differentiated value cannot be: build the new value and assign it (`v = ..`), or write the entries one by one (`v[i] = ..`)"
        )
    })
}
