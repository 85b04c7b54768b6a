//! The function as written, with each differentiated operator and method run through the
//! rule that `name_vjp` and `name_rev` call for it (`!Value(|| rule(operand(a),
//! operand(b)).0)`, the rule's value without its pullback). A type error in such an
//! expression (`f64 * f32`, `v.dot(x)` with a scalar) is then the same diagnostic, at the same
//! place, in all three functions, and rustc reports it once; with the operator as written it
//! gave its own errors for the operator beside the rule's. After inlining the rule's forward
//! is the operator itself, and its unused pullback is dropped.

use crate::analyse::{InPlace, compound_op, node_key, token_ends};
use crate::rt::RT;
use proc_macro2::{Delimiter, Group, Span, TokenStream};
use quote::{ToTokens, format_ident, quote, quote_spanned};
use std::collections::BTreeMap;
use syn::spanned::Spanned;
use syn::visit_mut::VisitMut;
use syn::{Expr, Ident};

/// Rewrites `body` (the block the analysis read, not moved since) in place; `probes`, the
/// type probes of its loops (`analyse/probes.rs`), go at the start of each loop's body.
pub fn rewrite(
    body: &mut syn::Block,
    in_place: &BTreeMap<usize, InPlace>,
    probes: &BTreeMap<usize, TokenStream>,
) {
    if !in_place.is_empty() || !probes.is_empty() {
        Rewrite {
            in_place,
            probes,
            fields: &[],
        }
        .visit_block_mut(body);
    }
}

/// Rewrites the body of a `para!` model's `forward` (the block the analysis read) in place:
/// its differentiated operations through their rules, as in a `#[lens]` function, so that
/// `forward` computes what `vjp` does (`h.map(f)` of a heap matrix or a scalar, `x +
/// c.into()`), and each call of a sub-model (`self.l(x)`) as the sub-model's forward.
pub fn rewrite_para(
    body: &mut syn::Block,
    in_place: &BTreeMap<usize, InPlace>,
    probes: &BTreeMap<usize, TokenStream>,
    fields: &[Ident],
) {
    Rewrite {
        in_place,
        probes,
        fields,
    }
    .visit_block_mut(body);
}

struct Rewrite<'a> {
    in_place: &'a BTreeMap<usize, InPlace>,
    probes: &'a BTreeMap<usize, TokenStream>,
    /// The sub-models of a `para!` model (none in a `#[lens]` function).
    fields: &'a [Ident],
}

impl Rewrite<'_> {
    /// `self.sub(x)` (its arguments already rewritten; `ends` their first and last tokens as
    /// written) as the sub-model's forward call, in the form of `vjp`'s (`sub_model_call`).
    fn sub_call(&self, e: &mut Expr, ends: &[Option<(Span, Span)>]) {
        let Expr::MethodCall(m) = &*e else { return };
        if !self.is_sub_call(m) {
            return;
        }
        let span = m.span();
        let args = m.args.iter().map(ToTokens::to_token_stream).collect();
        *e = Expr::Verbatim(super::sub_model_call(
            &m.method, args, ends, span, "forward",
        ));
    }

    fn is_sub_call(&self, m: &syn::ExprMethodCall) -> bool {
        matches!(&*m.receiver, Expr::Path(p) if p.path.is_ident("self"))
            && self.fields.contains(&m.method)
    }
}

/// An operand without the parentheses or braces that only delimited it (`(n as f64)`,
/// `{ x.sin() }`): as a function's argument they would be linted as unnecessary in the
/// user's code. A block with statements is kept (and not linted).
fn bare(mut e: &Expr) -> &Expr {
    loop {
        match e {
            Expr::Paren(p) if p.attrs.is_empty() => e = &p.expr,
            Expr::Block(b) if b.attrs.is_empty() && b.label.is_none() => {
                match b.block.stmts.as_slice() {
                    [syn::Stmt::Expr(inner, None)] => e = inner,
                    _ => return e,
                }
            }
            _ => return e,
        }
    }
}

/// `&x` as a clone of `x` (the rules take their operands by value), `&f(x)` as the computed
/// value itself (a temporary, moved rather than copied), anything else as written.
fn by_value(e: &Expr, span: Span) -> TokenStream {
    match bare(e) {
        Expr::Reference(r) if r.mutability.is_none() => computed_or_clone(&r.expr, span),
        other => other.to_token_stream(),
    }
}

