//! Parsing: the annotated function or the `para!` block into a small IR that keeps the
//! original syntax nodes (for spans).

use crate::errors::Errors;
use syn::parse::{Parse, ParseStream};
use syn::{
    Attribute, Block, FnArg, Generics, Ident, ItemFn, ItemStruct, Pat, ReturnType, Type, Visibility,
};

/// How an argument takes part in differentiation.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum ArgKind {
    /// Differentiated input: gets a change back.
    Diff,
    /// Not differentiated (integers, `bool`, `usize`, `Option`s, references, `#[nodiff]`).
    NoDiff,
    /// Differentiated parameter (`#[param]`): part of the `Para` parameter port.
    Param,
}

/// One argument of a lens function.
pub struct Arg {
    pub ident: Ident,
    pub ty: Type,
    /// As declared by the markers, then as decided by [`crate::validate`].
    pub kind: ArgKind,
    /// Declared `mut x: T`: the body may assign it.
    pub mutable: bool,
    /// The `#[param]` marker, if written.
    pub param: Option<Attribute>,
    /// The `#[nodiff]` marker, if written.
    pub nodiff: Option<Attribute>,
}

/// A function under `#[lens]`.
pub struct LensFn {
    /// The function as written, minus our argument attributes.
    pub original: ItemFn,
    pub vis: Visibility,
    pub name: Ident,
    pub generics: Generics,
    pub args: Vec<Arg>,
    pub ret: Type,
    pub body: Block,
    /// The name of the generated lens type, from `#[lens(name = ...)]`.
    pub type_name: Option<Ident>,
    /// The parameters' initialiser, from `#[lens(init = ...)]`.
    pub init: Option<syn::Path>,
}

/// Integer-like types that get no change (`u64` is a Z2 word and does).
const NODIFF_TYPES: &[&str] = &[
    "usize", "isize", "i8", "i16", "i32", "i64", "i128", "u8", "u16", "u32", "u128", "bool", "char",
];

/// `true` for the types that never get a change back. An `Option` is a setting whatever it
/// holds: no `Option` has a change type, so one is data without `#[nodiff]`.
pub fn nodiff_type(ty: &Type) -> bool {
    match ty {
        Type::Path(p) if p.qself.is_none() => {
            p.path
                .get_ident()
                .is_some_and(|i| NODIFF_TYPES.iter().any(|n| i == n))
                || p.path.segments.last().is_some_and(|s| {
                    s.ident == "Option"
                        && matches!(s.arguments, syn::PathArguments::AngleBracketed(_))
                })
        }
        Type::Reference(_) => true,
        Type::Paren(p) => nodiff_type(&p.elem),
        Type::Group(g) => nodiff_type(&g.elem),
        _ => false,
    }
}

/// `#[param]` and `#[nodiff]` take nothing: `#[nodiff(true)]` is a mistake, not a variant.
pub fn plain_marker(marker: &Attribute, errors: &mut Errors) {
    if !matches!(marker.meta, syn::Meta::Path(_)) {
        let name = quote::ToTokens::to_token_stream(marker.path());
        errors.at(
            &marker.meta,
            format!("`#[{name}]` takes no arguments; write `#[{name}]`"),
        );
    }
}

fn take_marker(attrs: &mut Vec<Attribute>, name: &str) -> Option<Attribute> {
    let i = attrs.iter().position(|a| a.path().is_ident(name))?;
    Some(attrs.remove(i))
}

/// Reads a function under `#[lens]`: its arguments with their markers, as declared (the
/// rules they must meet are [`crate::validate`]'s); records what it cannot read in `errors`.
pub fn lens_fn(mut item: ItemFn, errors: &mut Errors) -> LensFn {
    let mut args = Vec::new();
    for input in &mut item.sig.inputs {
        match input {
            FnArg::Receiver(r) => errors.at(
                &*r,
                "`#[lens]` functions take no `self`; declare a model with sub-models with `para!`",
            ),
            FnArg::Typed(pt) => {
                let param = take_marker(&mut pt.attrs, "param");
                let nodiff = take_marker(&mut pt.attrs, "nodiff");
                for marker in param.iter().chain(&nodiff) {
                    plain_marker(marker, errors);
                }
                let (ident, mutable) = match &*pt.pat {
                    Pat::Ident(pi) if pi.by_ref.is_none() && pi.subpat.is_none() => {
                        (pi.ident.clone(), pi.mutability.is_some())
                    }
                    other => {
                        errors.at(
                            other,
                            "name each argument of a `#[lens]` function (`x: T`); destructure it in the body with `let`",
                        );
                        continue;
                    }
                };
                let kind = match (&param, &nodiff) {
                    (Some(_), _) => ArgKind::Param,
                    (None, Some(_)) => ArgKind::NoDiff,
                    (None, None) => ArgKind::Diff,
                };
                args.push(Arg {
                    ident,
                    ty: (*pt.ty).clone(),
                    kind,
                    mutable,
                    param,
                    nodiff,
                });
            }
        }
    }
    let ret = match &item.sig.output {
        ReturnType::Type(_, t) => (**t).clone(),
        ReturnType::Default => {
            errors.at(
                &item.sig,
                "a `#[lens]` function must return a value (`-> T`)",
            );
            syn::parse_quote!(())
        }
    };
    LensFn {
        vis: item.vis.clone(),
        name: item.sig.ident.clone(),
        generics: item.sig.generics.clone(),
        args,
        ret,
        body: (*item.block).clone(),
        original: item,
        type_name: None,
        init: None,
    }
}

