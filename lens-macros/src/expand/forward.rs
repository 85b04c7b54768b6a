//! The forward sweep: each A-normal-form statement computes its value and keeps its
//! pullback (`__pb<n>`) for the reverse sweep.

use super::{Cx, Ret, block};
use crate::analyse::{ArgAt, BranchHead, Loop, Op, Operand, Place, Stmt, StmtKind, VarId};
use crate::rt::RT;
use proc_macro2::TokenStream;
use quote::{ToTokens, format_ident, quote, quote_spanned};

/// An operand as read in place: a variable by its name (a block's value, the base of a field
/// or an entry, read through a borrow), a forward-only value as written.
pub fn operand(cx: &Cx, o: &Operand) -> TokenStream {
    match o {
        Operand::Var(id) => cx.read(*id),
        Operand::Const(ts) => ts.clone(),
    }
}

/// The name under which the operation defining `target` takes the variable `id`: its own
/// clone when the variable is read again later (see [`crate::analyse::read_again`]).
fn clone_name(target: VarId, id: VarId) -> syn::Ident {
    format_ident!("__cl{}_{}", target, id)
}

/// A variable operand's name moved to `span` (a forward-only operand stays as written).
fn at(tokens: TokenStream, o: &Operand, span: proc_macro2::Span) -> TokenStream {
    match o {
        Operand::Var(_) => tokens
            .into_iter()
            .map(|mut tt| {
                tt.set_span(span);
                tt
            })
            .collect(),
        Operand::Const(_) => tokens,
    }
}

/// An element of a value built from parts (an array, a struct, a nalgebra `new`) at its place
/// as written when it reads a binding by name: an element of another type is then the
/// function as written's one error, not a second at the binding's declaration. A computed
/// element (a temporary) is spread over the extent the function as written reports it over
/// (`x * 2.0`, `x.sin()`), in its form, so that the two errors are one; otherwise it stays
/// where it is, and its own operation reports a mismatch there.
fn part(cx: &Cx, target: VarId, o: &Operand, place: &Place) -> TokenStream {
    let tokens = moved(cx, target, o);
    match (o, place.written) {
        (Operand::Var(id), _) if !cx.vars[*id].temp => at(tokens, o, place.first),
        (
            Operand::Var(_),
            Some(ArgAt {
                ends: Some(ends),
                prefix,
                ..
            }),
        ) => over_extent(at(tokens, o, ends.0), ends, prefix),
        _ => tokens,
    }
}

