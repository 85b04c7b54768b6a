//! Procedural macros of paralens: `#[lens]`, `para!` and `#[derive(Tangent)]`. Use them
//! through the `paralens` crate, which re-exports them; generated code names runtime items
//! through `::paralens::__private`.
//!
//! Stages, driven here in order: `parse` reads the item into a small IR that keeps the
//! syntax nodes, `validate` holds the signature and the arguments' markers to the rules and
//! decides each argument's kind, `analyse` puts the body in A-normal form and checks what can
//! be differentiated, `expand` writes the forward and reverse sweeps from the analysis.
#![deny(missing_docs)]

use crate::rt::RT;
use proc_macro::TokenStream;
use quote::ToTokens;

mod analyse;
mod companions;
mod errors;
mod expand;
mod parse;
mod primitives;
mod rt;
mod tangent;
mod tie;
mod unary;
mod validate;

/// `tokens` with every token (inside groups too) at `span`.
pub(crate) fn respan(
    tokens: proc_macro2::TokenStream,
    span: proc_macro2::Span,
) -> proc_macro2::TokenStream {
    use proc_macro2::TokenTree;
    tokens
        .into_iter()
        .map(|mut tt| {
            if let TokenTree::Group(g) = &tt {
                let mut group = proc_macro2::Group::new(g.delimiter(), respan(g.stream(), span));
                group.set_span(span);
                tt = TokenTree::Group(group);
            } else {
                tt.set_span(span);
            }
            tt
        })
        .collect()
}