/// The arguments of `#[lens(...)]`.
#[derive(Default)]
pub struct LensAttr {
    /// `name = TypeName`: the lens type's name.
    pub name: Option<Ident>,
    /// `init = path`: the function drawing the parameters of a lens type with `#[param]`
    /// arguments (`fn(&mut R) -> Params` for any `R: Rng + ?Sized`).
    pub init: Option<syn::Path>,
}

/// Parses `#[lens(name = TypeName, init = path)]` (both optional, in any order).
pub fn lens_attr(attr: proc_macro2::TokenStream, errors: &mut Errors) -> LensAttr {
    if attr.is_empty() {
        return LensAttr::default();
    }
    let parsed = syn::parse::Parser::parse2(
        |input: ParseStream| {
            let mut out = LensAttr::default();
            while !input.is_empty() {
                let key: Ident = input.parse()?;
                input.parse::<syn::Token![=]>()?;
                match key.to_string().as_str() {
                    "name" => out.name = Some(input.parse()?),
                    "init" => out.init = Some(input.parse()?),
                    _ => {
                        return Err(syn::Error::new_spanned(
                            &key,
                            format!(
                                "unknown `#[lens]` argument `{key}`: they are `name = TypeName` and `init = path::to::function`; mark arguments with `#[param]` or `#[nodiff]`"
                            ),
                        ));
                    }
                }
                if !input.is_empty() {
                    input.parse::<syn::Token![,]>()?;
                }
            }
            Ok(out)
        },
        attr,
    );
    match parsed {
        Ok(a) => a,
        Err(e) => {
            errors.push(e);
            LensAttr::default()
        }
    }
}

/// The input of `para!`: a struct of sub-models and its forward function.
pub struct ParaDef {
    pub item: ItemStruct,
    /// One or more forward functions: one `Para` impl each, on its own input type (the same
    /// cell on static and on heap matrices).
    pub forwards: Vec<ItemFn>,
}

impl Parse for ParaDef {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let item: ItemStruct = input.parse()?;
        let mut forwards = vec![input.parse::<ItemFn>()?];
        while !input.is_empty() {
            if !input.peek(syn::Token![fn]) && !input.peek(syn::Token![#]) {
                return Err(input.error(
                    "`para!` takes one struct and one or more `fn forward(&self, ...)` (one per input type); move other items outside",
                ));
            }
            forwards.push(input.parse()?);
        }
        Ok(Self { item, forwards })
    }
}

/// A `para!` model, read and checked: its sub-model fields, its `#[nodiff]` configuration
/// fields, and the forward function's inputs and output.
pub struct ParaModel {
    /// The struct as written.
    pub item: ItemStruct,
    /// The forward function as written.
    pub forward: ItemFn,
    /// Sub-model fields.
    pub subs: Vec<syn::Field>,
    /// `#[nodiff]` configuration fields (a scale, a flag) the body reads as data.
    pub configs: Vec<syn::Field>,
    /// The forward function's inputs after `&self`.
    pub args: Vec<(Ident, Type)>,
    /// Whether each input is declared `mut`.
    pub mutable: Vec<bool>,
    /// The forward function's output.
    pub ret: Type,
}

impl ParaModel {
    /// The sub-models' names.
    pub fn fields(&self) -> Vec<Ident> {
        self.subs
            .iter()
            .map(|f| f.ident.clone().expect("named field"))
            .collect()
    }
}

/// Reads a `para!` struct with one of its forward functions; records what it cannot read in
/// `errors`. A struct without named fields cannot be a model: it comes back as the error, to
/// be emitted as written.
pub fn para_model(
    item: ItemStruct,
    forward: ItemFn,
    errors: &mut Errors,
) -> Result<ParaModel, Box<ItemStruct>> {
    let syn::Fields::Named(named) = &item.fields else {
        errors.at(
            &item.ident,
            "a `para!` model is a struct with named sub-model fields (`struct Mlp { l1: Dense<4, 16>, ... }`)",
        );
        return Err(Box::new(item));
    };
    // A `PhantomData` marker (a scalar no sub-model names) is data without `#[nodiff]`, as
    // are the types that never get a change (a count, a flag, an `Option`), as arguments of
    // a `#[lens]` function are; not a reference, which may be a borrowed sub-model.
    let is_config = |f: &syn::Field| {
        f.attrs.iter().any(|a| a.path().is_ident("nodiff"))
            || (nodiff_type(&f.ty) && !matches!(&f.ty, Type::Reference(_)))
            || matches!(&f.ty, Type::Path(p)
                if p.path.segments.last().is_some_and(|s| s.ident == "PhantomData"))
    };
    let subs: Vec<syn::Field> = named
        .named
        .iter()
        .filter(|f| !is_config(f))
        .cloned()
        .collect();
    let configs: Vec<syn::Field> = named
        .named
        .iter()
        .filter(|f| is_config(f))
        .cloned()
        .collect();
    let sig = &forward.sig;
    let mut args: Vec<(Ident, Type)> = Vec::new();
    let mut mutable = Vec::new();
    // The receiver is `validate`'s.
    for input in sig.inputs.iter().skip(1) {
        match input {
            FnArg::Typed(pt) => match &*pt.pat {
                Pat::Ident(pi) => {
                    args.push((pi.ident.clone(), (*pt.ty).clone()));
                    mutable.push(pi.mutability.is_some());
                }
                other => errors.at(other, "name each input (`x: T`)"),
            },
            FnArg::Receiver(r) => errors.at(r, "`self` can only come first"),
        }
    }
    let ret: Type = match &sig.output {
        ReturnType::Type(_, t) => (**t).clone(),
        ReturnType::Default => {
            errors.at(sig, "the forward function must return a value (`-> T`)");
            syn::parse_quote!(())
        }
    };
    Ok(ParaModel {
        item,
        forward,
        subs,
        configs,
        args,
        mutable,
        ret,
    })
}
