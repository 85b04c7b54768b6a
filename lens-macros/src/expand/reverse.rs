//! The reverse sweep: statements in reverse order, each pulling its output's change back to
//! its operands. The first change a variable receives binds its adjoint (`__d<n>`); later
//! ones are added with `Tangent::accumulate`.

use super::Cx;
use super::forward::{pullback, wrap};
use crate::analyse::{Block, Op, Operand, Stmt, StmtKind, VarId};
use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use std::collections::{HashMap, HashSet};

/// The adjoint of variable `id`, spanned at the variable so that type errors in the
/// reverse sweep point at the user's code.
pub fn adjoint(cx: &Cx, id: VarId) -> syn::Ident {
    format_ident!("__d{}", id, span = cx.vars[id].ident.span())
}

/// How many changes each variable receives from the statements of one block.
pub fn contributions(b: &Block) -> HashMap<VarId, usize> {
    let mut n = HashMap::new();
    let add = |o: &Operand, n: &mut HashMap<VarId, usize>| {
        if let Operand::Var(id) = o {
            *n.entry(*id).or_insert(0) += 1;
        }
    };
    add(&b.result, &mut n);
    for s in &b.stmts {
        match &s.kind {
            StmtKind::Verbatim(_) => {}
            StmtKind::Destructure { src, .. } => add(&Operand::Var(*src), &mut n),
            StmtKind::Let { op, .. } => match &**op {
                Op::Alias(o) => add(o, &mut n),
                Op::Rule { args, .. } | Op::Call { args, .. } | Op::Tuple(args) => {
                    args.iter().for_each(|a| add(a, &mut n));
                }
                // A sub-model adds its parameter change straight into the buffer.
                Op::Sub { args, .. } => args.iter().for_each(|a| add(a, &mut n)),
                Op::Branch(b) => b.free.iter().for_each(|v| add(&Operand::Var(*v), &mut n)),
                Op::Loop(l) => l
                    .init
                    .iter()
                    .chain(&l.free)
                    .for_each(|v| add(&Operand::Var(*v), &mut n)),
            },
        }
    }
    n
}

/// The reverse sweep of one block.
pub struct Sweep<'a> {
    pub cx: &'a Cx<'a>,
    pub have: HashSet<VarId>,
    pub counts: HashMap<VarId, usize>,
    pub out: TokenStream,
}

impl Sweep<'_> {
    /// Adds the change `g` into the adjoint of `o` (nothing for forward-only operands).
    pub fn contribute(&mut self, o: &Operand, g: TokenStream) {
        let Operand::Var(id) = o else { return };
        if !self.cx.vars[*id].diff || self.cx.skipped(*id) {
            return;
        }
        let d = adjoint(self.cx, *id);
        if self.have.insert(*id) {
            let m = (self.counts.get(id).copied().unwrap_or(0) > 1).then(|| quote!(mut));
            self.out.extend(quote!(let #m #d = #g;));
        } else {
            self.out
                .extend(quote!(::paralens::__private::Tangent::accumulate(&mut #d, &#g);));
        }
    }

    pub fn stmt(&mut self, s: &Stmt) {
        let span = s.span;
        match &s.kind {
            StmtKind::Verbatim(_) => {}
            StmtKind::Destructure { src, targets } => {
                if !targets.iter().flatten().any(|t| self.have.contains(t)) {
                    return;
                }
                let parts = targets.iter().map(|t| match t {
                    Some(t) if self.have.contains(t) => {
                        let d = adjoint(self.cx, *t);
                        quote!(#d)
                    }
                    _ => quote!(::paralens::__private::Tangent::zeros()),
                });
                let g = quote!((#(#parts,)*));
                self.contribute(&Operand::Var(*src), g);
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
                    Op::Rule { args, .. } | Op::Call { args, .. } => {
                        if let [one] = args.as_slice() {
                            let g = format_ident!("__g{}_0", target);
                            self.out.extend(quote_spanned!(span=> let #g = #pb(#d);));
                            self.contribute(one, quote!(#g));
                        } else {
                            let names = self.names(*target, args);
                            self.out
                                .extend(quote_spanned!(span=> let (#(#names),*) = #pb(#d);));
                            self.spread(*target, args);
                        }
                    }
                    Op::Sub { field, args } => {
                        // The sub-model adds its change into its field of the buffer (twice
                        // for a sub-model called twice: shared weights add up).
                        let buf = quote!(&mut __dp.#field);
                        if self.cx.input_change_unwanted(args) {
                            // `vjp_params`: the parameter change only.
                            self.out.extend(quote_spanned!(span=> #pb(#d, #buf);));
                        } else if let [one] = args.as_slice() {
                            let g = format_ident!("__g{}_0", target);
                            self.out
                                .extend(quote_spanned!(span=> let #g = #pb(#d, #buf);));
                            self.contribute(one, quote!(#g));
                        } else {
                            let names = self.names(*target, args);
                            self.out
                                .extend(quote_spanned!(span=> let (#(#names,)*) = #pb(#d, #buf);));
                            self.spread(*target, args);
                        }
                    }
                    Op::Loop(l) => {
                        // The loop's pullback returns the carried values' changes, then those
                        // of the values from outside that its body read.
                        let free = self.cx.wanted(&l.free);
                        let from: Vec<VarId> = l.init.iter().chain(&free).copied().collect();
                        let gs: Vec<syn::Ident> = (0..from.len())
                            .map(|i| format_ident!("__g{}_{}", target, i))
                            .collect();
                        let buf = self.cx.params.map(|_| quote!(, &mut *__dp));
                        self.out
                            .extend(quote_spanned!(span=> let (#(#gs,)*) = #pb(#d #buf);));
                        for (v, g) in from.iter().zip(gs) {
                            self.contribute(&Operand::Var(*v), quote!(#g));
                        }
                    }
                    Op::Branch(b) => {
                        let free = self.cx.wanted(&b.free);
                        let gs: Vec<syn::Ident> = (0..free.len())
                            .map(|i| format_ident!("__g{}_{}", target, i))
                            .collect();
                        let k = b.blocks.len();
                        let buf = self.cx.params.map(|_| quote!(, &mut *__dp));
                        let call = if k == 1 {
                            quote!(#pb(#d #buf))
                        } else {
                            let arms = (0..k).map(|i| {
                                let p = wrap(i, k, quote!(__f));
                                quote!(#p => __f(#d #buf),)
                            });
                            quote!(match #pb { #(#arms)* })
                        };
                        self.out.extend(quote!(let (#(#gs,)*) = #call;));
                        for (v, g) in free.iter().zip(gs) {
                            self.contribute(&Operand::Var(*v), quote!(#g));
                        }
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

    fn spread(&mut self, target: VarId, ops: &[Operand]) {
        for (i, o) in ops.iter().enumerate() {
            let g = format_ident!("__g{}_{}", target, i);
            self.contribute(o, quote!(#g));
        }
    }
}
