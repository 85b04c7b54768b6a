//! The reverse sweep: statements in reverse order, each pulling its output's change back to
//! its operands. The first change a variable receives binds its adjoint (`__d<n>`); later
//! ones are added with `Tangent::accumulate`. Entries (`x[i]`) and nested blocks add into
//! the adjoint in place, through `&mut`.

use super::Cx;
use super::forward::{pullback, wrap};
use crate::analyse::{Op, Operand, Stmt, StmtKind, VarId};
use crate::rt::RT;
use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use std::collections::{HashMap, HashSet};
use syn::Ident;
use syn::ext::IdentExt;

/// The most arguments a call's changes are spread for through `guard::Spread` (its impls):
/// a call of more keeps a tuple pattern, and an argument too many there is two errors.
const SPREAD_MAX: usize = 32;

/// The most fields a literal's names are checked for through `guard::FieldsOf` (its
/// `HasFields` impls): the change of a literal of more is read as it is.
const FIELDS_MAX: usize = 16;

/// The adjoint of variable `id`, spanned at the variable so that type errors in the
/// reverse sweep point at the user's code.
pub fn adjoint(cx: &Cx, id: VarId) -> syn::Ident {
    format_ident!("__d{}", id, span = cx.vars[id].ident.span())
}

/// The reverse sweep of one block.
pub struct Sweep<'a> {
    pub cx: &'a Cx<'a>,
    /// The variables whose adjoint is bound so far (in reverse order).
    pub have: HashSet<VarId>,
    /// Values from outside a nested block: the `&mut` adjoint the caller passed for each.
    pub external: HashMap<VarId, Ident>,
    pub out: TokenStream,
    /// With `Cx::defer_entries`: the additions of entries' changes into outside values,
    /// gathered in the sweep's order and emitted after it, reversed. Only outside values:
    /// their adjoints are added to but never read inside the block, so the additions may
    /// move; a local's adjoint is read by the pullback defining it. In a loop run first to
    /// last, adding `x[i + 1]`'s change before `x[i]`'s (the order the body reads them, the
    /// hand-written loop's) lets LLVM carry the entry two iterations share in a register.
    pub deferred: Vec<TokenStream>,
}

