//! `__companions!`: the runtime's own functions in the `#[lens]` calling convention (`name`,
//! `name_vjp`, `name_rev`, written by hand), with the companions' names and arguments at the
//! places of `name`'s.
//!
//! A `#[lens]` function that calls `add_bias(m, b)` keeps the call as written and calls
//! `add_bias_vjp(m, b)` in its sweeps, so a mistake in `b` is one type error per function.
//! rustc reports identical diagnostics once, and its note "function defined here" points at
//! the callee's name and the argument at fault: with the companions' names and arguments at
//! `name`'s spans the notes are identical, and the user reads one error, as for a call of a
//! `#[lens]` function (whose companions the macro writes at the function's own spans).

use proc_macro2::{Span, TokenStream, TokenTree};
use quote::ToTokens;
use std::collections::HashMap;
use syn::spanned::Spanned;

/// The items of `input`, each `X_vjp` and `X_rev` beside a function `X` respanned.
pub fn expand(input: TokenStream) -> syn::Result<TokenStream> {
    let file: syn::File = syn::parse2(input)?;
    let mut items = file.items;
    // Each function's name, and the first and last token spans of each of its arguments.
    let mut bases: HashMap<String, (Span, Vec<(Span, Span)>)> = HashMap::new();
    for item in &items {
        if let syn::Item::Fn(f) = item {
            let args = f
                .sig
                .inputs
                .iter()
                .map(|a| ends(a.to_token_stream()))
                .collect();
            bases.insert(f.sig.ident.to_string(), (f.sig.ident.span(), args));
        }
    }
    for item in &mut items {
        let syn::Item::Fn(f) = item else { continue };
        let name = f.sig.ident.to_string();
        let Some(base) = name
            .strip_suffix("_vjp")
            .or_else(|| name.strip_suffix("_rev"))
        else {
            continue;
        };
        let Some((span, args)) = bases.get(base) else {
            continue;
        };
        f.sig.ident.set_span(*span);
        // The arguments `name` shares, in order (a `_rev` has the change `d` after them).
        for (arg, (first, last)) in f.sig.inputs.iter_mut().zip(args) {
            let tokens = with_ends(arg.to_token_stream(), *first, *last);
            *arg = syn::parse2(tokens).map_err(|e| syn::Error::new(arg.span(), e))?;
        }
    }
    // Each reverse tied to its function (`crate::tie`): what a `#[lens]` body's sweeps call.
    let mut tied = Vec::new();
    for item in &items {
        let syn::Item::Fn(f) = item else { continue };
        let name = f.sig.ident.to_string();
        let (base, suffix, rev) = match (name.strip_suffix("_vjp"), name.strip_suffix("_rev")) {
            (Some(base), _) => (base, "_lens_vjp", false),
            (_, Some(base)) => (base, "_lens_rev", true),
            _ => continue,
        };
        let Some(item_fn) = items.iter().find_map(|i| match i {
            syn::Item::Fn(g) if g.sig.ident == base => Some(g),
            _ => None,
        }) else {
            continue;
        };
        let Some(args) = crate::tie::plain_args(&f.sig) else {
            return Err(syn::Error::new(
                f.sig.inputs.span(),
                "the arguments of a reverse are plain names (`x: T`)",
            ));
        };
        let ret = match &f.sig.output {
            syn::ReturnType::Type(_, t) => t.to_token_stream(),
            syn::ReturnType::Default => quote::quote!(()),
        };
        let n = item_fn.sig.inputs.len();
        if args.len() != n + usize::from(rev) {
            return Err(syn::Error::new(
                f.sig.inputs.span(),
                format!(
                    "`{name}` takes the arguments of `{base}`{}",
                    if rev { " and the output's change" } else { "" }
                ),
            ));
        }
        tied.push(crate::tie::companion(&crate::tie::Companion {
            vis: &f.vis,
            item: &item_fn.sig.ident,
            reverse: &f.sig.ident,
            name: crate::tie::name(&item_fn.sig.ident, suffix),
            generics: &f.sig.generics,
            args,
            tied: n,
            ret,
            same_generics: generic_names(&item_fn.sig.generics) == generic_names(&f.sig.generics),
            cfgs: cfgs(f),
            through_vjp: false,
        }));
        // `v.map(g)` takes `g_lens_rev`: where only `g_vjp` is written, for a `g` of one
        // argument, it applies the vjp's pullback.
        if !rev
            && n == 1
            && !items
                .iter()
                .any(|i| matches!(i, syn::Item::Fn(r) if r.sig.ident == format!("{base}_rev")))
            && let Some((out, _)) = pullback_types(&f.sig.output)
            && let Some(mut args) = crate::tie::plain_args(&f.sig)
        {
            let pb_out = pullback_types(&f.sig.output).map(|(_, c)| c);
            args.push((
                syn::Ident::new("__lens_d", proc_macro2::Span::call_site()),
                out,
            ));
            tied.push(crate::tie::companion(&crate::tie::Companion {
                vis: &f.vis,
                item: &item_fn.sig.ident,
                reverse: &f.sig.ident,
                name: crate::tie::name(&item_fn.sig.ident, "_lens_rev"),
                generics: &f.sig.generics,
                args,
                tied: 1,
                ret: pb_out.map(|c| c.to_token_stream()).unwrap_or_default(),
                same_generics: generic_names(&item_fn.sig.generics)
                    == generic_names(&f.sig.generics),
                cfgs: cfgs(f),
                through_vjp: true,
            }));
        }
    }
    let mut out: TokenStream = items.iter().map(ToTokens::to_token_stream).collect();
    out.extend(tied);
    Ok(out)
}

