//! What every emitter of a `#[lens]` function reads, computed once from its signature: the
//! generated names, the arguments' patterns and types, the pullback's slots and the split of
//! the arguments into parameters and inputs.

use super::{camel, tuple_or_single};
use crate::analyse::mentions;
use crate::parse::{ArgKind, LensFn};
use crate::rt::RT;
use proc_macro2::TokenStream;
use quote::{ToTokens, format_ident, quote};
use syn::ext::IdentExt;
use syn::{Ident, Type};

pub struct Sig<'f> {
    pub f: &'f LensFn,
    /// `name_vjp` and `name_rev`, at the function's name: a call with an argument of the
    /// wrong type shows the same definition for them as for the function as written
    /// (`r#match` gives `match_vjp`).
    pub vjp: Ident,
    pub rev: Ident,
    /// The lens type's name (`Match`), and the module of its own it lives in.
    pub ty_name: Ident,
    pub module: Ident,
    /// The const generics the parameters' types name: the lens type's own.
    pub own_consts: Vec<&'f syn::ConstParam>,
    pub own_idents: Vec<&'f Ident>,
    /// The type's own generics as declared (no defaults: the same list serves an impl).
    pub own_decl: TokenStream,
    /// The lens type by its module path, with its own generics.
    pub ty_path: TokenStream,
    pub idents: Vec<&'f Ident>,
    /// `mut x` where the body may change forward-only data in place.
    pub arg_pats: Vec<TokenStream>,
    pub types: Vec<&'f Type>,
    /// The pullback's result: each argument's type where it gets a change, `()` elsewhere.
    pub slots_ty: TokenStream,
    /// The pullback's result bound by name (`__g0`, ...).
    pub slot_names: Vec<Ident>,
    pub slot_pat: TokenStream,
    /// `name_rev`'s output change: `d`, hygienic (mixed-site), so that the body's own `d`, a
    /// function or a constant of that name, still means what it means in the function as
    /// written; `__d_out` where an argument is named `d`.
    pub d_name: Ident,
    /// `name_rev`'s result type and value: only the differentiated slots.
    pub rev_ty: TokenStream,
    pub rev_val: TokenStream,
    /// The arguments that are `#[param]`s, and the others (the lens type's input).
    pub params: Vec<usize>,
    pub inputs: Vec<usize>,
    /// An argument is a reference: no lens type, and the pullback's captures are listed.
    pub borrows: bool,
}

