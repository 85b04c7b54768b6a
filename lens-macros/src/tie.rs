//! The companions that tie a function's reverse to the function: `g_lens_vjp` and
//! `g_lens_rev`, written beside `g`, `g_vjp` and `g_rev` (by `#[lens]`, and by
//! `__companions!` for reverses written by hand). A `#[lens]` body's sweeps call them, never
//! `g_vjp` or `g_rev` by name: each returns its reverse's result `Tied` to the `g` written
//! beside it (`lens_core::__private::Tied`), and the sweep checks that against the `g` its
//! call names. Resolving `g_vjp` on its own reached another function's reverse whenever `g`
//! was shadowed (a plain `fn relu` beside the prelude's glob) or imported alone.

use crate::rt::RT;
use proc_macro2::{Ident, Span, TokenStream};
use quote::{format_ident, quote};
use syn::visit_mut::VisitMut;
use syn::{Generics, Type};

/// One companion to write.
pub struct Companion<'a> {
    pub vis: &'a syn::Visibility,
    /// `g`, whose item the result is tied to.
    pub item: &'a Ident,
    /// The reverse it calls (`g_vjp`, `g_rev`) and its own name (`g_lens_vjp`, ...).
    pub reverse: &'a Ident,
    pub name: Ident,
    pub generics: &'a Generics,
    /// The reverse's arguments; the first `tied` of them are `g`'s.
    pub args: Vec<(Ident, Type)>,
    pub tied: usize,
    /// The reverse's result type.
    pub ret: TokenStream,
    /// Whether `item` has the generics of the reverse, in order (then both are called with
    /// them given: a const generic that no argument names, a loop's trip count, is not
    /// inferred).
    pub same_generics: bool,
    /// The reverse's `#[cfg(..)]` attributes, which the companion shares.
    pub cfgs: Vec<syn::Attribute>,
    /// The reverse is `g_vjp` standing in for a `g_rev` not written: its pullback is applied
    /// to the last argument (the output's change).
    pub through_vjp: bool,
}

