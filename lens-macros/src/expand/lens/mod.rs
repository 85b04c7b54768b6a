//! `#[lens]`: the function as written, `name_vjp`, `name_rev` and the lens type. One
//! emitter per generated item: [`sweeps`] (`name_vjp`, `name_rev`, `vjp_params`, the tied
//! companions), [`lens_type`] (the type and its `Lens`/`Para` impls), [`init`] (`Init`),
//! all reading the signature's pieces from [`Sig`].

mod init;
mod lens_type;
mod sig;
mod sweeps;

use crate::analyse::Analysed;
use crate::parse::LensFn;
use proc_macro2::TokenStream;
use quote::quote;
use sig::Sig;
use syn::Ident;
use syn::ext::IdentExt;

/// `fn dense_relu` -> `DenseRelu`.
pub(crate) fn camel(name: &Ident) -> Ident {
    let mut s = String::new();
    for part in name.unraw().to_string().trim_start_matches('_').split('_') {
        let mut c = part.chars();
        if let Some(first) = c.next() {
            s.extend(first.to_uppercase());
            s.push_str(c.as_str());
        }
    }
    Ident::new(&s, name.span())
}

/// `T` for one item, `(A, B, ...)` otherwise.
fn tuple_or_single(items: &[TokenStream]) -> TokenStream {
    match items {
        [one] => one.clone(),
        many => quote!((#(#many),*)),
    }
}

/// Everything `#[lens]` generates beside the function as written, from the analysis of its
/// body (`analysed`) and of its body with the inputs as data (`params_only`, for
/// `vjp_params`).
pub fn lens(f: &LensFn, analysed: &Analysed, params_only: Option<&Analysed>) -> TokenStream {
    generate(f, Some((analysed, params_only)))
}

/// What `lens` generates for a function whose body was refused but whose signature is
/// sound: `name_vjp` and `name_rev` whose bodies are never run, and the lens type. Its users
/// (a `para!` model with it as a sub-model, another `#[lens]` function calling it) then
/// compile, and the body's error is the only one reported, not followed by errors of theirs
/// about a type or function that is missing.
pub fn stub(f: &LensFn) -> TokenStream {
    generate(f, None)
}

/// The sweeps from the analysis, or stubs (`None`).
fn generate(f: &LensFn, sweeps: Option<(&Analysed, Option<&Analysed>)>) -> TokenStream {
    let sig = Sig::new(f);
    let analysed = sweeps.map(|(a, _)| a);
    let companions = sweeps::companions(&sig);
    let vjp = sweeps::vjp(&sig, analysed);
    let rev = sweeps::rev(&sig, analysed);
    let vjp_params = sweeps::vjp_params(&sig, sweeps.and_then(|(_, p)| p));
    let lens_type = lens_type::lens_type(&sig, vjp_params);
    quote! {
        #companions

        #vjp

        #rev

        #lens_type
    }
}