impl<'f> Sig<'f> {
    pub fn new(f: &'f LensFn) -> Self {
        let LensFn { name, args, .. } = f;
        let vjp = format_ident!("{}_vjp", name.unraw(), span = name.span());
        let rev = format_ident!("{}_rev", name.unraw(), span = name.span());
        let ty_name = f.type_name.clone().unwrap_or_else(|| camel(name));
        // The lens type lives in a module of its own and is re-exported by a glob import,
        // which an item of the same name written by the user shadows without a clash; a
        // check then names `#[lens(name = ...)]`. The impls name it by its module path.
        let module = format_ident!("__lens_{}", name.unraw());
        // The const generics that the parameters' types name (the sizes of a layer's
        // weights) are the lens type's own: `fn scale<const N: usize>(#[param] w:
        // SVector<f64, N>, ..)` gives `Scale<const N: usize>`, still a unit struct, so that
        // one type has one parameter type (`Init`) and a size only the parameters name is
        // constrained by the type.
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
                syn::GenericParam::Const(c)
                    if mentions(param_tokens.clone(), &c.ident.to_string()) =>
                {
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
        let own_decl = if own_consts.is_empty() {
            TokenStream::new()
        } else {
            let decl = own_consts.iter().map(|c| {
                let (i, t) = (&c.ident, &c.ty);
                quote!(const #i: #t)
            });
            quote!(<#(#decl),*>)
        };
        let idents: Vec<&Ident> = args.iter().map(|a| &a.ident).collect();
        let arg_pats = args
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
        let types = args.iter().map(|a| &a.ty).collect();
        let d_name = if idents.iter().any(|i| *i == "d") {
            Ident::new("__d_out", proc_macro2::Span::mixed_site())
        } else {
            Ident::new("d", proc_macro2::Span::mixed_site())
        };
        let slot_names: Vec<Ident> = (0..args.len()).map(|i| format_ident!("__g{}", i)).collect();
        let slot_pat = tuple_or_single(&slot_names.iter().map(|g| quote!(#g)).collect::<Vec<_>>());
        let diff_idx: Vec<usize> = (0..args.len())
            .filter(|&i| args[i].kind != ArgKind::NoDiff)
            .collect();
        let (rev_ty, rev_val) = if diff_idx.is_empty() {
            (quote!(()), quote!(()))
        } else {
            let ty = diff_idx.iter().map(|&i| args[i].ty.to_token_stream());
            let val = diff_idx.iter().map(|&i| slot_names[i].to_token_stream());
            (
                tuple_or_single(&ty.collect::<Vec<_>>()),
                tuple_or_single(&val.collect::<Vec<_>>()),
            )
        };
        let mut sig = Sig {
            f,
            vjp,
            rev,
            ty_name,
            module,
            own_consts,
            own_idents,
            own_decl,
            ty_path,
            idents,
            arg_pats,
            types,
            slots_ty: TokenStream::new(),
            slot_names,
            slot_pat,
            d_name,
            rev_ty,
            rev_val,
            params: (0..args.len())
                .filter(|&i| args[i].kind == ArgKind::Param)
                .collect(),
            inputs: (0..args.len())
                .filter(|&i| args[i].kind != ArgKind::Param)
                .collect(),
            borrows: args.iter().any(|a| matches!(a.ty, Type::Reference(_))),
        };
        sig.slots_ty = sig.slots_where(|k| k != ArgKind::NoDiff);
        sig
    }

    /// A pullback's result: each argument's type where `changed` says it gets a change, `()`
    /// elsewhere.
    pub fn slots_where(&self, changed: impl Fn(ArgKind) -> bool) -> TokenStream {
        let types: Vec<TokenStream> = self
            .f
            .args
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
    }

    /// The arguments at `idx` as a part of the lens type's signature: their types, their
    /// names as a pattern, and their changes from the pullback's slots (a `#[nodiff]`
    /// argument's "no change" value).
    pub fn part(&self, idx: &[usize]) -> (TokenStream, TokenStream, TokenStream) {
        let args = &self.f.args;
        if idx.is_empty() {
            return (quote!(()), quote!(()), quote!(()));
        }
        let tys: Vec<TokenStream> = idx.iter().map(|&i| args[i].ty.to_token_stream()).collect();
        let pats: Vec<TokenStream> = idx
            .iter()
            .map(|&i| args[i].ident.to_token_stream())
            .collect();
        let changes: Vec<TokenStream> = idx
            .iter()
            .map(|&i| {
                let g = &self.slot_names[i];
                let ty = &args[i].ty;
                if args[i].kind == ArgKind::NoDiff {
                    quote!({
                        use #RT::{NoChangeData as _, NoChangeTangent as _};
                        (&&#RT::NoChangeOf::<#ty>::new()).lens_no_change()
                    })
                } else {
                    quote!(#g)
                }
            })
            .collect();
        (
            tuple_or_single(&tys),
            tuple_or_single(&pats),
            tuple_or_single(&changes),
        )
    }

    /// The pullback's captures where an argument borrows: it holds values, never the
    /// arguments' borrows (forward-only data a rule keeps is read as an owned copy:
    /// `rules::owned`), so it captures none of their elided lifetimes, and a caller may pass
    /// a borrow of its own local (`inner(x, &m)`) and return the pullback (in Rust 2024 an
    /// `impl` type captures every lifetime in scope by default: E0597 at the caller).
    pub fn captures(&self) -> TokenStream {
        if !self.borrows {
            return TokenStream::new();
        }
        let kept = self.f.generics.params.iter().map(|g| match g {
            syn::GenericParam::Lifetime(l) => l.lifetime.to_token_stream(),
            syn::GenericParam::Type(t) => t.ident.to_token_stream(),
            syn::GenericParam::Const(c) => c.ident.to_token_stream(),
        });
        quote!(+ use<#(#kept),*>)
    }
}