impl Sweep<'_> {
    /// Whether the change of `id` is wanted at all.
    fn wanted(&self, id: VarId) -> bool {
        self.cx.vars[id].diff && !self.cx.skipped(id)
    }

    /// Adds the change `g` into the adjoint of `o` (nothing for forward-only operands). The
    /// first change a local variable receives binds its adjoint.
    pub fn contribute(&mut self, o: &Operand, g: TokenStream) {
        let Operand::Var(id) = o else { return };
        if !self.wanted(*id) {
            return;
        }
        if let Some(a) = self.external.get(id) {
            self.out
                .extend(quote!(#RT::Tangent::accumulate(&mut *#a, &#g);));
            return;
        }
        let d = adjoint(self.cx, *id);
        if self.have.insert(*id) {
            self.out.extend(quote!(let mut #d = #g;));
        } else {
            self.out
                .extend(quote!(#RT::Tangent::accumulate(&mut #d, &#g);));
        }
    }

    /// `&mut` to the adjoint of `id`, for a change added in place (an entry, a nested
    /// block's changes); a local adjoint not bound yet starts at zero.
    fn slot(&mut self, id: VarId) -> TokenStream {
        self.slot_typed(id, None)
    }

    /// [`Sweep::slot`], with a witness of the value's type where the code using the adjoint
    /// needs its type at once (a field access).
    fn slot_typed(&mut self, id: VarId, witness: Option<TokenStream>) -> TokenStream {
        if let Some(a) = self.external.get(&id) {
            return quote!(&mut *#a);
        }
        let d = adjoint(self.cx, id);
        if self.have.insert(id) {
            let zero = match witness {
                Some(w) => quote!(#RT::zeros_of(#w)),
                None => quote!(#RT::Tangent::zeros()),
            };
            self.out.extend(quote!(let mut #d = #zero;));
        }
        quote!(&mut #d)
    }

    /// The adjoints of a nested block's outside values, as the tuple its pullback takes.
    fn slots(&mut self, free: &[VarId]) -> TokenStream {
        let slots: Vec<TokenStream> = free.iter().map(|v| self.slot(*v)).collect();
        quote!((#(#slots,)*))
    }

    pub fn stmt(&mut self, s: &Stmt) {
        let span = s.span;
        match &s.kind {
            StmtKind::Verbatim(_) => {}
            StmtKind::Destructure {
                src,
                targets,
                array,
            } => {
                if !targets.iter().flatten().any(|t| self.have.contains(t)) {
                    return;
                }
                let parts = targets.iter().map(|t| match t {
                    Some(t) if self.have.contains(t) => {
                        let d = adjoint(self.cx, *t);
                        quote!(#d)
                    }
                    _ => quote!(#RT::Tangent::zeros()),
                });
                let g = if *array {
                    quote!([#(#parts,)*])
                } else {
                    quote!((#(#parts,)*))
                };
                // Read as the value's type (`guard::Typed`): a pattern of another arity is
                // the function as written's error, where this gathered change disagreed too,
                // a second error at `#[lens]`.
                let w = format_ident!("__wd{}", src);
                self.contribute(&Operand::Var(*src), super::typed_like(quote!(#w), g));
            }
            StmtKind::Let { target, op, .. } => {
                if !self.have.contains(target) {
                    return; // the value is never used by a differentiated computation
                }
                let d = adjoint(self.cx, *target);
                let pb = pullback(*target);
                match &**op {
                    Op::Alias(o) => self.contribute(o, quote!(#d)),
                    Op::Tuple(elems) => {
                        let names = self.names(*target, elems);
                        self.out.extend(quote!(let (#(#names,)*) = #d;));
                        self.spread(*target, elems);
                    }
                    Op::Array(elems, _) => {
                        let names = self.names(*target, elems);
                        self.out.extend(quote!(let [#(#names,)*] = #d;));
                        self.spread(*target, elems);
                    }
                    Op::Field { base, member } => {
                        let Operand::Var(base) = base else { return };
                        if self.wanted(*base) {
                            let w = format_ident!("__w{}", target);
                            let slot = self.slot_typed(*base, Some(quote!(#w)));
                            self.out.extend({
                                let __rt = crate::rt::at(span);
                                quote_spanned!(span=>
                                    #__rt::Tangent::accumulate(&mut (*#slot).#member, &#d);
                                )
                            });
                        }
                    }
                    Op::Struct { fields, .. } => {
                        // The change read as the struct's when it has every field the literal
                        // names (`guard::FieldsOf`): a field it lacks is the literal's one
                        // error, not again at `d.angel` here.
                        let d = if fields.len() <= FIELDS_MAX {
                            let names = fields.iter().map(|(m, _)| {
                                crate::field_name_type(&match m {
                                    syn::Member::Named(i) => i.unraw().to_string(),
                                    syn::Member::Unnamed(i) => i.index.to_string(),
                                })
                            });
                            let f = format_ident!("__f{}", target);
                            self.out.extend(quote!(
                                let #f = (&&#RT::guard::FieldsOf::<(#(#names,)*), _>::of(&#d))
                                    .lens_fields(#d);
                            ));
                            quote!(#f)
                        } else {
                            quote!(#d)
                        };
                        for (m, o) in fields {
                            self.contribute(o, quote!(#d.#m));
                        }
                    }
                    Op::Build { args, .. } => {
                        // Entry `k` in the constructor's order (row by row), through a rule
                        // that only nalgebra's static matrices have: a type not known by name
                        // (an alias, or a struct of the user's) is one error saying which.
                        for (k, a) in args.iter().enumerate() {
                            self.contribute(a, {
                                let __rt = crate::rt::at(span);
                                quote_spanned!(span=>
                                    #__rt::rules::BuildRule::built_entry(&#d, #k)
                                )
                            });
                        }
                    }
                    Op::Rule { args, .. } | Op::Call { args, .. } => {
                        // The pullback's call at the expression, names included: a rule whose
                        // bound failed is then reported there once, not again at `#[lens]`.
                        let (pb, d) = (
                            crate::respan(quote!(#pb), span),
                            crate::respan(quote!(#d), span),
                        );
                        let side = match &**op {
                            Op::Rule {
                                checked: Some(_), ..
                            }
                            | Op::Rule { sided: true, .. } => {
                                super::differentiated_side(self.cx, args)
                            }
                            _ => None,
                        };
                        if let Op::Call { spans, .. } = &**op {
                            // A function's changes read at its arguments' types (`guard::Change`).
                            let names = self.names(*target, args);
                            let c = format_ident!("__c{}", target);
                            let spread = match names.as_slice() {
                                [one] => quote_spanned!(span=> let #one = #pb(#d);),
                                // Through `guard::Spread`: a call with more arguments than
                                // the function takes is rustc's one error at the call, not
                                // again as this pattern against the callee's changes.
                                many if many.len() <= SPREAD_MAX => {
                                    let n = proc_macro2::Literal::usize_unsuffixed(many.len());
                                    {
                                        let __rt = crate::rt::at(span);
                                        quote_spanned!(span=>
                                            let #c = #pb(#d);
                                            let (#(#many),*) = (&#__rt::guard::Spread::<#n, _>::of(&#c))
                                                .lens_spread(#c);
                                        )
                                    }
                                }
                                many => quote_spanned!(span=> let (#(#many),*) = #pb(#d);),
                            };
                            self.out.extend(spread);
                            let w = format_ident!("__w{}", target);
                            for (i, (o, at)) in args.iter().zip(spans).enumerate() {
                                let g = format_ident!("__g{}_{}", target, i);
                                let k = syn::Index::from(i);
                                let change = {
                                    let __rt = crate::rt::at(at.map_or(span, |a| a.point));
                                    quote_spanned!(at.map_or(span, |a| a.point)=>
                                        (&&#__rt::guard::Change::like(#w.#k, &#g))
                                            .lens_change(#g)
                                    )
                                };
                                self.contribute(o, change);
                            }
                        } else {
                            // A rule's pullback takes its change read at the type it takes
                            // (`change_witness`, `guard::Types`): a value bound or built at
                            // another type (`let s: f64 = y * 3.0` of an `f32` `y`, an
                            // array's element) is the function as written's one error there,
                            // and the change of the bound type handed on was a second, at the
                            // operator, pointing into the rule's definition.
                            let cw = format_ident!("__cw{}", target);
                            self.out.extend({
                                let __rt = crate::rt::at(span);
                                quote_spanned!(span=>
                                    let #cw = #__rt::change_witness(&#pb);
                                )
                            });
                            let d = {
                                let __rt = crate::rt::at(span);
                                quote_spanned!(span=>
                                    #__rt::guard::Types::like(#cw, &#d)
                                        .lens_typed_move(#d)
                                )
                            };
                            if let [one] = args.as_slice() {
                                let g = format_ident!("__g{}_0", target);
                                self.out.extend(quote_spanned!(span=> let #g = #pb(#d);));
                                self.contribute(one, quote!(#g));
                            } else if let Some(i) = side {
                                // A one-sided rule (`expand::differentiated_side`): one change.
                                let g = format_ident!("__g{}_{}", target, i);
                                self.out.extend(quote_spanned!(span=> let #g = #pb(#d);));
                                self.contribute(&args[i], quote!(#g));
                            } else {
                                let names = self.names(*target, args);
                                self.out
                                    .extend(quote_spanned!(span=> let (#(#names),*) = #pb(#d);));
                                if matches!(&**op, Op::Rule { tied: true, .. }) {
                                    self.spread_tied(*target, args);
                                } else {
                                    self.spread(*target, args);
                                }
                            }
                        }
                    }
                    Op::Sub { field, args, .. } => {
                        // The sub-model adds its change into its field of the buffer (twice
                        // for a sub-model called twice: shared weights add up).
                        let buf = quote!(&mut __dp.#field);
                        if self.cx.input_change_unwanted(args) {
                            // `vjp_params`: the parameter change only.
                            self.out.extend(quote_spanned!(span=> #pb(#d, #buf);));
                            return;
                        }
                        let names = self.names(*target, args);
                        let pattern = match names.as_slice() {
                            [one] => one.clone(),
                            many => quote!((#(#many,)*)),
                        };
                        self.out
                            .extend(quote_spanned!(span=> let #pattern = #pb(#d, #buf);));
                        // Read at the inputs' types (`guard::Change`): an input of the wrong
                        // type is the one error of the call's check, not again here.
                        let w = format_ident!("__w{}", target);
                        for (i, o) in args.iter().enumerate() {
                            let g = format_ident!("__g{}_{}", target, i);
                            let k = syn::Index::from(i);
                            let change = {
                                let __rt = crate::rt::at(span);
                                quote_spanned!(span=>
                                    (&&#__rt::guard::Change::like(#w.#k, &#g))
                                        .lens_change(#g)
                                )
                            };
                            self.contribute(o, change);
                        }
                    }
                    Op::Index { base, .. } => {
                        let Operand::Var(base) = base else { return };
                        if self.wanted(*base) {
                            let w = format_ident!("__w{}", target);
                            let slot = self.slot_typed(*base, Some(quote!(#w)));
                            let i = format_ident!("__i{}", target);
                            let add = {
                                let __rt = crate::rt::at(span);
                                quote_spanned!(span=>
                                    #__rt::rules::IndexRule::add_at(
                                        #__rt::slot_of_index(#slot, &#i), #i, #d
                                    );
                                )
                            };
                            if self.cx.defer_entries && self.external.contains_key(base) {
                                self.deferred.push(add);
                            } else {
                                self.out.extend(add);
                            }
                        }
                    }
                    Op::Loop(l) => {
                        // The loop's pullback adds the outside values' changes in place and
                        // returns the changes of the carried values as they were before it.
                        let free = self.cx.wanted(&l.free);
                        let slots = self.slots(&free);
                        let gs: Vec<syn::Ident> = (0..l.init.len())
                            .map(|i| format_ident!("__g{}_{}", target, i))
                            .collect();
                        let buf = self.cx.params.map(|_| quote!(, &mut *__dp));
                        self.out
                            .extend(quote_spanned!(span=> let (#(#gs,)*) = #pb(#d, #slots #buf);));
                        for (v, g) in l.init.iter().zip(gs) {
                            self.contribute(&Operand::Var(*v), quote!(#g));
                        }
                    }
                    Op::Branch(b) => {
                        let free = self.cx.wanted(&b.free);
                        let slots = self.slots(&free);
                        let k = b.blocks.len();
                        let buf = self.cx.params.map(|_| quote!(, &mut *__dp));
                        let call = if k == 1 {
                            quote!(#pb(#d, #slots #buf))
                        } else {
                            let arms = (0..k).map(|i| {
                                let p = wrap(i, k, quote!(__f));
                                quote!(#p => __f(#d, #slots #buf),)
                            });
                            quote!(match #pb { #(#arms)* })
                        };
                        self.out.extend(quote!(#call;));
                    }
                }
            }
        }
    }

    /// Names for the changes of several operands (`_` for forward-only ones).
    fn names(&self, target: VarId, ops: &[Operand]) -> Vec<TokenStream> {
        ops.iter()
            .enumerate()
            .map(|(i, o)| match o {
                Operand::Var(id) if self.cx.vars[*id].diff => {
                    let g = format_ident!("__g{}_{}", target, i);
                    quote!(#g)
                }
                _ => quote!(_),
            })
            .collect()
    }

    /// [`Sweep::spread`] for a tied rule (`Op::Rule::tied`): the changes of the operands
    /// after the first, which the rule gives at the first's type, read as each operand's own
    /// type through the witnesses bound beside the rule's call.
    fn spread_tied(&mut self, target: VarId, ops: &[Operand]) {
        let w = format_ident!("__w{}", target);
        for (i, o) in ops.iter().enumerate() {
            let g = format_ident!("__g{}_{}", target, i);
            let k = syn::Index::from(i);
            let g = if i == 0 {
                quote!(#g)
            } else {
                super::typed_like_var(quote!(#w.#k), quote!(#g))
            };
            self.contribute(o, g);
        }
    }

    fn spread(&mut self, target: VarId, ops: &[Operand]) {
        for (i, o) in ops.iter().enumerate() {
            let g = format_ident!("__g{}_{}", target, i);
            self.contribute(o, quote!(#g));
        }
    }
}
