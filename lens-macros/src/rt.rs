//! The path of the runtime every generated item reaches, written once: the facade's hidden
//! module `::paralens::__private` (lens-core names itself `paralens` for its own uses of the
//! macros). Generated code writes `#RT::Tangent` in `quote!`, or `#__rt::..` with
//! `let __rt = rt::at(span)` in `quote_spanned!`, where every token of a path must carry the
//! expression's span (one left at the macro's own widens an error's span to the whole
//! `#[lens]`).

use proc_macro2::{Span, TokenStream};
use quote::{ToTokens, quote, quote_spanned};

/// The runtime's path at the macro's call site, for `quote!`.
pub struct Rt;

/// See [`Rt`].
pub const RT: Rt = Rt;

impl ToTokens for Rt {
    fn to_tokens(&self, tokens: &mut TokenStream) {
        tokens.extend(quote!(::paralens::__private));
    }
}

/// The runtime's path with every token at `span`, for `quote_spanned!`.
pub fn at(span: Span) -> TokenStream {
    quote_spanned!(span=> ::paralens::__private)
}
