//! Validation: what parsing read, held to the rules the analysis and expansion rely on.
//! Each refusal is an error at the offending token, saying what to write instead.

use crate::errors::Errors;
use crate::parse::{ArgKind, LensFn, ParaModel, nodiff_type};
use syn::visit::Visit;
use syn::{FnArg, Signature, Type};

/// Checks a `#[lens]` function's signature and decides each argument's kind from its
/// markers and its type.
pub fn lens_fn(f: &mut LensFn, errors: &mut Errors) {
    check_signature(&f.original.sig, errors);
    capitalised_name(f, errors);
    for arg in &mut f.args {
        let (ident, ty) = (&arg.ident, &arg.ty);
        // A `#[nodiff]` argument may be `impl Fn(f64) -> f64`: data, named by no generated
        // type.
        if arg.nodiff.is_none() {
            opaque_types(ty, errors);
        }
        if let Type::Reference(r) = ty
            && r.mutability.is_some()
        {
            errors.at(
                ty,
                format!(
                    "mutation through `&mut` is not differentiated: take `{ident}` by value and return the new value"
                ),
            );
        }
        arg.kind = match (&arg.param, &arg.nodiff) {
            (Some(p), Some(_)) => {
                errors.at(p, "an argument cannot be both `#[param]` and `#[nodiff]`");
                ArgKind::NoDiff
            }
            (Some(_), None) if nodiff_type(ty) => {
                errors.at(
                    ty,
                    format!(
                        "`#[param]` on `{ident}: {}`: a parameter must receive changes, and this type gets none; use a float, a static matrix or a Z2 word (`u64`), or drop `#[param]`",
                        quote::quote!(#ty)
                    ),
                );
                ArgKind::NoDiff
            }
            (Some(_), None) => ArgKind::Param,
            (None, Some(_)) => ArgKind::NoDiff,
            (None, None) if matches!(ty, Type::Reference(r) if r.mutability.is_none()) => {
                // A borrowed argument cannot give a change back: say so rather than hand
                // back a silent zero.
                errors.at(
                    ty,
                    format!(
                        "a borrowed argument gets no change back: take `{ident}: {}` by value to differentiate it, or mark it `#[nodiff]` if it is data",
                        type_text(ty).trim_start_matches('&')
                    ),
                );
                ArgKind::NoDiff
            }
            (None, None) if nodiff_type(ty) => ArgKind::NoDiff,
            (None, None) => ArgKind::Diff,
        };
    }
}

/// Checks a `para!` model's struct: no lifetimes (reported once, whatever the number of
/// forward functions).
pub fn para_struct(item: &syn::ItemStruct, errors: &mut Errors) {
    if let Some(l) = item.generics.lifetimes().next() {
        errors.at(
            l,
            "a `para!` model owns its sub-models and takes no lifetime parameters",
        );
    }
    // A scalar field cannot be a sub-model (it has no `Para`): without this, one missing
    // `#[nodiff]` was some seventy errors about `Init` and the parameter struct. Scalars are
    // `f32`, `f64`, a `u64` (a Z2 word) and the model's own scalar type parameters.
    let scalars = crate::analyse::scalar_type_params(&item.generics);
    for a in item.fields.iter().flat_map(|f| &f.attrs) {
        if a.path().is_ident("nodiff") {
            crate::parse::plain_marker(a, errors);
        }
    }
    for f in &item.fields {
        let is_scalar = matches!(&f.ty, Type::Path(p) if p.qself.is_none()
        && p.path.get_ident().is_some_and(|i| {
            i == "f32" || i == "f64" || i == "u64" || scalars.contains(&i)
        }));
        if is_scalar && !f.attrs.iter().any(|a| a.path().is_ident("nodiff")) {
            let name = f
                .ident
                .as_ref()
                .map_or_else(String::new, |i| format!("{i}: "));
            let ty = quote::ToTokens::to_token_stream(&f.ty);
            errors.at(
                &f.ty,
                format!(
                    "`{name}{ty}` is not a sub-model: mark a configuration value `#[nodiff]` (`#[nodiff] {name}{ty}`), read as data by the forward function; a learned scalar is a parameter of a sub-model (a `#[lens]` function with a `#[param]` argument)"
                ),
            );
        }
    }
    // rustc's own E0392 here came with two errors from the derives, and its hint
    // (`PhantomData`) did not say that such a field is data, not a sub-model. One error for
    // all of them, naming the one field that `without_markers` adds.
    let unused = unused_type_params(item);
    if let Some(first) = unused.first() {
        let names: Vec<String> = unused.iter().map(|t| format!("`{t}`")).collect();
        let marked = match unused.as_slice() {
            [one] => one.to_string(),
            many => format!(
                "({})",
                many.iter()
                    .map(|t| t.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        };
        let field = marker_field(item);
        errors.at(
            first,
            format!(
                "no field of the model names {} (a `#[lens]` layer generic over its scalar does not): add the marker field `{field}: core::marker::PhantomData<{marked}>`, read as data, not a sub-model, and build the model with `{field}: PhantomData`",
                names.join(" or ")
            ),
        );
    }
}

/// The name of the marker field for unused type parameters: `_scalar`, unless a field has it.
pub fn marker_field(item: &syn::ItemStruct) -> &'static str {
    if item
        .fields
        .iter()
        .any(|f| f.ident.as_ref().is_some_and(|i| i == "_scalar"))
    {
        "_scalar_marker"
    } else {
        "_scalar"
    }
}

/// The struct's type parameters that none of its fields' types names.
pub fn unused_type_params(item: &syn::ItemStruct) -> Vec<&syn::Ident> {
    item.generics
        .type_params()
        .map(|t| &t.ident)
        .filter(|i| {
            !item.fields.iter().any(|f| {
                crate::analyse::mentions(quote::ToTokens::to_token_stream(&f.ty), &i.to_string())
            })
        })
        .collect()
}

/// Checks one forward function of a `para!` model: `&self` first.
pub fn para_forward(m: &ParaModel, errors: &mut Errors) {
    let sig = &m.forward.sig;
    match sig.inputs.first() {
        Some(FnArg::Receiver(r)) if r.reference.is_some() && r.mutability.is_none() => {}
        _ => errors.at(
            sig,
            "the function in `para!` takes `&self` first: `fn forward(&self, x: T) -> U`",
        ),
    }
}

/// Refuses bindings whose names begin with `__` in a function the macros expand (its arguments
/// and its body): the generated code names its adjoints, pullbacks, temporaries and indices
/// so, and a user binding of one of those names, read by the reverse sweep in its place, could
/// change a gradient without any error.
pub fn reserved_names(f: &syn::ItemFn, errors: &mut Errors) {
    let mut v = Reserved {
        errors,
        in_signature: true,
    };
    v.visit_signature(&f.sig);
    v.in_signature = false;
    v.visit_block(&f.block);
}

struct Reserved<'e> {
    errors: &'e mut Errors,
    /// Visiting the signature: a marker there is on an input of a `para!` forward function
    /// (a `#[lens]` function's arguments have theirs taken off by then).
    in_signature: bool,
}

impl<'ast> Visit<'ast> for Reserved<'_> {
    fn visit_pat_ident(&mut self, p: &'ast syn::PatIdent) {
        let name = syn::ext::IdentExt::unraw(&p.ident).to_string();
        if name.starts_with("__") {
            self.errors.at(
                &p.ident,
                format!(
                    "names beginning with `__` are reserved for the code the macro generates (adjoints, pullbacks, temporaries); rename `{name}`, for example to `{}`",
                    match name.trim_start_matches('_') {
                        "" => "value",
                        rest => rest,
                    }
                ),
            );
        }
        syn::visit::visit_pat_ident(self, p);
    }

    // `#[nodiff]` or `#[param]` inside the body (on a `let`): they mark arguments only.
    fn visit_attribute(&mut self, a: &'ast syn::Attribute) {
        for name in ["nodiff", "param"] {
            if a.path().is_ident(name) {
                let message = if self.in_signature {
                    format!(
                        "the inputs of a `para!` forward function are all differentiated, and `#[{name}]` is not read here; put a configuration value in a `#[nodiff]` field of the model, and a learned value in a sub-model"
                    )
                } else {
                    format!(
                        "`#[{name}]` marks an argument of the function (or a field of a `para!` model), not a value in its body; a value computed only from data is data already: remove the marker"
                    )
                };
                self.errors.at(a, message);
            }
        }
    }

    // Items declared inside the body are not expanded: their names are their own.
    fn visit_item(&mut self, _: &'ast syn::Item) {}
}

fn check_signature(sig: &Signature, errors: &mut Errors) {
    if let Some(t) = &sig.constness {
        errors.at(t, "`#[lens]` does not support `const fn`: its generated reverse is not `const`; remove `const`");
    }
    if let Some(t) = &sig.asyncness {
        errors.at(t, "`#[lens]` does not support `async fn`: a lens is a plain function of values; remove `async`");
    }
    if let Some(t) = &sig.unsafety {
        errors.at(t, "`#[lens]` does not support `unsafe fn`: remove `unsafe` and keep any `unsafe` block outside the lens");
    }
    if let Some(t) = &sig.variadic {
        errors.at(t, "`#[lens]` does not support variadic functions");
    }
    if let syn::ReturnType::Type(_, ty) = &sig.output {
        opaque_types(ty, errors);
    }
    if let Some(l) = sig.generics.lifetimes().next() {
        errors.at(
            l,
            "`#[lens]` functions take no named lifetime: write a borrowed argument with its lifetime elided (`#[nodiff] m: &SVector<f64, 3>`), and remove the lifetime parameter",
        );
    }
}

/// Refuses the `impl Trait` types in `ty`, the type of a differentiated value (rustc gave
/// eight errors, five at `#[lens]`).
fn opaque_types(ty: &Type, errors: &mut Errors) {
    let mut opaque = ImplTraits(Vec::new());
    opaque.visit_type(ty);
    for t in opaque.0 {
        errors.at(
            &t,
            format!(
                "a differentiated value's type is named: write a type parameter instead of `{}` (`fn f<T: Real>(x: T) -> T`), or mark a data argument `#[nodiff]`",
                type_text(&Type::ImplTrait(t.clone()))
            ),
        );
    }
}

/// The `impl Trait` types of a type.
struct ImplTraits(Vec<syn::TypeImplTrait>);

impl<'ast> Visit<'ast> for ImplTraits {
    fn visit_type_impl_trait(&mut self, t: &'ast syn::TypeImplTrait) {
        self.0.push(t.clone());
    }
}

/// A type as a person writes it (`SVector<f64, 3>`, not `SVector < f64 , 3 >`).
fn type_text(ty: &Type) -> String {
    let raw = quote::quote!(#ty).to_string();
    let mut out = String::with_capacity(raw.len());
    for (i, part) in raw.split(' ').enumerate() {
        let glue = matches!(part, "<" | ">" | "," | "::" | ">>")
            || out.ends_with('<')
            || out.ends_with("::")
            || out.ends_with('&');
        if i > 0 && !glue {
            out.push(' ');
        }
        out.push_str(part);
    }
    out
}

/// A call is classified by its syntax (`analyse::capitalised`): `Gain(x)` in a `#[lens]` body
/// builds a tuple struct, so a `#[lens]` function named so would never be called through its
/// reverse. Refused at its name, with the name to give it.
fn capitalised_name(f: &LensFn, errors: &mut Errors) {
    let ident = &f.original.sig.ident;
    if !crate::analyse::capitalised(ident) {
        return;
    }
    let name = ident.to_string();
    // `FooBar` and `FOO_BAR` -> `foo_bar`.
    let mut snake = String::new();
    let mut previous_lower = false;
    for c in name.chars() {
        if c.is_uppercase() && previous_lower {
            snake.push('_');
        }
        previous_lower = c.is_lowercase() || c.is_ascii_digit();
        snake.extend(c.to_lowercase());
    }
    let lens_type = match &f.type_name {
        Some(t) => format!("its lens type stays `{t}`"),
        None => format!(
            "its lens type is then `{}`",
            crate::expand::camel(&syn::Ident::new(&snake, ident.span()))
        ),
    };
    errors.at(
        ident,
        format!(
            "a `#[lens]` function's name must start with a lower-case letter: a call `{name}(..)` in a `#[lens]` body builds a tuple struct, it does not call this function; rename it `{snake}` ({lens_type})"
        ),
    );
}