/// A field's name as a type, one `guard::Ch` per character (`at` is `(Ch<'a'>, Ch<'t'>,)`, a
/// tuple field `0` is `(Ch<'0'>,)`): how `#[derive(Tangent)]` and a literal's sweep name it.
pub(crate) fn field_name_type(name: &str) -> proc_macro2::TokenStream {
    let chars = name.chars().map(|c| quote::quote!(#RT::guard::Ch<#c>));
    quote::quote!((#(#chars,)*))
}

/// `tokens` with the names the generated code declares itself (`__pb1`, `__cl6_5`, `self`)
/// resolved in the hygiene context of `body` (a token of the body as written), wherever they
/// are placed. The code places some of them at the user's expressions (so that a type error
/// is reported there, once) and declares them at the macro's call site: the two resolve alike
/// when the function is written at the top level, but not inside a `macro_rules!` macro, whose
/// tokens come from another context than the `#[lens]` it writes ("cannot find `__pb1`").
fn in_context(
    tokens: proc_macro2::TokenStream,
    body: proc_macro2::Span,
) -> proc_macro2::TokenStream {
    use proc_macro2::TokenTree;
    tokens
        .into_iter()
        .map(|tt| match tt {
            TokenTree::Group(g) => {
                let mut group =
                    proc_macro2::Group::new(g.delimiter(), in_context(g.stream(), body));
                group.set_span(g.span());
                TokenTree::Group(group)
            }
            TokenTree::Ident(mut i) => {
                let name = i.to_string();
                if name.starts_with("__") || name == "self" {
                    i.set_span(i.span().resolved_at(body));
                }
                TokenTree::Ident(i)
            }
            other => other,
        })
        .collect()
}

/// Makes a function a lens: keeps it as written and generates `name_vjp`, `name_rev` and a
/// zero-sized type `Name` implementing `Lens` (or `Para` when arguments are `#[param]`);
/// `#[lens(name = Other)]` names that type `Other` instead, and `#[lens(init = f)]` gives the
/// parameters' initialiser of a lens type with `#[param]` arguments. See the `paralens` crate
/// documentation.
///
/// It goes on a free function: the lens type and its impls are items of the module. A method
/// taking `self` is refused with a message; an associated function without `self` cannot be
/// told apart from a free one by the macro, and in an `impl` rustc reports the generated
/// module and impls as "not supported in `trait`s or `impl`s": move the function out of the
/// `impl`.
///
/// A call in a body is told from its syntax alone: a name starting with a capital (`W(a, b)`)
/// builds a tuple struct, so a `#[lens]` function must have a lower-case name (Rust's own
/// convention); a capitalised one is refused with an error at its name.
#[proc_macro_attribute]
pub fn lens(attr: TokenStream, item: TokenStream) -> TokenStream {
    let mut errors = errors::Errors::default();
    // Parse: the attribute and the function, its arguments with their markers.
    let attr = parse::lens_attr(attr.into(), &mut errors);
    let item = syn::parse_macro_input!(item as syn::ItemFn);
    let mut f = parse::lens_fn(item, &mut errors);
    f.type_name = attr.name;
    f.init = attr.init;
    // Validate: the signature and each argument's kind, by the rules.
    validate::lens_fn(&mut f, &mut errors);
    validate::reserved_names(&f.original, &mut errors);
    let signature_sound = errors.is_empty();
    // Analyse: the body in A-normal form, every unsupported construct an error at its span
    // (run even after a signature error, so that one build reports both).
    let analysed = analyse::lens_fn(&f, &mut errors);
    // Expand, unless something was refused.
    let body = f.original.block.brace_token.span.open();
    let mut out = if errors.is_empty() {
        // A lens type with parameters and differentiated inputs also gets `vjp_params`, from
        // the body analysed with the inputs as data. Should that analysis refuse something
        // the first accepted, the type keeps `Para`'s default (the full sweep).
        let params_only = if f.args.iter().any(|a| a.kind == parse::ArgKind::Param)
            && f.args.iter().any(|a| a.kind == parse::ArgKind::Diff)
        {
            let mut quiet = errors::Errors::default();
            let a = analyse::lens_fn_params(&f, &analysed, &mut quiet);
            quiet.is_empty().then_some(a)
        } else {
            None
        };
        let generated = expand::lens(&f, &analysed, params_only.as_ref());
        // The function as written, its differentiated operations through their rules.
        expand::rewrite_written(&mut f.body, &analysed.in_place, &analysed.probes);
        let mut original = f.original;
        *original.block = f.body;
        let mut out = original.to_token_stream();
        out.extend(generated);
        in_context(out, body)
    } else {
        // Keep the signature for the callers, but not the body, whose mistakes rustc would
        // report a second time.
        let stubs = signature_sound.then(|| expand::stub(&f));
        let mut original = f.original;
        original.block = syn::parse_quote!({ ::core::unreachable!() });
        original
            .attrs
            .push(syn::parse_quote!(#[allow(unused_variables, unreachable_code)]));
        let mut out = original.to_token_stream();
        // With a sound signature, the generated items too, bodies refused: a `para!` model
        // using the lens type then reports nothing of its own.
        out.extend(stubs);
        out
    };
    out.extend(errors.into_compile_errors());
    out.into()
}

/// Declares a model as a struct of sub-models and a forward function calling them; see the
/// `paralens` crate documentation.
#[proc_macro]
pub fn para(input: TokenStream) -> TokenStream {
    let parse::ParaDef { item, forwards } = syn::parse_macro_input!(input as parse::ParaDef);
    let mut errors = errors::Errors::default();
    validate::para_struct(&item, &mut errors);
    // Each forward function in turn: parse its inputs, validate, analyse.
    let mut models = Vec::new();
    let mut signatures_sound = errors.is_empty();
    for forward in forwards {
        match parse::para_model(item.clone(), forward, &mut errors) {
            Err(item) => {
                let mut out = item.to_token_stream();
                out.extend(errors.into_compile_errors());
                return out.into();
            }
            Ok(model) => {
                validate::para_forward(&model, &mut errors);
                validate::reserved_names(&model.forward, &mut errors);
                signatures_sound &= errors.is_empty();
                let analysed = analyse::para_model(&model, &mut errors);
                models.push((model, analysed));
            }
        }
    }
    // Expand unless something was refused: the struct, its parameters and `Init` once, a
    // `Para` impl per forward function. On error the struct as written is kept, so that its
    // users still compile.
    let mut out = if errors.is_empty() {
        let mut out = proc_macro2::TokenStream::new();
        for (k, (model, analysed)) in models.iter_mut().enumerate() {
            // `forward` as written, its differentiated operations through their rules and its
            // sub-model calls as their forwards.
            let fields = model.fields();
            expand::rewrite_para_forward(
                &mut model.forward.block,
                &analysed.in_place,
                &analysed.probes,
                &fields,
            );
            let body = model.forward.block.brace_token.span.open();
            out.extend(in_context(
                expand::para(model, Some(analysed), k == 0),
                body,
            ));
        }
        out
    } else if signatures_sound {
        // Only a body was refused: the model's items and stub impls, so that its users
        // compile and add no errors of their own ("no method `init`").
        models
            .iter()
            .enumerate()
            .map(|(k, (model, _))| expand::para(model, None, k == 0))
            .collect()
    } else {
        expand::without_markers(&item)
    };
    out.extend(errors.into_compile_errors());
    out.into()
}

/// The runtime's own functions in the `#[lens]` calling convention, each `name_vjp` and
/// `name_rev` given the spans of `name` (see the module); used by `lens-core` and
/// `lens-circuits`, not part of the API.
#[doc(hidden)]
#[proc_macro]
pub fn __companions(input: TokenStream) -> TokenStream {
    companions::expand(input.into())
        .unwrap_or_else(syn::Error::into_compile_error)
        .into()
}

/// A function with a reverse written by hand, for `#[lens]` bodies to call: give `g` and
/// `g_vjp` (and optionally `g_rev`) together inside it. A `#[lens]` body's call `g(x)` then
/// reaches this `g_vjp` and no other: the macro writes beside them the hidden `g_lens_vjp`
/// (and `g_lens_rev`), which ties the reverse to this `g`, and a call whose `g` is another
/// function (a plain one of the same name shadowing this one) is refused when it runs.
///
/// `g_vjp` takes `g`'s arguments as plain names and returns `(value, pullback)`, the pullback
/// giving each argument's change (a tuple for several, `()` for an argument that is not
/// differentiated); `g_rev` takes them and the output's change. See the `paralens` crate
/// documentation for an example.
#[proc_macro]
pub fn custom_reverse(input: TokenStream) -> TokenStream {
    companions::expand(input.into())
        .unwrap_or_else(syn::Error::into_compile_error)
        .into()
}

/// The primitives table as Markdown (`primitives::doc`), a string literal for the
/// `paralens::primitives` page of the documentation; not part of the API.
#[doc(hidden)]
#[proc_macro]
pub fn __primitives_doc(input: TokenStream) -> TokenStream {
    if !input.is_empty() {
        return syn::Error::new(proc_macro2::Span::call_site(), "takes no input")
            .into_compile_error()
            .into();
    }
    let doc = primitives::doc();
    quote::quote!(#doc).into()
}

/// lens-core's rule traits of the float methods of one operand, from the one list
/// (`unary.rules`) the macro's table reads too; not part of the API.
#[doc(hidden)]
#[proc_macro]
pub fn __unary_rules(input: TokenStream) -> TokenStream {
    if !input.is_empty() {
        return syn::Error::new(proc_macro2::Span::call_site(), "takes no input")
            .into_compile_error()
            .into();
    }
    unary::rules().into()
}

/// Derives `Tangent` (zero, accumulate) and `Flat<S>` (the flat-slice view) for a struct
/// whose fields all have them, field by field in declaration order.
#[proc_macro_derive(Tangent)]
pub fn derive_tangent(input: TokenStream) -> TokenStream {
    let input = syn::parse_macro_input!(input as syn::DeriveInput);
    tangent::expand(&input)
        .unwrap_or_else(syn::Error::into_compile_error)
        .into()
}