/// The spans of the first and last top-level tokens of `tokens` (a group's whole span).
fn ends(tokens: TokenStream) -> (Span, Span) {
    let spans: Vec<Span> = tokens.into_iter().map(|t| t.span()).collect();
    match (spans.first(), spans.last()) {
        (Some(first), Some(last)) => (*first, *last),
        _ => (Span::call_site(), Span::call_site()),
    }
}

/// `tokens` with its first and last top-level tokens at `first` and `last`: the span rustc
/// gives the argument runs from the one to the other.
fn with_ends(tokens: TokenStream, first: Span, last: Span) -> TokenStream {
    let mut trees: Vec<TokenTree> = tokens.into_iter().collect();
    let n = trees.len();
    if let Some(t) = trees.last_mut() {
        t.set_span(last);
    }
    if n > 0 {
        trees[0].set_span(first);
    }
    trees.into_iter().collect()
}

/// The names of `g`'s type and const generics, in order.
fn generic_names(g: &syn::Generics) -> Vec<String> {
    g.params
        .iter()
        .filter_map(|p| match p {
            syn::GenericParam::Type(t) => Some(t.ident.to_string()),
            syn::GenericParam::Const(c) => Some(c.ident.to_string()),
            syn::GenericParam::Lifetime(_) => None,
        })
        .collect()
}

/// The value's type and the pullback's result type of a vjp returning
/// `(Y, impl FnOnce(Y) -> C)`.
fn pullback_types(output: &syn::ReturnType) -> Option<(syn::Type, syn::Type)> {
    let syn::ReturnType::Type(_, t) = output else {
        return None;
    };
    let syn::Type::Tuple(pair) = &**t else {
        return None;
    };
    let [y, pb] = [pair.elems.first()?, pair.elems.iter().nth(1)?];
    let syn::Type::ImplTrait(pb) = pb else {
        return None;
    };
    pb.bounds.iter().find_map(|b| match b {
        syn::TypeParamBound::Trait(t) => {
            let seg = t.path.segments.last()?;
            match &seg.arguments {
                syn::PathArguments::Parenthesized(p) if seg.ident == "FnOnce" => match &p.output {
                    syn::ReturnType::Type(_, c) => Some((y.clone(), (**c).clone())),
                    syn::ReturnType::Default => None,
                },
                _ => None,
            }
        }
        _ => None,
    })
}

/// `f`'s `#[cfg(..)]` attributes, which its companions share.
fn cfgs(f: &syn::ItemFn) -> Vec<syn::Attribute> {
    f.attrs
        .iter()
        .filter(|a| a.path().is_ident("cfg"))
        .cloned()
        .collect()
}
