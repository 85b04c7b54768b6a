//! `para!`: the model struct, its parameter struct, `Init` and `Para`.

use super::{Cx, Ret, allowing, allows, block};
use crate::analyse::Analysed;
use crate::parse::{ParaModel, nodiff_type};
use crate::rt::RT;
use proc_macro2::{Delimiter, Group, Span, TokenStream};
use quote::{ToTokens, format_ident, quote, quote_spanned};
use syn::{Ident, Type};

/// The model's items (its struct, its parameter struct and `Init`, when `with_items`) and the
/// `Para` impl of one forward function.
/// The model's items (with `with_items`) and its `Para` impl; with `analysed` `None` (its
/// body was refused, the errors emitted beside), the impl's bodies are stubs, so that code
/// using the model (`init`, `forward`, a `Learner`) type-checks and adds no error of its own.
pub fn para(m: &ParaModel, analysed: Option<&Analysed>, with_items: bool) -> TokenStream {
    let ParaModel {
        item,
        forward,
        subs,
        configs,
        args,
        mutable,
        ret,
    } = m;
    let fields = m.fields();
    let field_types: Vec<&Type> = subs.iter().map(|f| &f.ty).collect();
    let config_names: Vec<Ident> = configs
        .iter()
        .map(|f| f.ident.clone().expect("named field"))
        .collect();
    let config_types: Vec<&Type> = configs.iter().map(|f| &f.ty).collect();
    let config_vis: Vec<&syn::Visibility> = configs.iter().map(|f| &f.vis).collect();
    let config_attrs: Vec<Vec<&syn::Attribute>> = configs
        .iter()
        .map(|f| {
            f.attrs
                .iter()
                .filter(|a| !a.path().is_ident("nodiff"))
                .collect()
        })
        .collect();
    let name = &item.ident;
    let params_name = format_ident!("{}Params", name);
    // The model's generics (`struct M<T: Real>`) are its parameter struct's too; the forward
    // function's (`fn forward<const B: usize>`) are the `Para` impl's.
    let (model_impl, model_ty, model_where) = item.generics.split_for_impl();
    let params = quote!(#params_name #model_ty);
    let mut impl_generics = item.generics.clone();
    impl_generics
        .params
        .extend(forward.sig.generics.params.iter().cloned());
    if let Some(w) = &forward.sig.generics.where_clause {
        impl_generics
            .make_where_clause()
            .predicates
            .extend(w.predicates.iter().cloned());
    }
    let (para_impl, _, para_where) = impl_generics.split_for_impl();
    let model_generics = &item.generics;
    let model_where_clause = &item.generics.where_clause;

    let vis = &item.vis;
    let attrs = &item.attrs;
    // Sub-models are initialised at the model's scalar (`InitAt<T>`, which every `Init`
    // type has): a `#[lens]` type generic over its scalar has no one `Init`.
    let scalar = model_scalar(&item.generics, &forward.sig);
    let init_at = quote!(#RT::InitAt<#scalar>);
    let param_types: Vec<TokenStream> = field_types
        .iter()
        .map(|t| quote!(<#t as #init_at>::Param))
        .collect();
    let sweeps = analysed.map(|analysed| {
        let Analysed {
            vars,
            body,
            arg_ids,
            ..
        } = analysed;
        let again = crate::analyse::read_again(body);
        let after = crate::analyse::read_after_loops(body);
        let mut cx = Cx::new(vars, Some(&params), None, &again, None, &after);
        cx.subs = &fields;
        // The same body for `vjp_params`: no change for the arguments.
        let mut cx_params = Cx::new(vars, Some(&params), Some(arg_ids), &again, None, &after);
        cx_params.subs = &fields;
        // Sub-models add their parameter changes into the caller's buffer (`__dp`); the
        // body's pullback returns only the inputs' changes.
        let mut returns: Vec<Ret> = Vec::new();
        for ((_, t), id) in args.iter().zip(arg_ids) {
            if nodiff_type(t) {
                returns.push(Ret::Unit);
            } else {
                returns.push(Ret::Var(*id, Some(t)));
            }
        }
        let body_tokens = block(&cx, body, &returns, None, Some(ret), None, true);
        let params_body_tokens = block(&cx_params, body, &[], None, Some(ret), None, true);
        (body_tokens, params_body_tokens)
    });

    let arg_names: Vec<&Ident> = args.iter().map(|(i, _)| i).collect();
    let arg_types: Vec<&Type> = args.iter().map(|(_, t)| t).collect();
    let arg_pats: Vec<TokenStream> = arg_names
        .iter()
        .zip(mutable)
        .map(|(i, m)| if *m { quote!(mut #i) } else { quote!(#i) })
        .collect();
    let (in_ty, in_pat) = match args.len() {
        1 => {
            let t = &args[0].1;
            let p = &arg_pats[0];
            (quote!(#t), quote!(#p))
        }
        _ => (quote!((#(#arg_types),*)), quote!((#(#arg_pats),*))),
    };
    let ags: Vec<Ident> = (0..args.len())
        .map(|i| format_ident!("__ga{}", i))
        .collect();
    let in_changes: Vec<TokenStream> = args
        .iter()
        .zip(&ags)
        .map(|((_, t), g)| {
            if nodiff_type(t) {
                quote!({
                    use #RT::{NoChangeData as _, NoChangeTangent as _};
                    (&&#RT::NoChangeOf::<#t>::new()).lens_no_change()
                })
            } else {
                quote!(#g)
            }
        })
        .collect();
    let in_changes = match in_changes.as_slice() {
        [one] => one.clone(),
        many => quote!((#(#many),*)),
    };
    // Rewritten by `written::rewrite_para` (its operations through their rules, its
    // sub-model calls as forwards).
    let forward_body = &forward.block;
    let allow = allows();
    let sweep_allow = super::sweep_allows();
    let field_vis: Vec<&syn::Visibility> = subs.iter().map(|f| &f.vis).collect();
    let field_attrs: Vec<&Vec<syn::Attribute>> = subs.iter().map(|f| &f.attrs).collect();
    // The names the derived `Tensors` gives the fields (raw identifiers unraw'd).
    let field_names: Vec<String> = fields
        .iter()
        .map(|f| syn::ext::IdentExt::unraw(f).to_string())
        .collect();
    let doc_params = format!("The parameters of [`{name}`]: one field per sub-model.");

    // The model derives Clone, Copy, Debug and Default unless the user chose its derives
    // (sub-models holding buffers, like span layers, are not Copy).
    let derives = if attrs.iter().any(|a| a.path().is_ident("derive")) {
        TokenStream::new()
    } else {
        quote!(#[derive(Clone, Copy, Debug, Default)])
    };
    let rt = RT;
    let input_checks = input_checks(subs);
    let items = with_items.then(|| {
        quote! {
            #(#attrs)*
            #derives
            #vis struct #name #model_generics #model_where_clause {
                #(#(#field_attrs)* #field_vis #fields: #field_types,)*
                #(#(#config_attrs)* #config_vis #config_names: #config_types,)*
            }

            #[doc = #doc_params]
            #[derive(Clone, Debug, PartialEq, ::paralens::Tangent)]
            #vis struct #params_name #model_generics #model_where_clause {
                #(#[doc = "The parameters of this sub-model."] pub #fields: #param_types,)*
            }

            impl #model_impl #params #model_where {
                #input_checks
            }

            impl #model_impl #RT::Init for #name #model_ty #model_where {
                type Param = #params;
                fn init_with<__R: #RT::Rng + ?Sized>(&self, rng: &mut __R) -> #params {
                    #params_name { #(#fields: <_ as #init_at>::init_at_with(&self.#fields, rng),)* }
                }
                #RT::with_checkpoints! {
                    fn layout(&self, path: &str, layout: &mut #RT::Layout) {
                        #(<_ as #init_at>::layout_at(
                            &self.#fields,
                            &#rt::checkpoint_join(path, #field_names),
                            layout,
                        );)*
                    }
                }
            }
        }
    });
    let Some((body_tokens, params_body_tokens)) = sweeps else {
        // Never run: the crate does not compile (the refusal is emitted beside).
        let refused = quote!(::core::unreachable!(
            "a `para!` model whose body was refused"
        ));
        return quote! {
            #items

            #[allow(unreachable_code, unused_variables)]
            impl #para_impl #RT::Para<#in_ty> for #name #model_ty #para_where {
                type Param = #params;
                type Out = #ret;
                fn forward(&self, __p: &#params, __x: #in_ty) -> #ret {
                    #refused
                }
                fn vjp(&self, __p: &#params, __x: #in_ty) -> (#ret, impl FnOnce(#ret, &mut #params) -> #in_ty) {
                    (#refused, |_, _| #refused)
                }
                fn vjp_params(&self, __p: &#params, __x: #in_ty) -> (#ret, impl FnOnce(#ret, &mut #params)) {
                    (#refused, |_, _| #refused)
                }
            }
        };
    };
    quote! {
        #items

        impl #para_impl #RT::Para<#in_ty> for #name #model_ty #para_where {
            type Param = #params;
            type Out = #ret;

            #[inline]
            #allow
            fn forward(&self, __p: &#params, __x: #in_ty) -> #ret {
                let #in_pat = __x;
                #forward_body
            }

            #[inline]
            #sweep_allow
            fn vjp(&self, __p: &#params, __x: #in_ty) -> (#ret, impl FnOnce(#ret, &mut #params) -> #in_ty) {
                let #in_pat = __x;
                let (__y, __pb) = #body_tokens;
                (__y, move |__d: #ret, __dp: &mut #params| {
                    let (#(#ags,)*) = __pb(__d, __dp);
                    #in_changes
                })
            }

            #[inline]
            #sweep_allow
            fn vjp_params(&self, __p: &#params, __x: #in_ty) -> (#ret, impl FnOnce(#ret, &mut #params)) {
                let #in_pat = __x;
                let (__y, __pb) = #params_body_tokens;
                (__y, move |__d: #ret, __dp: &mut #params| {
                    let () = __pb(__d, __dp);
                })
            }
        }
    }
}

/// The model's scalar: its first type parameter bounded by `Real` (or `Float`, inline or in
/// the where clause), else the first float type (`f32` or `f64`) that the forward function's signature
/// names, else its one type parameter; `ModelScalarNotFound` when there is none of these.
fn model_scalar(generics: &syn::Generics, sig: &syn::Signature) -> TokenStream {
    let bounded = crate::analyse::scalar_type_params(generics);
    // Of several, the first: a layer meant for another one is then a type mismatch at its
    // call, not a failed initialisation reported at every use of its parameter type.
    if let Some(first) = bounded.first() {
        return quote!(#first);
    }
    let mut floats: Vec<String> = Vec::new();
    let mut scan = |ts: TokenStream| {
        fn walk(ts: TokenStream, out: &mut Vec<String>) {
            for t in ts {
                match t {
                    proc_macro2::TokenTree::Ident(i) if i == "f32" || i == "f64" => {
                        let s = i.to_string();
                        if !out.contains(&s) {
                            out.push(s);
                        }
                    }
                    proc_macro2::TokenTree::Group(g) => walk(g.stream(), out),
                    _ => {}
                }
            }
        }
        walk(ts, &mut floats);
    };
    for input in &sig.inputs {
        if let syn::FnArg::Typed(pt) = input {
            scan(pt.ty.to_token_stream());
        }
    }
    scan(sig.output.to_token_stream());
    let all: Vec<&Ident> = generics.type_params().map(|t| &t.ident).collect();
    match (floats.first(), all.as_slice()) {
        (Some(first), _) => {
            let i = Ident::new(first, proc_macro2::Span::call_site());
            quote!(#i)
        }
        (None, [one]) => quote!(#one),
        _ => quote!(#RT::ModelScalarNotFound),
    }
}

/// The struct as written minus the `#[nodiff]` markers of its fields, emitted when the model
/// has errors, so that its callers still compile and no second error names the marker.
/// Type parameters no field names get the marker field the error asks for, so that rustc
/// does not report them a second time (a caller that builds the model is then told the
/// field is missing, as the error says).
pub fn without_markers(item: &syn::ItemStruct) -> TokenStream {
    let unused: Vec<Ident> = crate::validate::unused_type_params(item)
        .into_iter()
        .cloned()
        .collect();
    let mut item = item.clone();
    for f in item.fields.iter_mut() {
        f.attrs.retain(|a| !a.path().is_ident("nodiff"));
    }
    let field = Ident::new(
        crate::validate::marker_field(&item),
        proc_macro2::Span::call_site(),
    );
    if let (false, syn::Fields::Named(named)) = (unused.is_empty(), &mut item.fields) {
        let marked = match unused.as_slice() {
            [one] => quote!(#one),
            many => quote!((#(#many),*)),
        };
        named.named.push(syn::parse_quote!(
            #field: ::core::marker::PhantomData<#marked>
        ));
    }
    item.to_token_stream()
}

/// `self.field(args)` in one of a `para!` model's bodies: the sub-model's `method` (`forward`,
/// `vjp`, `vjp_params`) on its input, checked first by the parameter struct's method named
/// after the field (see [`input_checks`]), with each argument spread over its first and last
/// token as written (`(a,).0`). The check has the same spans in the three bodies, and rustc
/// reports a mistake in it once, at the argument; the call after it has the check's span, so
/// an unmet `Para` bound is that one error too.
pub fn sub_model_call(
    field: &Ident,
    args: Vec<TokenStream>,
    ends: &[Option<(Span, Span)>],
    span: Span,
    method: &str,
) -> TokenStream {
    let mut spread: Vec<TokenStream> = args
        .into_iter()
        .zip(ends)
        .map(|(a, e)| match e {
            Some((first, last)) => spread_over(a, *first, *last),
            None => a,
        })
        .collect();
    let input = if spread.len() == 1 {
        spread.remove(0)
    } else {
        quote_spanned!(span=> (#(#spread,)*))
    };
    let method = Ident::new(method, span);
    let check = input_check_name(field);
    {
        let __rt = crate::rt::at(span);
        quote_spanned!(span=>
            #__rt::Para::#method(
                &self.#field,
                &__p.#field,
                __p.#check(&self.#field, #input),
            )
        )
    }
}

/// `(a,).0` with the parenthesis at `first` and the index at `last`: an expression whose
/// span, in rustc's errors, covers the argument as written.
fn spread_over(a: TokenStream, first: Span, last: Span) -> TokenStream {
    let mut tuple = Group::new(Delimiter::Parenthesis, quote_spanned!(first=> #a,));
    tuple.set_span(first);
    let index = syn::Index {
        index: 0,
        span: last,
    };
    quote_spanned!(last=> #tuple.#index)
}

/// The input check of the sub-model `field`: `input_of_field`, at the field's span. Not the
/// field's own name: an inherent method of that name would win over the parameter struct's
/// trait methods (`Tangent::scale` for a sub-model `scale`) in the user's module.
fn input_check_name(field: &Ident) -> Ident {
    format_ident!(
        "input_of_{}",
        syn::ext::IdentExt::unraw(field),
        span = field.span()
    )
}

/// One private method per sub-model on the parameter struct, named after its field: the
/// identity on an input the sub-model takes (`L: Para<X>`). A `para!` body passes each
/// sub-model's input through it, so that a wrong input is one error at the argument in all
/// three bodies, and rustc's notes ("method defined here", "required by a bound in
/// `ModelParams::input_of_field`") point at the field's declaration, not into the library.
pub fn input_checks(subs: &[syn::Field]) -> TokenStream {
    subs.iter()
        .map(|f| {
            let field = f.ident.as_ref().expect("named field");
            let span = field.span();
            let check = input_check_name(field);
            let allow = allowing(quote!(non_snake_case,));
            let bound = {
                let __rt = crate::rt::at(span);
                quote_spanned!(span=> #__rt::Para<__X>)
            };
            quote_spanned!(span=>
                #[doc(hidden)]
                #[inline(always)]
                #allow
                fn #check<__L: #bound, __X>(&self, _: &__L, input: __X) -> __X {
                    input
                }
            )
        })
        .collect()
}