/// The companion `c`: `fn g_lens_vjp(x: X) -> Tied<(Y, impl FnOnce ..), (X,)> { Tied::new(
/// g_vjp(x), &g) }`. The argument types' elided lifetimes are named (the result names the
/// types too), as lifetimes of the companion's own.
pub fn companion(c: &Companion) -> TokenStream {
    let mut named = Named::default();
    let types: Vec<Type> = c
        .args
        .iter()
        .map(|(_, t)| {
            let mut t = t.clone();
            named.visit_type_mut(&mut t);
            t
        })
        .collect();
    let mut generics = c.generics.clone();
    // An argument of type `impl Trait` is a generic of the companion's own, which the result
    // can name.
    let types: Vec<Type> = types
        .into_iter()
        .enumerate()
        .map(|(k, t)| match t {
            Type::ImplTrait(i) => {
                let p = format_ident!("__LensImpl{}", k);
                let bounds = &i.bounds;
                generics.params.push(syn::parse_quote!(#p: #bounds));
                syn::parse_quote!(#p)
            }
            other => other,
        })
        .collect();
    for l in named.0.iter().rev() {
        generics.params.insert(
            0,
            syn::GenericParam::Lifetime(syn::LifetimeParam::new(l.clone())),
        );
    }
    let (_, _, where_clause) = c.generics.split_for_impl();
    let idents: Vec<&Ident> = c.args.iter().map(|(i, _)| i).collect();
    let tied_types = &types[..c.tied];
    let (vis, name, reverse, item, ret) = (c.vis, &c.name, c.reverse, c.item, &c.ret);
    // The generics given (not where an argument is `impl Trait`, which forbids it).
    let given: Vec<&Ident> = c
        .generics
        .params
        .iter()
        .filter_map(|p| match p {
            syn::GenericParam::Type(t) => Some(&t.ident),
            syn::GenericParam::Const(k) => Some(&k.ident),
            syn::GenericParam::Lifetime(_) => None,
        })
        .collect();
    let impl_args = c.args.iter().any(|(_, t)| matches!(t, Type::ImplTrait(_)));
    let turbofish = (!given.is_empty() && !impl_args).then(|| quote!(::<#(#given),*>));
    let item_turbofish = if c.same_generics {
        turbofish.clone()
    } else {
        None
    };
    let cfgs = &c.cfgs;
    let call = match (c.through_vjp, idents.split_last()) {
        (true, Some((d, xs))) => quote!(#reverse #turbofish (#(#xs),*).1(#d)),
        _ => quote!(#reverse #turbofish (#(#idents),*)),
    };
    quote! {
        #(#cfgs)*
        #[doc(hidden)]
        #[inline(always)]
        // Written for callers' bodies, unused where nothing calls the function: not dead code
        // to report (rustc reports it where `#[lens]` is applied inside a `macro_rules!`).
        #[allow(dead_code, clippy::type_complexity, clippy::too_many_arguments, non_snake_case)]
        #vis fn #name #generics (#(#idents: #types),*) -> #RT::Tied<#ret, (#(#tied_types,)*)> #where_clause {
            #RT::Tied::new(#call, &#item #item_turbofish)
        }
    }
}

/// The name of `g`'s companion for `suffix` (`_lens_vjp`), at `g`'s span.
pub fn name(item: &Ident, suffix: &str) -> Ident {
    format_ident!(
        "{}{}",
        syn::ext::IdentExt::unraw(item),
        suffix,
        span = item.span()
    )
}

/// Names the elided lifetimes of references (`&T`, `&'_ T`) `'__lens_l0`, `'__lens_l1`, ...
#[derive(Default)]
struct Named(Vec<syn::Lifetime>);

impl Named {
    fn fresh(&mut self) -> syn::Lifetime {
        let l = syn::Lifetime::new(&format!("'__lens_l{}", self.0.len()), Span::call_site());
        self.0.push(l.clone());
        l
    }
}

impl VisitMut for Named {
    fn visit_type_reference_mut(&mut self, r: &mut syn::TypeReference) {
        match &r.lifetime {
            Some(l) if l.ident != "_" => {}
            _ => r.lifetime = Some(self.fresh()),
        }
        self.visit_type_mut(&mut r.elem);
    }
    fn visit_lifetime_mut(&mut self, l: &mut syn::Lifetime) {
        if l.ident == "_" {
            *l = self.fresh();
        }
    }
    // A function pointer's or a trait object's own lifetimes are higher-ranked: left alone.
    fn visit_type_bare_fn_mut(&mut self, _: &mut syn::TypeBareFn) {}
    fn visit_type_trait_object_mut(&mut self, _: &mut syn::TypeTraitObject) {}
    fn visit_type_impl_trait_mut(&mut self, _: &mut syn::TypeImplTrait) {}
}

/// The `(name, type)` of each of `sig`'s arguments that is a plain name (`x: T`, `mut x: T`);
/// `None` when one is a pattern, whose companion is not written.
pub fn plain_args(sig: &syn::Signature) -> Option<Vec<(Ident, Type)>> {
    sig.inputs
        .iter()
        .map(|a| match a {
            syn::FnArg::Typed(t) => match &*t.pat {
                syn::Pat::Ident(i) if i.subpat.is_none() && i.by_ref.is_none() => {
                    Some((i.ident.clone(), (*t.ty).clone()))
                }
                _ => None,
            },
            syn::FnArg::Receiver(_) => None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn elided_lifetimes_are_named_in_order() {
        let mut named = Named::default();
        let mut t: Type = syn::parse_quote!((&f64, &'_ [u8], &'a u8, &&u8));
        named.visit_type_mut(&mut t);
        let s = quote!(#t).to_string().replace(' ', "");
        assert_eq!(
            s,
            "(&'__lens_l0f64,&'__lens_l1[u8],&'au8,&'__lens_l2&'__lens_l3u8)"
        );
    }
}