/// `v` spread from the first token of an expression as written to its last, as a value of
/// the form the function as written has there, so that rustc reports a type error of either
/// over the whole expression with the same help: `!Moved(v)` for a prefix operation (the
/// `!` at the first, the parentheses at the last; see `Value`), otherwise `(v,).0` (the
/// tuple at the first, the field at the last; a field takes no expected type into its tuple,
/// so rustc reports the whole of it).
fn over_extent(
    v: TokenStream,
    (first, last): (proc_macro2::Span, proc_macro2::Span),
    prefix: bool,
) -> TokenStream {
    if prefix {
        let mut value = proc_macro2::Group::new(proc_macro2::Delimiter::Parenthesis, v);
        value.set_span(last);
        {
            let __rt = crate::rt::at(first);
            quote_spanned!(first=> !#__rt::Moved #value)
        }
    } else {
        let mut tuple = proc_macro2::Group::new(
            proc_macro2::Delimiter::Parenthesis,
            quote_spanned!(first=> #v,),
        );
        tuple.set_span(first);
        let field = syn::Index {
            index: 0,
            span: last,
        };
        quote_spanned!(last=> #tuple.#field)
    }
}

/// An operand given away to the operation defining `target`.
fn moved(cx: &Cx, target: VarId, o: &Operand) -> TokenStream {
    match o {
        Operand::Var(id) if cx.doubled.borrow().contains(&(target, *id)) => {
            let c = clone_name(target, *id);
            quote!(#c.clone())
        }
        Operand::Var(id) if cx.again.contains(id) => clone_name(target, *id).to_token_stream(),
        _ => operand(cx, o),
    }
}

/// The clones an operation takes of variables read again, bound before it: `x.clone()` in a
/// `let` of its own, where the receiver's known type picks the impl (as an argument, a
/// clone's type is left to inference, which could then pick a rule's other impl).
///
/// A variable taken twice by one operation (`h + h`) is given as a clone of that clone each
/// time: in valid Rust it is `Copy` (the function as written moves it twice), and where it
/// is not (a `HeapMatrix`) the function as written's "use of moved value: `h`" is then the
/// one error, not two more naming the clone.
fn clones(cx: &Cx, target: VarId, op: &Op) -> TokenStream {
    let operands = op.taken();
    let mut seen = std::collections::BTreeSet::new();
    let mut out = TokenStream::new();
    for o in operands {
        if let Operand::Var(id) = o
            && cx.again.contains(id)
            && !seen.insert(*id)
        {
            cx.doubled.borrow_mut().insert((target, *id));
        }
    }
    for id in seen {
        let (c, x) = (clone_name(target, id), cx.read(id));
        out.extend(quote!(let #c = #x.clone();));
    }
    out
}

/// The witnesses of a tied rule's operands (`let __w<n> = (witness(&x), ..);`, the names the
/// reverse reads its changes through) and its operands after the first read as the first's
/// type (see `super::typed_like`). A forward-only receiver gets no witness: it would be
/// evaluated twice.
fn tied_operands(
    cx: &Cx,
    target: VarId,
    args: &[Operand],
    taken: &mut [TokenStream],
) -> TokenStream {
    let w = format_ident!("__w{}", target);
    let witnesses = operand_witnesses(cx, args);
    if matches!(args.first(), Some(Operand::Var(_))) {
        for t in taken.iter_mut().skip(1) {
            *t = super::typed_like(quote!(#w.0), t.clone());
        }
    }
    quote!(let #w = (#(#witnesses,)*);)
}

/// `witness(&x)` of each operand that is a variable, `()` for forward-only data.
fn operand_witnesses<'a>(
    cx: &'a Cx,
    args: &'a [Operand],
) -> impl Iterator<Item = TokenStream> + 'a {
    args.iter().map(|a| match a {
        Operand::Var(id) => {
            let x = cx.read(*id);
            quote!(#RT::witness(&#x))
        }
        Operand::Const(_) => quote!(()),
    })
}

/// `a op b` through `rules::checked` (the tag names the operator): the operands' types
/// pick the rule, or, when it has none, a value of the type the sweep most likely expects
/// (the function as written reports the error). A forward-only operand is bound first, as it
/// is named twice (its type, then its value).
fn checked_rule(cx: &Cx, tag: &str, args: &[Operand], taken: &[TokenStream]) -> TokenStream {
    let side = super::differentiated_side(cx, args);
    let tag = format_ident!("{}", tag);
    let checked = quote!(#RT::rules::checked);
    let mut bind = TokenStream::new();
    let names: Vec<TokenStream> = args
        .iter()
        .zip(taken)
        .enumerate()
        .map(|(i, (a, t))| match a {
            Operand::Var(_) => t.clone(),
            Operand::Const(_) => {
                let o = format_ident!("__o{}", i);
                bind.extend(quote!(let #o = #t;));
                quote!(#o)
            }
        })
        .collect();
    // `x + c.into()`: the forward-only operand read with a type from the other, as the
    // function as written reads it (`lens_core::guard`).
    if let Some((i, kind)) = crate::analyse::infer_operand(Some(&tag.to_string()), args, cx.subs) {
        let (o, w) = (&names[i], &names[1 - i]);
        let read = super::infer_read(kind, w, o);
        bind.extend(quote!(let #o = #read;));
    }
    let run = match side {
        None => quote!(lens_rule),
        Some(0) => quote!(lens_rule_left),
        Some(_) => quote!(lens_rule_right),
    };
    quote!({
        #bind
        #checked::Binary::<#checked::tag::#tag, _, _>::of(#(&#names),*)
            .lens_dispatch()
            .#run(#(#names),*)
    })
}

/// The pullback variable of the statement defining `target`.
pub fn pullback(target: usize) -> syn::Ident {
    format_ident!("__pb{}", target)
}

pub fn stmt(cx: &Cx, s: &Stmt) -> TokenStream {
    let span = s.span;
    match &s.kind {
        StmtKind::Verbatim(ts) => ts.clone(),
        StmtKind::Destructure {
            src,
            targets,
            array,
        } => {
            // The value's type, for the change the sweep gathers from the parts (a pattern
            // of another arity is the function as written's error, once: see `reverse.rs`).
            let w = format_ident!("__wd{}", src);
            let src = cx.read(*src);
            let pats = targets.iter().map(|t| match t {
                Some(id) => {
                    // A joined `let mut` binding may be changed again by forward-only code.
                    let v = &cx.vars[*id];
                    let i = &v.ident;
                    let m = (v.mutable && !v.diff).then(|| quote!(mut));
                    quote!(#m #i)
                }
                None => quote!(_),
            });
            let witness = quote!(let #w = #RT::witness(&#src););
            if *array {
                quote_spanned!(span=> #witness let [#(#pats,)*] = #src;)
            } else {
                quote_spanned!(span=> #witness let (#(#pats,)*) = #src;)
            }
        }
        StmtKind::Let { target, ty, op } => {
            let x = &cx.vars[*target].ident;
            let pb = pullback(*target);
            let ann = ty.as_ref().map(|t| quote!(: #t));
            let pair_ann = ty.as_ref().map(|t| quote!(: (#t, _)));
            let clones = clones(cx, *target, op);
            let op_tokens = match &**op {
                Op::Alias(o) => {
                    let read = moved(cx, *target, o);
                    // `let s: f64 = b;` of a binding of another type: read as the declared
                    // type (`guard::Types`), so that the mismatch is the function as written's
                    // one error, not a second at `b`'s declaration.
                    let read = match (o, ty) {
                        (Operand::Var(_), Some(t)) => super::typed_as(&t.to_token_stream(), read),
                        _ => read,
                    };
                    quote_spanned!(span=> let #x #ann = #read;)
                }
                Op::Tuple(elems) => {
                    let elems = elems.iter().map(|e| moved(cx, *target, e));
                    quote_spanned!(span=> let #x #ann = (#(#elems,)*);)
                }
                Op::Array(elems, places) => {
                    let elems = elems
                        .iter()
                        .zip(places)
                        .map(|(e, p)| part(cx, *target, e, p));
                    quote_spanned!(span=> let #x #ann = [#(#elems,)*];)
                }
                Op::Field { base, member } => {
                    // The base's type, for an adjoint the reverse starts at this field.
                    let w = format_ident!("__w{}", target);
                    let base = operand(cx, base);
                    {
                        let __rt = crate::rt::at(span);
                        quote_spanned!(span=>
                            let #w = #__rt::witness(&#base);
                            let #x #ann = ::core::clone::Clone::clone(&#base.#member);
                        )
                    }
                }
                Op::Struct {
                    path,
                    fields,
                    places,
                    tuple,
                } => {
                    let values = fields
                        .iter()
                        .zip(places)
                        .map(|((_, o), p)| part(cx, *target, o, p));
                    if let Some(parens) = tuple {
                        // As written, parentheses included: an argument too many or too few
                        // is then the function as written's one error (E0061), with its help
                        // where it applies, not a field `2` of `W { .. }` at `#[lens]`.
                        let mut args = proc_macro2::Group::new(
                            proc_macro2::Delimiter::Parenthesis,
                            quote!(#(#values),*),
                        );
                        args.set_span(*parens);
                        quote_spanned!(span=> let #x #ann = #path #args;)
                    } else {
                        let members = fields.iter().map(|(m, _)| m);
                        quote_spanned!(span=> let #x #ann = #path { #(#members: #values,)* };)
                    }
                }
                Op::Build {
                    callee,
                    args,
                    places,
                } => {
                    let args = args
                        .iter()
                        .zip(places)
                        .map(|(e, p)| part(cx, *target, e, p));
                    quote_spanned!(span=> let #x #ann = #callee(#(#args),*);)
                }
                Op::Rule {
                    func,
                    args,
                    extra,
                    tied,
                    checked,
                    sided,
                } => {
                    // The operands at the expression too: a rule missing for their types is
                    // then one error there, not a second one where a variable was declared.
                    let mut taken: Vec<TokenStream> = args
                        .iter()
                        .map(|a| at(moved(cx, *target, a), a, span))
                        .collect();
                    let witnesses = if *tied {
                        tied_operands(cx, *target, args, &mut taken)
                    } else {
                        TokenStream::new()
                    };
                    let call = match checked {
                        Some(tag) => checked_rule(cx, tag, args, &taken),
                        None => {
                            let func = match super::differentiated_side(cx, args) {
                                Some(side) if *sided => crate::analyse::sided_rule(func, side),
                                _ => func.clone(),
                            };
                            quote_spanned!(span=> #func(#(#taken,)* #(#extra,)*))
                        }
                    };
                    quote_spanned!(span=>
                        #witnesses
                        let (#x, #pb) #pair_ann = #call;
                    )
                }
                Op::Call {
                    path,
                    item,
                    args,
                    spans,
                    parens,
                } => {
                    // The arguments' types, for their changes (`guard::Change`).
                    let w = format_ident!("__w{}", target);
                    let witnesses = operand_witnesses(cx, args);
                    let witnesses = quote!(let #w = (#(#witnesses,)*););
                    let args = args.iter().zip(spans).map(|(a, s)| match s {
                        Some(ArgAt {
                            ends: Some(ends),
                            prefix,
                            ..
                        }) if matches!(a, Operand::Var(_)) => {
                            over_extent(at(moved(cx, *target, a), a, ends.0), *ends, *prefix)
                        }
                        Some(s) => at(moved(cx, *target, a), a, s.point),
                        None => moved(cx, *target, a),
                    });
                    let mut args = proc_macro2::Group::new(
                        proc_macro2::Delimiter::Parenthesis,
                        quote!(#(#args),*),
                    );
                    args.set_span(*parens);
                    // The reverse must be the called function's own (`crate::tie`).
                    let tie = item
                        .as_ref()
                        .map(|item| quote_spanned!(span=> .lens_tie(&#item)));
                    quote_spanned!(span=>
                        #witnesses
                        let (#x, #pb) #pair_ann = #path #args #tie;
                    )
                }
                Op::Sub { field, args, ends } => {
                    // Each input at the written argument, as `forward`'s (see
                    // `sub_model_call`); spanned at the call like the rest of it: a token of
                    // the macro's own span widened the call's span to the whole macro.
                    let inputs = args
                        .iter()
                        .zip(ends)
                        .map(|(a, e)| match e {
                            Some((first, _)) => at(moved(cx, *target, a), a, *first),
                            None => moved(cx, *target, a),
                        })
                        .collect();
                    let method = if cx.input_change_unwanted(args) {
                        "vjp_params"
                    } else {
                        "vjp"
                    };
                    let call = super::sub_model_call(field, inputs, ends, span, method);
                    // The inputs' types, for their changes (`guard::Change`), as a call's.
                    let w = format_ident!("__w{}", target);
                    let witnesses = operand_witnesses(cx, args);
                    quote_spanned!(span=>
                        let #w = (#(#witnesses,)*);
                        let (#x, #pb) #pair_ann = #call;
                    )
                }
                Op::Index {
                    base,
                    index,
                    brackets,
                } => {
                    // The index is kept for the reverse, which adds the entry's change there
                    // (into an adjoint of the base's type: the witness).
                    let i = format_ident!("__i{}", target);
                    let w = format_ident!("__w{}", target);
                    let base = operand(cx, base);
                    // The read names the index at its place as written: an index of the
                    // wrong type (`v[k]`, `k: i32`) is then the function as written's error,
                    // reported once, and the index read back through the entry's type
                    // (`index_typed`) keeps the reverse's `add_at` out of it.
                    let tokens: Vec<proc_macro2::TokenTree> = index.clone().into_iter().collect();
                    let at_place = match tokens.as_slice() {
                        [] => i.to_token_stream(),
                        [one] => {
                            let mut at = i.clone();
                            at.set_span(one.span());
                            at.to_token_stream()
                        }
                        // An index of several tokens (`k + 1`): rustc reports at the index's
                        // whole expression, which a read spanned at its first token alone
                        // made a second error; a call spanned from the first token to the
                        // last covers the same place.
                        [first, .., last] => {
                            let mut arg = proc_macro2::Group::new(
                                proc_macro2::Delimiter::Parenthesis,
                                i.to_token_stream(),
                            );
                            arg.set_span(last.span());
                            let head = quote_spanned!(first.span()=> ::core::convert::identity);
                            quote!(#head #arg)
                        }
                    };
                    // The brackets where the user wrote them: a read rustc refuses (`m[0][1]`,
                    // an entry indexed again) is then reported once, as the function as
                    // written reports it.
                    let mut read =
                        proc_macro2::Group::new(proc_macro2::Delimiter::Bracket, at_place);
                    read.set_span(*brackets);
                    {
                        let __rt = crate::rt::at(span);
                        quote_spanned!(span=>
                            let #i = #index;
                            let #w = #__rt::witness(&#base);
                            let #x #ann = ::core::clone::Clone::clone(&#base #read);
                            let #i = #__rt::index_typed(#i, &#x);
                        )
                    }
                }
                Op::Loop(l) => {
                    let (bind, w) = super::witnesses(cx, *target, &cx.wanted(&l.free));
                    let value = loop_expr(cx, *target, l, &w);
                    let probes = &l.probes;
                    quote_spanned!(span=> #probes #bind let (#x, #pb) #pair_ann = #value;)
                }
                Op::Branch(b) => {
                    let k = b.blocks.len();
                    let free = cx.wanted(&b.free);
                    let (bind, w) = super::witnesses(cx, *target, &free);
                    // The type the blocks share (see `block`).
                    let wb = format_ident!("__wb{}", target);
                    let like = (k > 1).then(|| quote!(#wb));
                    let arms: Vec<TokenStream> = b
                        .blocks
                        .iter()
                        .enumerate()
                        .map(|(i, blk)| {
                            let body =
                                block(cx, blk, &[], Some((&free, &w)), None, like.as_ref(), true);
                            let wrapped = wrap(i, k, quote!(__b));
                            quote!({ let (__v, __b) = #body; (__v, #wrapped) })
                        })
                        .collect();
                    let value = match &b.head {
                        BranchHead::Plain => arms[0].clone(),
                        BranchHead::If(cond) => {
                            let (a, e) = (&arms[0], &arms[1]);
                            quote!(if #cond #a else #e)
                        }
                        BranchHead::Match {
                            scrutinee,
                            arms: pats,
                        } => {
                            quote!(match #scrutinee { #(#pats => #arms)* })
                        }
                    };
                    let shared = like
                        .is_some()
                        .then(|| quote!(let #wb = ::core::marker::PhantomData;));
                    quote_spanned!(span=> #bind #shared let (#x, #pb) #pair_ann = #value;)
                }
            };
            quote!(#clones #op_tokens)
        }
    }
}

/// A loop: the iterations run forward, each keeping its pullback on a fixed-size tape; the
/// loop's pullback runs them last first, handing the carried changes back through the
/// iterations and adding up the changes of the values from outside.
fn loop_expr(cx: &Cx, target: VarId, l: &Loop, witness: &TokenStream) -> TokenStream {
    let ident = |v: &VarId| cx.vars[*v].ident.clone();
    let init: Vec<TokenStream> = l.init.iter().map(|v| cx.read(*v)).collect();
    let carried: Vec<syn::Ident> = l.carried.iter().map(ident).collect();
    let free = cx.wanted(&l.free);
    // The carried values' zeros are typed by a witness of their values before the loop: the
    // forward pass of a recomputed loop drops the body's pullback, which would otherwise
    // leave a zero for a start value that is never read without a type.
    let rets: Vec<Ret> = l
        .carried
        .iter()
        .enumerate()
        .map(|(k, v)| {
            let k = syn::Index::from(k);
            Ret::Zero(*v, quote!(__wc.#k))
        })
        .collect();
    let plan = crate::analyse::recompute_plan(l, cx.vars);
    // In `name_rev`, a recomputed loop's pullback runs in the function's frame: the values it
    // reads that live there are read through references, not copied into the closure. Not a
    // value that forward-only code in the body names as written (`if ps[i].b > 0.0`,
    // `ps.len()`): the `move` closure captures that name by value, which a borrow would
    // forbid for a value that is not `Copy`.
    let refs: Vec<(VarId, syn::Ident)> = match cx.frame {
        Some(frame) if plan.recompute => free
            .iter()
            .filter(|v| {
                frame.contains(v)
                    && !cx.by_ref.contains_key(v)
                    && !plan.mentioned.contains(&cx.vars[**v].ident.to_string())
            })
            .map(|v| (*v, format_ident!("__xr{}", v)))
            .collect(),
        _ => Vec::new(),
    };
    let borrows: Vec<TokenStream> = refs
        .iter()
        .map(|(v, r)| {
            let x = &cx.vars[*v].ident;
            quote!(let #r = &#x;)
        })
        .collect();
    // The values the recomputing closure takes by value that are read again after the loop:
    // it takes clones (bound here, inside the loop's block, hiding the originals).
    let taken: Vec<TokenStream> = match cx.after.get(&target) {
        Some(after) if plan.recompute => free
            .iter()
            .filter(|v| {
                after.contains(v)
                    && !cx.by_ref.contains_key(v)
                    && !refs.iter().any(|(r, _)| r == *v)
            })
            .map(|v| {
                let (x, read) = (&cx.vars[*v].ident, cx.read(*v));
                quote!(let #x = ::core::clone::Clone::clone(&#read);)
            })
            .collect(),
        _ => Vec::new(),
    };
    let mut inner = cx.reading_through(&refs);
    inner.defer_entries = plan.any_order;
    let cx = &inner;
    let body = block(cx, &l.body, &rets, Some((&free, witness)), None, None, true);
    let (pat, range, bound) = (&l.pat, &l.range, &l.bound);
    let slots: Vec<syn::Ident> = (0..free.len()).map(|k| format_ident!("__a{}", k)).collect();
    let helper = super::adjoints_helper(free.len(), cx.params.is_some());
    let (buf_param, buf) = match cx.params {
        Some(params) => (quote!(, __dp: &mut #params), quote!(, &mut *__dp)),
        None => (quote!(), quote!()),
    };
    if plan.recompute {
        // Recomputation (see `analyse/recompute.rs`): the tape keeps only the carried values
        // the reverse reads, the reverse runs the range backwards (`rev()`, or each counter
        // found again by `nth` for a stepped range: see `Loop::double_ended`), and runs the
        // body again just before its pullback.
        let back = if plan.any_order {
            // Iterations independent in the reverse (`recompute::any_order`): first to last.
            quote!(::core::clone::Clone::clone(&__r))
        } else if l.double_ended {
            quote!(::core::iter::Iterator::rev(::core::clone::Clone::clone(
                &__r
            )))
        } else {
            quote!(#RT::Backward::new(
                ::core::clone::Clone::clone(&__r),
                __n
            ))
        };
        let kept: Vec<&syn::Ident> = carried
            .iter()
            .zip(&plan.needed)
            .filter_map(|(c, n)| n.then_some(c))
            .collect();
        let tape =
            (!kept.is_empty()).then(|| quote!(let mut __tape = #RT::Tape::<_, #bound>::new();));
        let push = (!kept.is_empty())
            .then(|| quote!(__tape.push((#(::core::clone::Clone::clone(&#kept),)*));));
        let pop = (!kept.is_empty()).then(|| {
            quote!(let (#(#kept,)*) = match __tape.pop() {
                ::core::option::Option::Some(__c) => __c,
                ::core::option::Option::None => ::core::unreachable!(),
            };)
        });
        // A carried value the reverse does not read starts each recomputed iteration at
        // zero: it only fixes the types.
        let starts: Vec<TokenStream> = carried
            .iter()
            .zip(&plan.needed)
            .enumerate()
            .map(|(k, (c, n))| {
                if *n {
                    quote!(#c)
                } else {
                    let k = syn::Index::from(k);
                    quote!(#RT::zeros_of(__wc.#k))
                }
            })
            .collect();
        let rt = RT;
        return quote!({
            #(#borrows)*
            #(#taken)*
            let __wc = (#(#rt::witness(&#init),)*);
            let __r = #range;
            let mut __n: usize = 0;
            #tape
            let mut __carry = (#(#init,)*);
            let __wcarry = #RT::witness(&__carry);
            for __item in ::core::clone::Clone::clone(&__r) {
                __n += 1;
                let #pat = __item;
                let (#(#carried,)*) = __carry;
                #push
                let (__v, _) = #body;
                // At the carried values' types: a body that changes one (`h = w * h` of
                // another shape) is the function as written's one error, not two more here.
                __carry = #RT::guard::Types::like(__wcarry, &__v)
                    .lens_typed_move(__v);
            }
            let __pb = #RT::#helper(
                &__carry,
                #witness,
                move |__d, __acc #buf_param| {
                    let (#(#slots,)*) = __acc;
                    let mut __dc = __d;
                    for __item in #back {
                        let #pat = __item;
                        #pop
                        let (#(#carried,)*) = (#(#starts,)*);
                        let (__vb, __b) = #body;
                        let __db = #RT::guard::Types::like(
                            #RT::witness(&__vb),
                            &__dc,
                        )
                        .lens_typed_move(__dc);
                        __dc = __b(__db, (#(&mut *#slots,)*) #buf);
                    }
                    __dc
                }
            );
            (__carry, __pb)
        });
    }
    let rt = RT;
    quote!({
        let __wc = (#(#rt::witness(&#init),)*);
        let mut __carry = (#(#init,)*);
        let __wcarry = #RT::witness(&__carry);
        // The body's value's type, for its changes (see the recomputed form).
        let mut __wbody = ::core::marker::PhantomData;
        let mut __tape = #RT::Tape::<_, #bound>::new();
        for #pat in #range {
            let (#(#carried,)*) = __carry;
            let (__v, __b) = #body;
            __wbody = #RT::witness(&__v);
            __carry = #RT::guard::Types::like(__wcarry, &__v)
                .lens_typed_move(__v);
            __tape.push(__b);
        }
        let __pb = #RT::#helper(
            &__carry,
            #witness,
            move |__d, __acc #buf_param| {
                let (#(#slots,)*) = __acc;
                let mut __dc = __d;
                while let ::core::option::Option::Some(__b) = __tape.pop() {
                    let __db = #RT::guard::Types::like(__wbody, &__dc)
                        .lens_typed_move(__dc);
                    __dc = __b(__db, (#(&mut *#slots,)*) #buf);
                }
                __dc
            }
        );
        (__carry, __pb)
    })
}

/// The pullback of branch `i` of `k`, wrapped so that all branches have one type:
/// `Left(b)`, `Right(Left(b))`, ..., and the last `Right(...Right(b))`.
pub fn wrap(i: usize, k: usize, inner: TokenStream) -> TokenStream {
    if k == 1 {
        return inner;
    }
    let either = quote!(#RT::Either);
    let mut t = if i == k - 1 {
        inner
    } else {
        quote!(#either::Left(#inner))
    };
    for _ in 0..i {
        t = quote!(#either::Right(#t));
    }
    t
}