/// A value a rule takes by value from a place it borrows: a computed value (a call, a
/// sub-model's output, an operation already rewritten) as it is, a temporary moved rather
/// than copied, which for a heap matrix would copy its block; a place cloned.
fn computed_or_clone(e: &Expr, span: Span) -> TokenStream {
    match bare(e) {
        e @ (Expr::Call(_) | Expr::MethodCall(_) | Expr::Verbatim(_)) => e.to_token_stream(),
        place => quote_spanned!(span=> ::core::clone::Clone::clone(&(#place))),
    }
}

impl VisitMut for Rewrite<'_> {
    fn visit_expr_mut(&mut self, e: &mut Expr) {
        // The key before anything below changes; the operands first, then the node.
        if let Expr::ForLoop(f) = &*e {
            // The loop's type probes first in its body (the key before the body changes).
            let probes = self.probes.get(&node_key(f)).cloned();
            syn::visit_mut::visit_expr_mut(self, e);
            if let (Some(probes), Expr::ForLoop(f)) = (probes, &mut *e) {
                f.body
                    .stmts
                    .insert(0, syn::Stmt::Item(syn::Item::Verbatim(probes)));
            }
            return;
        }
        let key = match &*e {
            Expr::Binary(b) => node_key(b),
            Expr::MethodCall(m) => node_key(m),
            Expr::Call(c) => node_key(c),
            Expr::Unary(u) => node_key(u),
            _ => return syn::visit_mut::visit_expr_mut(self, e),
        };
        // The expression's first and last tokens as written, before its operands change.
        let whole = token_ends(e);
        // A sub-model's arguments as written, before they are rewritten.
        let ends: Vec<Option<(Span, Span)>> = match &*e {
            Expr::MethodCall(m) if self.is_sub_call(m) => m.args.iter().map(token_ends).collect(),
            _ => Vec::new(),
        };
        syn::visit_mut::visit_expr_mut(self, e);
        let Some(InPlace {
            func,
            extra,
            operands: taken,
            infer,
            owned,
            tie,
            ..
        }) = self.in_place.get(&key)
        else {
            return self.sub_call(e, &ends);
        };
        let span = func
            .clone()
            .into_iter()
            .next()
            .map_or_else(Span::call_site, |t| t.span());
        // The operands as written; `operand(..)` below gives each the expression's span, as
        // `name_vjp`'s operands have it: the rule's error is then one diagnostic in the three.
        let mut assigned = None;
        let mut operands: Vec<TokenStream> = match &*e {
            Expr::Binary(b) => {
                // `x op= e` is `x = !Value(|| rule(operand(x), operand(e)).0)`.
                if compound_op(&b.op).is_some() {
                    assigned = Some(&b.left);
                }
                // Borrowed data (`InPlace::owned`) read as an owned value, as the sweep reads it.
                [&b.left, &b.right]
                    .into_iter()
                    .enumerate()
                    .map(|(i, e)| {
                        let e = bare(e);
                        if owned.get(i).copied().unwrap_or(false) {
                            {
                                let __rt = crate::rt::at(span);
                                quote_spanned!(span=> #__rt::rules::owned(&(#e)))
                            }
                        } else {
                            e.to_token_stream()
                        }
                    })
                    .collect()
            }
            // `x.f(a)`, and `f64::f(x, a)` as `x.f(a)`.
            Expr::MethodCall(m) => method_operands(&m.receiver, m.args.iter(), owned, span),
            Expr::Call(c) => {
                let mut v = method_operands(&c.args[0], c.args.iter().skip(1), owned, span);
                // `f32::exp(x)`: the receiver is of the path's type, as Rust has it (an `f64`
                // there is rustc's "expected `f32`, found `f64`" at `x`); the rule is the
                // trait's, which takes any float. Here alone, so it is reported once. A float
                // is `Copy`; the value read is the one checked, so nothing else is inferred
                // from the path's type.
                if let Expr::Path(p) = &*c.func
                    && let [ty, _] = p.path.segments.iter().collect::<Vec<_>>()[..]
                {
                    let at = c.args[0].span();
                    let (ty, read) = (&ty.ident, &v[0]);
                    v[0] = quote_spanned!(at=> {
                        let __receiver = #read;
                        let _: #ty = __receiver;
                        __receiver
                    });
                }
                v
            }
            // `!x` (only `!` is rewritten: see `Analysis::expr`).
            Expr::Unary(u) => vec![bare(&u.expr).to_token_stream()],
            _ => return,
        };
        operands.truncate(*taken);
        // The rule, run in a closure's frame (see `Value`).
        let body = match infer {
            // `x + c.into()`: the operands bound, the forward-only one read with the other's
            // type (`guard::Infer`), in the order written.
            Some((i, kind)) => {
                let names: Vec<TokenStream> = (0..operands.len())
                    .map(|k| format_ident!("__o{}", k, span = span).into_token_stream())
                    .collect();
                let (o, w) = (&names[*i], &names[1 - *i]);
                let read = crate::respan(super::infer_read(*kind, w, o), span);
                {
                    let __rt = crate::rt::at(span);
                    quote_spanned!(span=> {
                        #[allow(unused_imports)]
                        use #__rt::guard::{
                            InferAsIs as _, InferSame as _, InferScalarAsIs as _,
                            InferScalarSame as _,
                        };
                        #(let #names = #__rt::operand(#operands);)*
                        let #o = #read;
                        #func(#(#names,)* #(#extra,)*)
                    })
                }
            }
            // `x.max(y)`: the operands after the receiver read at its type if it is a float,
            // at their own otherwise (`guard::Tie`), bound in the order written.
            None if *tie && operands.len() > 1 => {
                let names: Vec<TokenStream> = (0..operands.len())
                    .map(|k| format_ident!("__o{}", k, span = span).into_token_stream())
                    .collect();
                let (first, rest) = (&names[0], &names[1..]);
                let (receiver, args) = (&operands[0], &operands[1..]);
                {
                    let __rt = crate::rt::at(span);
                    quote_spanned!(span=> {
                        #[allow(unused_imports)]
                        use #__rt::guard::{TieFloat as _, TieOther as _};
                        let #first = #__rt::operand(#receiver);
                        #(let #rest = #__rt::guard::Tie::of(&#first)
                            .lens_tie(#args);)*
                        #func(#(#names,)* #(#extra,)*)
                    })
                }
            }
            None => {
                let __rt = crate::rt::at(span);
                quote_spanned!(span=>
                    #func(
                        #(#__rt::operand(#operands),)*
                        #(#extra,)*
                    )
                )
            }
        };
        // The closure gives the rule's value alone: the pullback's type (an `impl FnOnce` of a
        // rule with bounds) in `Value`'s type would have a bound the operands miss reported
        // again, at `Value`, over the whole expression.
        let mut rule = Group::new(Delimiter::Parenthesis, quote_spanned!(span=> || #body.0));
        rule.set_span(span);
        *e = Expr::Verbatim(match (assigned, whole) {
            // `x op= e`: the value is not the expression's (of the type `()`), at the operator.
            (Some(place), _) => {
                let __rt = crate::rt::at(span);
                quote_spanned!(span=> #place = !#__rt::Value #rule)
            }
            // The value spanned over the expression as written, from its first token (`!`, or
            // `Value` of a method) to its last (the parentheses, or `get()`), so that rustc's
            // help is for the expression (see `Value`); the rule's tokens stay at the
            // operator, where the sweep's copy of an error in the rule is.
            (None, Some((first, last))) => {
                if matches!(e, Expr::MethodCall(_) | Expr::Call(_)) {
                    let value = crate::respan(quote!(#RT::Value), first);
                    let get = crate::respan(quote!(.get()), last);
                    quote!(#value #rule #get)
                } else {
                    rule.set_span(last);
                    let not = crate::respan(quote!(!), first);
                    {
                        let __rt = crate::rt::at(span);
                        quote_spanned!(span=> #not #__rt::Value #rule)
                    }
                }
            }
            _ => {
                let __rt = crate::rt::at(span);
                quote_spanned!(span=> !#__rt::Value #rule)
            }
        });
    }
}

/// A method's operands for its rule, which takes them by value: the receiver (borrowed by
/// the method) through [`computed_or_clone`], then the arguments; those flagged in `owned`
/// (`InPlace::owned`) through `rules::owned`, as the sweep reads them.
fn method_operands<'a>(
    receiver: &Expr,
    args: impl Iterator<Item = &'a Expr>,
    owned: &[bool],
    span: Span,
) -> Vec<TokenStream> {
    let flagged = |i: usize| owned.get(i).copied().unwrap_or(false);
    let read_owned = |e: &Expr| {
        let e = match bare(e) {
            Expr::Reference(r) if r.mutability.is_none() => bare(&r.expr),
            e => e,
        };
        {
            let __rt = crate::rt::at(span);
            quote_spanned!(span=> #__rt::rules::owned(&(#e)))
        }
    };
    let mut v = vec![if flagged(0) {
        read_owned(receiver)
    } else {
        computed_or_clone(receiver, span)
    }];
    v.extend(args.enumerate().map(|(i, a)| {
        if flagged(i + 1) {
            read_owned(a)
        } else {
            by_value(a, span)
        }
    }));
    v
}
