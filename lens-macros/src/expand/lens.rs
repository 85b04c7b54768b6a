//! `#[lens]`: the function as written, `name_vjp`, `name_rev` and the lens type.

use super::{Cx, Ret, allows, block, block_rev};
use crate::analyse::{Analysed, any_token, mentions};
use crate::parse::{ArgKind, LensFn};
use proc_macro2::TokenStream;
use quote::{ToTokens, format_ident, quote, quote_spanned};
use syn::ext::IdentExt;
use syn::{Ident, Type};

/// `fn dense_relu` -> `DenseRelu`.
fn camel(name: &Ident) -> Ident {
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
    let LensFn {
        vis,
        name,
        args,
        ret,
        ..
    } = f;
    let (impl_generics, _, where_clause) = f.generics.split_for_impl();
    let generics = &f.generics;
    // `r#match` gives `match_vjp`, `match_rev` and `Match`.
    // At the function's name: a call with an argument of the wrong type shows the same
    // definition for `name_vjp` as for the function as written.
    let vjp = format_ident!("{}_vjp", name.unraw(), span = name.span());
    let rev = format_ident!("{}_rev", name.unraw(), span = name.span());
    let ty_name = f.type_name.clone().unwrap_or_else(|| camel(name));
    // The lens type lives in a module of its own and is re-exported by a glob import, which an
    // item of the same name written by the user shadows without a clash; a check below then
    // names `#[lens(name = ...)]`. The impls name it by its module path.
    let module = format_ident!("__lens_{}", name.unraw());
    // The const generics that the parameters' types name (the sizes of a layer's weights)
    // are the lens type's own: `fn scale<const N: usize>(#[param] w: SVector<f64, N>, ..)`
    // gives `Scale<const N: usize>`, still a unit struct, so that one type has one parameter
    // type (`Init`) and a size only the parameters name is constrained by the type.
    let param_tokens: TokenStream = args
        .iter()
        .filter(|a| a.kind == ArgKind::Param)
        .map(|a| a.ty.to_token_stream())
        .collect();
    let own_consts: Vec<&syn::ConstParam> = f
        .generics
        .params
        .iter()
        .filter_map(|g| match g {
            syn::GenericParam::Const(c) if mentions(param_tokens.clone(), &c.ident.to_string()) => {
                Some(c)
            }
            _ => None,
        })
        .collect();
    let own_idents: Vec<&Ident> = own_consts.iter().map(|c| &c.ident).collect();
    let own_args = if own_consts.is_empty() {
        TokenStream::new()
    } else {
        quote!(<#(#own_idents),*>)
    };
    let ty_path = quote!(#module::#ty_name #own_args);
    // The type's own generics as declared (no defaults: the same list serves an impl).
    let own_decl = if own_consts.is_empty() {
        TokenStream::new()
    } else {
        let decl = own_consts.iter().map(|c| {
            let (i, t) = (&c.ident, &c.ty);
            quote!(const #i: #t)
        });
        quote!(<#(#decl),*>)
    };
    let allow = allows();
    let sweep_allow = super::sweep_allows();

    let idents: Vec<&Ident> = args.iter().map(|a| &a.ident).collect();
    // `mut x` where the body may change forward-only data in place.
    let arg_pats: Vec<TokenStream> = args
        .iter()
        .map(|a| {
            let i = &a.ident;
            if a.mutable {
                quote!(mut #i)
            } else {
                quote!(#i)
            }
        })
        .collect();
    let types: Vec<&Type> = args.iter().map(|a| &a.ty).collect();
    // The pullback's result: each argument's type where it gets a change, `()` elsewhere.
    let slots_where = |changed: &dyn Fn(ArgKind) -> bool| {
        let types: Vec<TokenStream> = args
            .iter()
            .map(|a| {
                let t = &a.ty;
                if changed(a.kind) {
                    quote!(#t)
                } else {
                    quote!(())
                }
            })
            .collect();
        tuple_or_single(&types)
    };
    let slots_ty = slots_where(&|k| k != ArgKind::NoDiff);
    // name_rev: only the differentiated slots.
    // Hygienic (mixed-site): the body's own `d`, a function or a constant of that name, still
    // means what it means in the function as written.
    let d_name = if idents.iter().any(|i| *i == "d") {
        Ident::new("__d_out", proc_macro2::Span::mixed_site())
    } else {
        Ident::new("d", proc_macro2::Span::mixed_site())
    };
    let (body_tokens, rev_tokens) = match sweeps {
        Some((analysed, _)) => {
            let Analysed {
                vars,
                body,
                arg_ids: ids,
                ..
            } = analysed;
            let returns: Vec<Ret> = args
                .iter()
                .zip(ids)
                .map(|(a, id)| match a.kind {
                    ArgKind::NoDiff => Ret::Unit,
                    _ => Ret::Var(*id, Some(&a.ty)),
                })
                .collect();
            let again = crate::analyse::read_again(body);
            let after = crate::analyse::read_after_loops(body);
            let cx = Cx::new(vars, None, None, &again, None, &after);
            // `name_rev`'s context: its pullbacks never leave the frame.
            let frame = crate::analyse::frame_bound(ids, body, &again);
            let cx_rev = Cx::new(vars, None, None, &again, Some(&frame), &after);
            (
                block(&cx, body, &returns, None, Some(ret), None, args.len() != 1),
                Some(block_rev(
                    &cx_rev,
                    body,
                    &returns,
                    ret,
                    &d_name,
                    args.len() != 1,
                )),
            )
        }
        None => (
            quote!({
                (::paralens::__private::refused(), |_: #ret| -> #slots_ty {
                    ::paralens::__private::refused()
                })
            }),
            None,
        ),
    };
    let slot_names: Vec<Ident> = (0..args.len()).map(|i| format_ident!("__g{}", i)).collect();
    let slot_pat = tuple_or_single(&slot_names.iter().map(|g| quote!(#g)).collect::<Vec<_>>());
    let diff_idx: Vec<usize> = (0..args.len())
        .filter(|&i| args[i].kind != ArgKind::NoDiff)
        .collect();
    let rev_ty = tuple_or_single(
        &diff_idx
            .iter()
            .map(|&i| {
                let t = &args[i].ty;
                quote!(#t)
            })
            .collect::<Vec<_>>(),
    );
    let rev_val = tuple_or_single(
        &diff_idx
            .iter()
            .map(|&i| {
                let g = &slot_names[i];
                quote!(#g)
            })
            .collect::<Vec<_>>(),
    );
    let rev_ty = if diff_idx.is_empty() {
        quote!(())
    } else {
        rev_ty
    };
    let rev_val = if diff_idx.is_empty() {
        quote!(())
    } else {
        rev_val
    };

    let rev_body = match rev_tokens {
        Some(rev_tokens) => quote!({
            let #slot_pat = #rev_tokens;
            #rev_val
        }),
        None => quote!({ ::paralens::__private::refused() }),
    };

    let doc_vjp = format!(
        "The forward map of [`{name}`] and its pullback (one change per argument, `()` for arguments that are not differentiated). Generated by `#[lens]`."
    );
    let doc_rev = format!(
        "The reverse derivative of [`{name}`] at the arguments, applied to the output change `{d_name}`: the changes of the differentiated arguments. Generated by `#[lens]`."
    );
    let doc_ty = format!("[`{name}`] as a lens (generated by `#[lens]`).");

    // The lens type.
    let params: Vec<usize> = (0..args.len())
        .filter(|&i| args[i].kind == ArgKind::Param)
        .collect();
    let inputs: Vec<usize> = (0..args.len())
        .filter(|&i| args[i].kind != ArgKind::Param)
        .collect();
    let part = |idx: &[usize]| {
        let tys: Vec<TokenStream> = idx
            .iter()
            .map(|&i| {
                let t = &args[i].ty;
                quote!(#t)
            })
            .collect();
        let pats: Vec<TokenStream> = idx
            .iter()
            .map(|&i| {
                let n = &args[i].ident;
                quote!(#n)
            })
            .collect();
        let changes: Vec<TokenStream> = idx
            .iter()
            .map(|&i| {
                let g = &slot_names[i];
                let ty = &args[i].ty;
                if args[i].kind == ArgKind::NoDiff {
                    quote!({
                        use ::paralens::__private::{NoChangeData as _, NoChangeTangent as _};
                        (&&::paralens::__private::NoChangeOf::<#ty>::new()).lens_no_change()
                    })
                } else {
                    quote!(#g)
                }
            })
            .collect();
        if idx.is_empty() {
            (quote!(()), quote!(()), quote!(()))
        } else {
            (
                tuple_or_single(&tys),
                tuple_or_single(&pats),
                tuple_or_single(&changes),
            )
        }
    };
    let (in_ty, in_pat, in_changes) = part(&inputs);
    let (p_ty_tokens, _, _) = part(&params);
    // `Init` names one parameter type, so a lens type gets it only when that type depends on
    // no generic parameter but the type's own (`Para` can: it is implemented per input). The
    // type parameters the parameters' types name (the scalar `T`): with one, the type gets
    // `InitAt<T>` for every `T` instead, through which a `para!` model generic over its
    // scalar initialises the lens as a sub-model.
    let scalars: Vec<&syn::TypeParam> = f
        .generics
        .type_params()
        .filter(|t| mentions(p_ty_tokens.clone(), &t.ident.to_string()))
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
    let init_where = writable_where("");
    // Parameters start where `#[lens(init = f)]` puts them, or at zero. The generator's
    // type is `__R` in the impls, a name no user type has (a user's parameter type named
    // like it would be hidden by it in the return type: `tests/para_macro.rs`).
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
                ::paralens::__private::Tangent::zeros()
            }),
            "The parameters at zero (give `#[lens(init = f)]` to draw them instead).".to_string(),
        ),
    };
    let (p_ty, p_pat, p_changes) = part(&params);
    // `vjp_params`: the sweep of the body analysed with the inputs as data (`params_only`),
    // as a hidden function beside `name_vjp`; its pullback gives the parameters' changes and
    // `()` for every input, so an input's change (a product for a layer's batch) is never
    // computed.
    let vjp_params_name = format_ident!("__{}_vjp_params", name.unraw());
    let (vjp_params_fn, vjp_params_impl) = match sweeps.and_then(|(_, p)| p) {
        Some(pa) if !params.is_empty() => {
            let again = crate::analyse::read_again(&pa.body);
            let after = crate::analyse::read_after_loops(&pa.body);
            let pcx = Cx::new(&pa.vars, None, None, &again, None, &after);
            let p_returns: Vec<Ret> = args
                .iter()
                .zip(&pa.arg_ids)
                .map(|(a, id)| match a.kind {
                    ArgKind::Param => Ret::Var(*id, Some(&a.ty)),
                    _ => Ret::Unit,
                })
                .collect();
            let p_slots_ty = slots_where(&|k| k == ArgKind::Param);
            let p_body = block(
                &pcx,
                &pa.body,
                &p_returns,
                None,
                Some(ret),
                None,
                args.len() != 1,
            );
            let func = quote! {
                #[doc(hidden)]
                #[inline]
                #sweep_allow
                #vis fn #vjp_params_name #generics (#(#arg_pats: #types),*) -> (#ret, impl FnOnce(#ret) -> #p_slots_ty) #where_clause
                    #p_body
            };
            let method = quote! {
                #[inline]
                #allow
                fn vjp_params(&self, __p: &#p_ty, __x: #in_ty) -> (#ret, impl FnOnce(#ret, &mut #p_ty)) {
                    let #p_pat = ::paralens::__private::Clone::clone(__p);
                    let #in_pat = __x;
                    let (__y, __pb) = #vjp_params_name(#(#idents),*);
                    (__y, move |__d: #ret, __dp: &mut #p_ty| {
                        let #slot_pat = __pb(__d);
                        ::paralens::__private::Tangent::accumulate(__dp, &#p_changes);
                    })
                }
            };
            (func, method)
        }
        _ => (TokenStream::new(), TokenStream::new()),
    };
    let init_impl = if !scalars.is_empty() {
        match scalars.as_slice() {
            [scalar] => {
                let s_ident = &scalar.ident;
                let s_bounds = &scalar.bounds;
                let s_name = s_ident.to_string();
                // The impl declares the scalar and the type's own consts only: a bound of
                // the scalar that it cannot write (`T: From<U>`, `where T: Real + 'a`)
                // would be lost and the impl would not compile; then there is no `InitAt`.
                let writable = !foreign(s_bounds.to_token_stream(), &s_name)
                    && predicates.iter().all(|p| {
                        let t = p.to_token_stream();
                        !mentions(t.clone(), &s_name) || !foreign(t, &s_name)
                    });
                let at_where = writable_where(&s_name);
                let consts = own_consts.iter().map(|c| {
                    let (i, t) = (&c.ident, &c.ty);
                    quote!(const #i: #t)
                });
                if writable {
                    quote! {
                        impl<#s_ident: #s_bounds, #(#consts),*> ::paralens::__private::InitAt<#s_ident> for #ty_path
                        where #(#at_where,)*
                        {
                            type Param = #p_ty_tokens;
                            #[doc = #doc_init]
                            fn init_at_with<__R: ::paralens::__private::Rng + ?Sized>(&self, __rng: &mut __R) -> #p_ty_tokens {
                                #init_body
                            }
                        }
                    }
                } else {
                    TokenStream::new()
                }
            }
            _ => TokenStream::new(),
        }
    } else {
        quote! {
            impl #own_decl ::paralens::__private::Init for #ty_path
            where #(#init_where,)*
            {
                type Param = #p_ty_tokens;
                #[doc = #doc_init]
                fn init_with<__R: ::paralens::__private::Rng + ?Sized>(&self, __rng: &mut __R) -> #p_ty_tokens {
                    #init_body
                }
            }
        }
    };
    // A second input for the traits (`NotAnInput`, see there): a wrong input is then one
    // "cannot take an input" error, not a mismatch per sweep.
    let nai = quote!(::paralens::__private::NotAnInput);
    let lens_of_nai = params.is_empty().then(|| {
        quote! {
            #[diagnostic::do_not_recommend]
            impl #own_decl ::paralens::__private::Lens<#nai> for #ty_path {
                type Out = #nai;
                fn apply_vjp(&self, __x: #nai) -> (#nai, impl FnOnce(#nai) -> #nai) {
                    (__x, |__d: #nai| __d)
                }
            }
        }
    });
    // Not where a type parameter may be the input (`impl<T: Real> Lens<T>`): `T` could be
    // `NotAnInput`, and the impls would overlap.
    let typed = f
        .generics
        .params
        .iter()
        .any(|g| matches!(g, syn::GenericParam::Type(_)));
    let not_an_input = if typed {
        TokenStream::new()
    } else {
        quote! {
            #lens_of_nai
            #[diagnostic::do_not_recommend]
            impl #own_decl ::paralens::__private::Para<#nai> for #ty_path {
                type Param = ();
                type Out = #nai;
                fn vjp(&self, _: &(), __x: #nai) -> (#nai, impl FnOnce(#nai, &mut ()) -> #nai) {
                    (__x, |__d: #nai, _: &mut ()| __d)
                }
            }
        }
    };
    let lens_impls = if params.is_empty() {
        quote! {
            impl #impl_generics ::paralens::__private::Lens<#in_ty> for #ty_path #where_clause {
                type Out = #ret;
                #[inline]
                fn apply(&self, __x: #in_ty) -> #ret {
                    let #in_pat = __x;
                    #name(#(#idents),*)
                }
                #[inline]
                #allow
                fn apply_vjp(&self, __x: #in_ty) -> (#ret, impl FnOnce(#ret) -> #in_ty) {
                    let #in_pat = __x;
                    let (__y, __pb) = #vjp(#(#idents),*);
                    (__y, move |__d: #ret| {
                        let #slot_pat = __pb(__d);
                        #in_changes
                    })
                }
            }

            impl #impl_generics ::paralens::__private::Para<#in_ty> for #ty_path #where_clause {
                type Param = ();
                type Out = #ret;
                #[inline]
                fn forward(&self, _: &(), __x: #in_ty) -> #ret {
                    ::paralens::__private::Lens::apply(self, __x)
                }
                #[inline]
                fn vjp(&self, _: &(), __x: #in_ty) -> (#ret, impl FnOnce(#ret, &mut ()) -> #in_ty) {
                    let (__y, __pb) = ::paralens::__private::Lens::apply_vjp(self, __x);
                    (__y, move |__d: #ret, _: &mut ()| __pb(__d))
                }
            }

            impl ::paralens::__private::Init for #ty_path {
                type Param = ();
                fn init_with<__R: ::paralens::__private::Rng + ?Sized>(&self, _: &mut __R) {}
            }

            #not_an_input
        }
    } else {
        quote! {
            impl #impl_generics ::paralens::__private::Para<#in_ty> for #ty_path #where_clause {
                type Param = #p_ty;
                type Out = #ret;
                #[inline]
                fn forward(&self, __p: &#p_ty, __x: #in_ty) -> #ret {
                    let #p_pat = ::paralens::__private::Clone::clone(__p);
                    let #in_pat = __x;
                    #name(#(#idents),*)
                }
                #[inline]
                #allow
                fn vjp(&self, __p: &#p_ty, __x: #in_ty) -> (#ret, impl FnOnce(#ret, &mut #p_ty) -> #in_ty) {
                    let #p_pat = ::paralens::__private::Clone::clone(__p);
                    let #in_pat = __x;
                    let (__y, __pb) = #vjp(#(#idents),*);
                    (__y, move |__d: #ret, __dp: &mut #p_ty| {
                        let #slot_pat = __pb(__d);
                        ::paralens::__private::Tangent::accumulate(__dp, &#p_changes);
                        #in_changes
                    })
                }
                #vjp_params_impl
            }

            #vjp_params_fn

            #init_impl

            #not_an_input
        }
    };

    // A lens type's pullback returns a change for every input; a borrowed input has none to
    // give, so functions taking references get `name_vjp` and `name_rev` only.
    let borrows = args.iter().any(|a| matches!(a.ty, Type::Reference(_)));
    // Nor has a `#[nodiff]` argument of a type with no "no change" value (a configuration
    // struct): the function is still differentiated, without the lens type.
    let unknown_data = args
        .iter()
        .any(|a| a.kind == ArgKind::NoDiff && !has_no_change(&a.ty));
    // Nor can a lens type implement its traits for a generic parameter that no input's type
    // names (a trip count `N` of a loop, or a size only the parameters have): the traits are
    // implemented per input type, so the parameter would not be constrained.
    let unconstrained = f.generics.params.iter().any(|g| {
        let name = match g {
            syn::GenericParam::Type(t) => t.ident.to_string(),
            syn::GenericParam::Const(c) => c.ident.to_string(),
            syn::GenericParam::Lifetime(_) => return false,
        };
        !own_idents.iter().any(|i| *i == &name)
            && !args
                .iter()
                .filter(|a| a.kind != ArgKind::Param)
                .any(|a| mentions(a.ty.to_token_stream(), &name))
    });
    // Some value of each of the type's own generics, for the name check.
    let own_any = if own_consts.is_empty() {
        TokenStream::new()
    } else {
        let last = |t: &Type| match t {
            Type::Path(p) => p.path.segments.last().map(|s| s.ident.to_string()),
            _ => None,
        };
        let any = own_consts.iter().map(|c| match last(&c.ty).as_deref() {
            Some("bool") => quote!(false),
            Some("char") => quote!('\0'),
            _ => quote!(0),
        });
        quote!(<#(#any),*>)
    };
    // The type is checked through a pattern and the value of its name, never the name as a
    // type: `Gain<0>` written on another item named `Gain`, or `Gv` on a user's generic
    // `struct Gv<T, const N: usize>`, would be an error about its generics first ("missing
    // generics for struct `Gv`", with a help placing them after the function's own). The
    // pattern names the type namespace, the value the value namespace: an item of either kind
    // named `Gain` is caught, in one obligation (one error).
    let name_check = {
        let span = name.span();
        quote_spanned! {span=>
            const _: () = {
                let _ = |__lens_named| {
                    let #ty_name { .. } = __lens_named;
                    ::paralens::__private::lens_named::<_, _, #module::#ty_name #own_any>(&__lens_named, &#ty_name);
                };
            };
        }
    };
    let lens_type = if borrows || unknown_data || unconstrained {
        TokenStream::new()
    } else {
        // Visible as far as the re-export needs.
        let inner_vis = match vis {
            syn::Visibility::Public(_) => quote!(pub),
            _ => quote!(pub(crate)),
        };
        quote! {
            #[doc(hidden)]
            #allow
            mod #module {
                #[doc = #doc_ty]
                #allow
                #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
                #inner_vis struct #ty_name #own_decl;
            }
            #[doc(inline)]
            #allow
            #vis use #module::*;

            // `#ty_name` as this module names it must be the generated type: another item of
            // that name hides the glob re-export.
            #allow
            #name_check

            #lens_impls
        }
    };
    // The pullback holds values, never the arguments' borrows (forward-only data a rule
    // keeps is read as an owned copy: `rules::owned`), so it captures none of their elided
    // lifetimes: a caller may then pass a borrow of its own local (`inner(x, &m)`) and return
    // the pullback (in Rust 2024 an `impl` type captures every lifetime in scope by default,
    // and that was E0597 at the caller).
    let captures = if borrows {
        let kept = f.generics.params.iter().map(|g| match g {
            syn::GenericParam::Lifetime(l) => {
                let l = &l.lifetime;
                quote!(#l)
            }
            syn::GenericParam::Type(t) => {
                let i = &t.ident;
                quote!(#i)
            }
            syn::GenericParam::Const(c) => {
                let i = &c.ident;
                quote!(#i)
            }
        });
        quote!(+ use<#(#kept),*>)
    } else {
        TokenStream::new()
    };
    // What a `#[lens]` body's sweeps call: `name_vjp` and `name_rev` tied to `name` (see
    // `crate::tie`).
    let named_args: Vec<(Ident, Type)> = args
        .iter()
        .map(|a| (a.ident.clone(), a.ty.clone()))
        .collect();
    let lens_vjp = crate::tie::companion(&crate::tie::Companion {
        vis,
        item: name,
        reverse: &vjp,
        name: crate::tie::name(name, "_lens_vjp"),
        generics,
        args: named_args.clone(),
        tied: args.len(),
        ret: quote!((#ret, impl FnOnce(#ret) -> #slots_ty #captures)),
        same_generics: true,
        cfgs: Vec::new(),
        through_vjp: false,
    });
    let lens_rev = crate::tie::companion(&crate::tie::Companion {
        vis,
        item: name,
        reverse: &rev,
        name: crate::tie::name(name, "_lens_rev"),
        generics,
        args: named_args
            .into_iter()
            .chain([(d_name.clone(), ret.clone())])
            .collect(),
        tied: args.len(),
        ret: rev_ty.clone(),
        same_generics: true,
        cfgs: Vec::new(),
        through_vjp: false,
    });
    quote! {
        #lens_vjp
        #lens_rev

        #[doc = #doc_vjp]
        #[inline]
        #sweep_allow
        #vis fn #vjp #generics (#(#arg_pats: #types),*) -> (#ret, impl FnOnce(#ret) -> #slots_ty #captures) #where_clause
            #body_tokens

        #[doc = #doc_rev]
        #[inline]
        #sweep_allow
        #vis fn #rev #generics (#(#arg_pats: #types,)* #d_name: #ret) -> #rev_ty #where_clause
            #rev_body

        #lens_type
    }
}

/// Whether `tokens` name a lifetime (the `Init` impl declares none).
fn has_lifetime(tokens: TokenStream) -> bool {
    any_token(
        tokens,
        &|t| matches!(t, proc_macro2::TokenTree::Punct(p) if p.as_char() == '\''),
    )
}

/// Whether a `#[nodiff]` argument's type has a "no change" value the lens type can return
/// (`NoChange`): integers, `bool`, `char`, floats, static and heap matrices, `u64` words and
/// `Option`s, and tuples and arrays of them. Read from the syntax: a type named otherwise is
/// taken as data with none.
fn has_no_change(ty: &Type) -> bool {
    const KNOWN: &[&str] = &[
        "usize",
        "isize",
        "i8",
        "i16",
        "i32",
        "i64",
        "i128",
        "u8",
        "u16",
        "u32",
        "u64",
        "u128",
        "bool",
        "char",
        "f32",
        "f64",
        "SVector",
        "SMatrix",
        "Matrix",
        "HeapMatrix",
        "Option",
        "Lanes",
        "T",
    ];
    match ty {
        Type::Path(p) => p
            .path
            .segments
            .last()
            .is_some_and(|s| KNOWN.iter().any(|k| s.ident == k)),
        Type::Tuple(t) => t.elems.iter().all(has_no_change),
        Type::Array(a) => has_no_change(&a.elem),
        Type::Paren(p) => has_no_change(&p.elem),
        Type::Group(g) => has_no_change(&g.elem),
        _ => false,
    }
}
