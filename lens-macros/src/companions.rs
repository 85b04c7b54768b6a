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
    Ok(items.iter().map(ToTokens::to_token_stream).collect())
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
