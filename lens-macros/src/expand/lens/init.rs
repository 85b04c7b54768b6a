//! The lens type's `Init` (or `InitAt<T>`): where its parameters start.

use super::Sig;
use crate::analyse::{any_token, mentions};
use crate::rt::RT;
use proc_macro2::TokenStream;
use quote::{ToTokens, quote, quote_spanned};
use syn::Ident;

/// `Init` names one parameter type, so a lens type gets it only when that type depends on no
/// generic parameter but the type's own (`Para` can: it is implemented per input). The type
/// parameters the parameters' types name (the scalar `T`): with one, the type gets
/// `InitAt<T>` for every `T` instead, through which a `para!` model generic over its scalar
/// initialises the lens as a sub-model. Parameters start where `#[lens(init = f)]` puts them,
/// or at zero.
pub fn init(sig: &Sig) -> TokenStream {
    let Sig {
        f,
        own_consts,
        own_idents,
        own_decl,
        ty_path,
        ..
    } = sig;
    let (p_ty, _, _) = sig.part(&sig.params);
    let scalars: Vec<&syn::TypeParam> = f
        .generics
        .type_params()
        .filter(|t| mentions(p_ty.clone(), &t.ident.to_string()))
        .collect();
    // `Init`'s bounds: the where clause's predicates on the type's own generics alone.
    let others: Vec<String> = f
        .generics
        .params
        .iter()
        .filter_map(|g| match g {
            syn::GenericParam::Type(t) => Some(t.ident.to_string()),
            syn::GenericParam::Const(c) if !own_idents.contains(&&c.ident) => {
                Some(c.ident.to_string())
            }
            _ => None,
        })
        .collect();
    // A bound the impl cannot write: one naming a generic other than `except` (the scalar of
    // `InitAt`, or none) that the impl does not declare, or a lifetime.
    let foreign = |t: TokenStream, except: &str| {
        others.iter().any(|o| o != except && mentions(t.clone(), o)) || has_lifetime(t)
    };
    let predicates: Vec<&syn::WherePredicate> = f
        .generics
        .where_clause
        .iter()
        .flat_map(|w| &w.predicates)
        .collect();
    let writable_where = |except: &str| -> Vec<&syn::WherePredicate> {
        predicates
            .iter()
            .copied()
            .filter(|p| !foreign(p.to_token_stream(), except))
            .collect()
    };
    // The generator's type is `__R` in the impls, a name no user type has (a user's
    // parameter type named like it would be hidden by it in the return type:
    // `tests/para_macro.rs`).
    let (init_body, doc_init) = match &f.init {
        Some(path) => (
            {
                // At the path: its mistake is reported there, not over the whole attribute.
                let at = syn::spanned::Spanned::span(path);
                let rng = Ident::new("__rng", at);
                quote_spanned!(at=> #path(#rng))
            },
            format!("The parameters drawn by `{}`.", path.to_token_stream()),
        ),
        None => (
            quote!({
                let _ = __rng;
                #RT::Tangent::zeros()
            }),
            "The parameters at zero (give `#[lens(init = f)]` to draw them instead).".to_string(),
        ),
    };
    match scalars.as_slice() {
        [] => {
            let init_where = writable_where("");
            quote! {
                impl #own_decl #RT::Init for #ty_path
                where #(#init_where,)*
                {
                    type Param = #p_ty;
                    #[doc = #doc_init]
                    fn init_with<__R: #RT::Rng + ?Sized>(&self, __rng: &mut __R) -> #p_ty {
                        #init_body
                    }
                }
            }
        }
        [scalar] => {
            let s_ident = &scalar.ident;
            let s_bounds = &scalar.bounds;
            let s_name = s_ident.to_string();
            // The impl declares the scalar and the type's own consts only: a bound of the
            // scalar that it cannot write (`T: From<U>`, `where T: Real + 'a`) would be lost
            // and the impl would not compile; then there is no `InitAt`.
            let writable = !foreign(s_bounds.to_token_stream(), &s_name)
                && predicates.iter().all(|p| {
                    let t = p.to_token_stream();
                    !mentions(t.clone(), &s_name) || !foreign(t, &s_name)
                });
            if !writable {
                return TokenStream::new();
            }
            let at_where = writable_where(&s_name);
            let consts = own_consts.iter().map(|c| {
                let (i, t) = (&c.ident, &c.ty);
                quote!(const #i: #t)
            });
            quote! {
                impl<#s_ident: #s_bounds, #(#consts),*> #RT::InitAt<#s_ident> for #ty_path
                where #(#at_where,)*
                {
                    type Param = #p_ty;
                    #[doc = #doc_init]
                    fn init_at_with<__R: #RT::Rng + ?Sized>(&self, __rng: &mut __R) -> #p_ty {
                        #init_body
                    }
                }
            }
        }
        _ => TokenStream::new(),
    }
}

/// Whether `tokens` name a lifetime (the `Init` impl declares none).
fn has_lifetime(tokens: TokenStream) -> bool {
    any_token(
        tokens,
        &|t| matches!(t, proc_macro2::TokenTree::Punct(p) if p.as_char() == '\''),
    )
}
