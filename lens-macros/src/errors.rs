//! Collecting every error of one item before stopping (serde's `Ctxt` idea).

use proc_macro2::TokenStream;
use quote::ToTokens;
use std::fmt::Display;

/// The errors found so far; combined into one `syn::Error` at the end.
#[derive(Default)]
pub struct Errors {
    all: Option<syn::Error>,
}

impl Errors {
    /// Records an error spanning `node`.
    pub fn at(&mut self, node: impl ToTokens, msg: impl Display) {
        self.push(syn::Error::new_spanned(node, msg));
    }

    /// Records an error.
    pub fn push(&mut self, e: syn::Error) {
        match &mut self.all {
            Some(all) => all.combine(e),
            None => self.all = Some(e),
        }
    }

    /// Adds the errors of `other` to these.
    pub fn merge(&mut self, other: Errors) {
        if let Some(e) = other.all {
            self.push(e);
        }
    }

    /// How many errors have been recorded.
    pub fn count(&self) -> usize {
        self.all.as_ref().map_or(0, |e| e.into_iter().count())
    }

    /// `true` when nothing went wrong.
    pub fn is_empty(&self) -> bool {
        self.all.is_none()
    }

    /// The combined errors as `compile_error!` invocations.
    pub fn into_compile_errors(self) -> TokenStream {
        self.all
            .map(syn::Error::into_compile_error)
            .unwrap_or_default()
    }
}
