//! Procedural macros of paralens. Use them through the `paralens` crate, which re-exports
//! them; the generated code names runtime items through `::paralens::__private`.
#![deny(missing_docs)]

use proc_macro::TokenStream;

mod tangent;

/// Derives `Tangent` (zero, accumulate) and `Flat<S>` (the flat-slice view) for a struct
/// whose fields all have them, field by field in declaration order.
#[proc_macro_derive(Tangent)]
pub fn derive_tangent(input: TokenStream) -> TokenStream {
    let input = syn::parse_macro_input!(input as syn::DeriveInput);
    tangent::expand(&input)
        .unwrap_or_else(syn::Error::into_compile_error)
        .into()
}
