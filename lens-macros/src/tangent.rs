//! `#[derive(Tangent)]`: change-space structure of a parameter struct, field by field.

use crate::rt::RT;
use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{Data, DeriveInput, Fields, Index, Member};

/// The names of `generics`' parameters: types, constants and lifetimes (without the `'`).
fn generic_names(generics: &syn::Generics) -> Vec<String> {
    generics
        .params
        .iter()
        .map(|g| match g {
            syn::GenericParam::Type(t) => t.ident.to_string(),
            syn::GenericParam::Const(c) => c.ident.to_string(),
            syn::GenericParam::Lifetime(l) => l.lifetime.ident.to_string(),
        })
        .collect()
}

/// Whether `ty` names one of `names` (or `Self`) anywhere in its tokens.
fn names_any(ty: &syn::Type, names: &[String]) -> bool {
    fn walk(tokens: TokenStream, names: &[String]) -> bool {
        tokens.into_iter().any(|tt| match tt {
            proc_macro2::TokenTree::Ident(i) => {
                let i = i.to_string();
                i == "Self" || names.contains(&i)
            }
            proc_macro2::TokenTree::Group(g) => walk(g.stream(), names),
            _ => false,
        })
    }
    walk(quote!(#ty), names)
}

pub fn expand(input: &DeriveInput) -> syn::Result<TokenStream> {
    let Data::Struct(data) = &input.data else {
        return Err(syn::Error::new_spanned(
            &input.ident,
            "`Tangent` can only be derived for structs; write the impl by hand for enums and unions",
        ));
    };
    let name = &input.ident;
    let members: Vec<Member> = match &data.fields {
        Fields::Named(f) => f
            .named
            .iter()
            .map(|f| Member::Named(f.ident.clone().expect("named field")))
            .collect(),
        Fields::Unnamed(f) => (0..f.unnamed.len())
            .map(|i| Member::Unnamed(Index::from(i)))
            .collect(),
        Fields::Unit => Vec::new(),
    };
    let types: Vec<&syn::Type> = data.fields.iter().map(|f| &f.ty).collect();
    let p = quote!(#RT);

    let (impl_generics, ty_generics, where_clause) = input.generics.split_for_impl();
    let name_ty = quote!(#name #ty_generics);
    // A field type that names none of the struct's generics (`n: usize`) bounds neither impl
    // by its `Tangent` (`Flat` keeps `Field: FlatField` for every field): such a bound is decided here, and when it failed rustc reported it here and again at
    // every use of the struct (at `#[lens]`, for an argument of the struct's type). Its
    // `zeros` is the one error instead, at the field's type (`FieldTangent`'s docs).
    let generic = generic_names(&input.generics);
    let bounded: Vec<bool> = types.iter().map(|ty| names_any(ty, &generic)).collect();
    let mut tangent_where = where_clause
        .cloned()
        .unwrap_or_else(|| syn::parse_quote!(where));
    for ty in types
        .iter()
        .zip(&bounded)
        .filter(|(_, b)| **b)
        .map(|(t, _)| t)
    {
        tangent_where
            .predicates
            .push(syn::parse_quote!(#ty: #p::Tangent));
    }

    let mut flat_generics = input.generics.clone();
    flat_generics
        .params
        .insert(0, syn::parse_quote!(__S: ::core::marker::Copy + 'static));
    let (flat_impl_generics, _, _) = flat_generics.split_for_impl();
    let mut flat_where = where_clause
        .cloned()
        .unwrap_or_else(|| syn::parse_quote!(where));
    // Each field reached through `Field: FlatField<__S, T>` rather than bounded by
    // `T: Flat<__S>`: a field type that does not resolve is then one error (`Field`'s docs).
    // `T: Tangent` too: with it the struct is `Tangent` (`Flat`'s supertrait) in the impl,
    // so a field type that is not `Tangent` is the `Tangent` impl's one error, not a second
    // one here (a bound on an unresolved type raises no E0053 unless it is `Flat`'s).
    for ty in &types {
        flat_where
            .predicates
            .push(syn::parse_quote!(#p::Field: #p::FlatField<__S, #ty>));
    }
    for ty in types
        .iter()
        .zip(&bounded)
        .filter(|(_, b)| **b)
        .map(|(t, _)| t)
    {
        flat_where
            .predicates
            .push(syn::parse_quote!(#ty: #p::Tangent));
    }
    let field = |ty: &syn::Type| quote!(<#p::Field as #p::FlatField<__S, #ty>>);
    // Each field of a value of the struct (`self.m`, `__a.m`), shared or mutable.
    let of_in = |v: &str, mutable: bool| -> Vec<TokenStream> {
        let v = syn::Ident::new(v, proc_macro2::Span::call_site());
        members
            .iter()
            .zip(&types)
            .map(|(m, ty)| {
                let f = field(ty);
                if mutable {
                    quote!(#f::of_mut(&mut #v.#m))
                } else {
                    quote!(#f::of(&#v.#m))
                }
            })
            .collect()
    };
    let (of, of_mut) = (of_in("self", false), of_in("self", true));
    let (a, a_mut, b_mut, c_mut) = (
        of_in("__a", false),
        of_in("__a", true),
        of_in("__b", true),
        of_in("__c", true),
    );

    // Checkpoints: every field's arrays under `path.field`.
    let mut tensors_generics = input.generics.clone();
    tensors_generics
        .params
        .insert(0, syn::parse_quote!(__S: #p::Stored));
    let (tensors_impl_generics, _, _) = tensors_generics.split_for_impl();
    let mut tensors_where = where_clause
        .cloned()
        .unwrap_or_else(|| syn::parse_quote!(where));
    for ty in &types {
        tensors_where
            .predicates
            .push(syn::parse_quote!(#ty: #p::Tensors<__S>));
    }
    let part_names: Vec<String> = members
        .iter()
        .map(|m| match m {
            Member::Named(i) => syn::ext::IdentExt::unraw(i).to_string(),
            Member::Unnamed(i) => i.index.to_string(),
        })
        .collect();

    // Each field's zero as its type's (at the type: the error of a field that is not
    // `Tangent`), and its `accumulate` through `FieldTangent` where the impl is not bounded by
    // the type's `Tangent`.
    let zeros: Vec<TokenStream> = types
        .iter()
        .map(|ty| quote_spanned!(ty.span()=> <#ty as #p::Tangent>::zeros()))
        .collect();
    let zero = match &data.fields {
        Fields::Named(_) => quote!(Self { #(#members: #zeros),* }),
        Fields::Unnamed(_) => quote!(Self ( #(#zeros),* )),
        Fields::Unit => quote!(Self),
    };
    let accumulate: Vec<TokenStream> = members
        .iter()
        .zip(&types)
        .zip(&bounded)
        .map(|((m, ty), bounded)| {
            if *bounded {
                quote!(#p::Tangent::accumulate(&mut self.#m, &other.#m);)
            } else {
                quote!({
                    #[allow(unused_imports)]
                    use #p::{FieldAccumulate as _, FieldAccumulateOther as _};
                    (&#p::FieldTangent::<#ty>(::core::marker::PhantomData))
                        .lens_accumulate(&mut self.#m, &other.#m);
                })
            }
        })
        .collect();
    let mut slices = quote!(#p::empty());
    let mut slices_mut = quote!(#p::empty());
    for (x, x_mut) in of.iter().zip(&of_mut) {
        slices = quote!(#p::Iterator::chain(#slices, #p::Flat::<__S>::slices(#x)));
        slices_mut = quote!(#p::Iterator::chain(#slices_mut, #p::Flat::<__S>::slices_mut(#x_mut)));
    }

    // Each field under its name, for the sweep of a literal that builds the struct
    // (`guard::FieldsOf`): a field the literal names and the struct lacks is then the literal's
    // one error, not again where the sweep reads its change.
    let has_field = part_names.iter().map(|n| {
        let field = crate::field_name_type(n);
        quote!(impl #impl_generics #p::guard::HasField<#field> for #name_ty #where_clause {})
    });

    Ok(quote! {
        #(#has_field)*
        impl #impl_generics #p::guard::DerivedFields for #name_ty #where_clause {}

        impl #impl_generics #p::Tangent for #name #ty_generics #tangent_where {
            #[inline]
            fn zeros() -> Self {
                #zero
            }
            #[inline]
            fn accumulate(&mut self, other: &Self) {
                #(#accumulate)*
            }
        }

        #p::with_checkpoints! {
        impl #tensors_impl_generics #p::Tensors<__S> for #name #ty_generics #tensors_where {
            fn tensors(&self, __path: &str, __out: &mut #p::Vec<#p::Tensor<__S>>) {
                #(#p::Tensors::<__S>::tensors(&self.#members, &#p::checkpoint_join(__path, #part_names), __out);)*
            }
            fn load_from(
                &mut self,
                __path: &str,
                __src: &mut #p::Source<'_>,
            ) -> ::core::result::Result<(), #p::CheckpointError> {
                #(#p::Tensors::<__S>::load_from(&mut self.#members, &#p::checkpoint_join(__path, #part_names), __src)?;)*
                ::core::result::Result::Ok(())
            }
        }
        }

        // Not looked through in errors: a struct of another scalar is one error naming the
        // struct, not one per field array.
        #[diagnostic::do_not_recommend]
        impl #flat_impl_generics #p::Flat<__S> for #name #ty_generics #flat_where {
            #[inline]
            fn slices(&self) -> impl #p::Iterator<Item = &[__S]> {
                #slices
            }
            #[inline]
            fn slices_mut(&mut self) -> impl #p::Iterator<Item = &mut [__S]> {
                #slices_mut
            }
            #[inline]
            fn visit_slices(&self, __f: &mut impl FnMut(&[__S])) {
                #(#p::Flat::<__S>::visit_slices(#of, __f);)*
            }
            #[inline]
            fn zip2_slices(&mut self, __a: &Self, __f: &mut impl FnMut(&mut [__S], &[__S])) {
                #(#p::Flat::<__S>::zip2_slices(#of_mut, #a, __f);)*
            }
            #[inline]
            fn zip3_slices(
                &mut self,
                __a: &Self,
                __b: &mut Self,
                __f: &mut impl FnMut(&mut [__S], &[__S], &mut [__S]),
            ) {
                #(#p::Flat::<__S>::zip3_slices(#of_mut, #a, #b_mut, __f);)*
            }
            #[inline]
            fn zip4_slices(
                &mut self,
                __a: &Self,
                __b: &mut Self,
                __c: &mut Self,
                __f: &mut impl FnMut(&mut [__S], &[__S], &mut [__S], &mut [__S]),
            ) {
                #(#p::Flat::<__S>::zip4_slices(#of_mut, #a, #b_mut, #c_mut, __f);)*
            }
            #[inline]
            fn zip4_slices_mut(
                &mut self,
                __a: &mut Self,
                __b: &mut Self,
                __c: &mut Self,
                __f: &mut impl FnMut(&mut [__S], &mut [__S], &mut [__S], &mut [__S]),
            ) {
                #(#p::Flat::<__S>::zip4_slices_mut(#of_mut, #a_mut, #b_mut, #c_mut, __f);)*
            }
            #[inline]
            fn zip2_slices_mut(&mut self, __a: &mut Self, __f: &mut impl FnMut(&mut [__S], &mut [__S])) {
                #(#p::Flat::<__S>::zip2_slices_mut(#of_mut, #a_mut, __f);)*
            }
        }
    })
}
