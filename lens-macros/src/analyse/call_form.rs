//! What a call `p(args)` in a body is: one [`CallForm`] per form, decided from the call's
//! syntax and the bindings in scope, before anything is lowered or reported. Each form has
//! one lowering (`Analyser::call`); a refusal carries its error, built here.

use super::*;

/// The forms of a call, in the order they are recognised: the first that fits is the call's.
pub(super) enum CallForm<'c> {
    /// Refused with its error, the call kept as written (forward-only). `once`: the function
    /// as written's rewrite leaves the call alone (`Analyser::refused`), so that reading it
    /// again is not a second error.
    Refused { error: syn::Error, once: bool },
    /// `SMatrix::<T, R, C>::from_fn(|r, c| e)` of a nalgebra type: filled entry by entry.
    FromFn { path: &'c syn::Path },
    /// `SVector::<f64, 3>::repeat(x)` (or `from_element`) of a differentiated `x`: every
    /// entry is `x`, built as `from_fn(|_, _| x)` is.
    Repeat {
        path: &'c syn::Path,
        value: &'c Expr,
    },
    /// `SVector::new(a, b, c)`, `Vector3::<f64>::new(..)`, or `V3::new(..)` of a type named by
    /// a capital, which may be an alias of one (`rules::BuildRule` tells): built from entries.
    Constructor,
    /// `W(a, b)`, `geom::W(a, b)`: a tuple struct (deriving `Tangent`) built from values.
    TupleStruct { path: &'c syn::Path },
    /// `f64::max(x, y)`, `T::exp(x)`: a primitive of a scalar type called as a function,
    /// lowered as its method form.
    ScalarMethod {
        method: &'c Ident,
        receiver: &'c Expr,
    },
    /// `f64::signum(x)`, `f64::floor(x)`: forward-only data, as the method forms are.
    ScalarData,
    /// `g(x)`, `m::g(x)`, `Type::g(x)`: a `#[lens]` function or one with a reverse. A
    /// function's reverse is its `_lens_vjp`, tied to it (`crate::tie`); an associated
    /// function of a type (`type_relative`: `Type::g`, `T::g`, `R::sin` through an alias)
    /// has its `Type::g_vjp` resolved on the same type.
    Lens {
        path: &'c syn::Path,
        type_relative: bool,
    },
}

impl Analyser<'_> {
    /// The form of the call `c`.
    pub(super) fn call_form<'c>(&self, c: &'c syn::ExprCall) -> CallForm<'c> {
        let refused = |at: &dyn ToTokens, msg: String| CallForm::Refused {
            error: syn::Error::new_spanned(at, msg),
            once: false,
        };
        let refused_once = |at: &dyn ToTokens, msg: String| CallForm::Refused {
            error: syn::Error::new_spanned(at, msg),
            once: true,
        };
        let Expr::Path(p) = &*c.func else {
            return refused(
                &c.func,
                "only calls of named `#[lens]` functions are differentiated".into(),
            );
        };
        if p.qself.is_some() {
            return refused(
                p,
                "qualified paths (`<T as Trait>::f`) are not supported; call a `#[lens]` function by name".into(),
            );
        }
        let path = &p.path;
        let segments: Vec<&syn::PathSegment> = path.segments.iter().collect();
        let reads_diff = self.mentions_diff(c.args.to_token_stream());
        let written = |path: &syn::Path| path.to_token_stream().to_string().replace(' ', "");
        // The function calling itself with differentiated values (`f(x.sin(), n - 1)`, also
        // `f::<T>(..)`, `self::f(..)`): its reverse would hold its own pullback, a type of no
        // finite size (rustc said only "cannot resolve opaque type" at `#[lens]`). A call on
        // data alone is data, as any call is.
        if let (Some(own), Some(last)) = (&self.own_name, segments.last())
            && syn::ext::IdentExt::unraw(&last.ident) == own.as_str()
            && segments
                .iter()
                .rev()
                .skip(1)
                .all(|s| s.ident == "self" || s.ident == "crate" || s.ident == "super")
            && reads_diff
        {
            return refused_once(
                &c.func,
                "a `#[lens]` function cannot call itself: its reverse would hold its own pullback, a type of no finite size; write the repetition as a `for` loop with a constant bound (`for _ in 0..N`), or call another `#[lens]` function".into(),
            );
        }
        // `Type::method(..)`: the type's and the method's segments, for the constructors.
        let (ty, method) = match segments.as_slice() {
            [.., ty, last] => (Some(*ty), last.ident.to_string()),
            _ => (None, String::new()),
        };
        let nalgebra = ty.is_some_and(|t| is_nalgebra_type(&t.ident));
        let capital = ty.is_some_and(|t| capitalised(&t.ident));
        if method == "from_fn" && nalgebra {
            return CallForm::FromFn { path };
        }
        if (method == "repeat" || method == "from_element")
            && nalgebra
            && let [value] = c.args.iter().collect::<Vec<_>>().as_slice()
            && self.mentions_diff(value.to_token_stream())
        {
            // The loops that fill it need the shape written in the call.
            if ty.is_some_and(|t| !matches!(t.arguments, syn::PathArguments::AngleBracketed(_))) {
                return refused(&c.func, shape_in_call(&method));
            }
            return CallForm::Repeat { path, value };
        }
        // `V3::from_fn(..)` of a type not known by name (an alias) whose entries read
        // differentiated values: the loops that fill it need the shape written in the call.
        if method == "from_fn" && capital && reads_diff {
            return refused(&c.func, shape_in_call(&method));
        }
        if method == "new"
            && (nalgebra || capital)
            && ty.is_some_and(|t| {
                ![
                    "Self", "Box", "Rc", "Arc", "Cell", "RefCell", "Vec", "String",
                ]
                .contains(&t.ident.to_string().as_str())
            })
        {
            // A shape written in the call that the entries do not fill: one error at them,
            // where rustc gave it twice (the function as written and the sweep), each with a
            // suggestion built from rewritten operands (`new(x, *, /* f64 */)`).
            if let Some((rows, cols)) = ty.and_then(super::syntax::written_shape)
                && rows * cols != c.args.len()
            {
                return CallForm::Refused {
                    error: syn::Error::new(
                        c.paren_token.span.join(),
                        entries_mismatch(rows, cols, c.args.len()),
                    ),
                    once: false,
                };
            }
            return CallForm::Constructor;
        }
        // A tuple struct also through a module path (`geom::W(a, b)`, `crate::W(..)`): the
        // segments before the struct's name are modules (not capitalised, no generics), not a
        // type (`Shape::Circle` is an enum's variant, refused below).
        if let Some(last) = segments.last()
            && capitalised(&last.ident)
            && !["Some", "Ok", "Err"].contains(&last.ident.to_string().as_str())
            && segments
                .iter()
                .rev()
                .skip(1)
                .all(|s| !capitalised(&s.ident) && matches!(s.arguments, syn::PathArguments::None))
        {
            return CallForm::TupleStruct { path };
        }
        if let Some((ty, method)) = self.float_path(path) {
            let name = method.to_string();
            if primitives::known(&name)
                && let Some(receiver) = c.args.first()
            {
                return CallForm::ScalarMethod { method, receiver };
            }
            if crate::primitives::NO_CHANGE.contains(&name.as_str()) {
                return CallForm::ScalarData;
            }
            // `f64::to_radians(x)`: a scalar type's method without a rule, refused as the
            // method form is (rustc said "no function `to_radians_vjp`").
            if !primitives::known(&name) && reads_diff {
                return refused(
                    method,
                    format!(
                        "no reverse rule for `{ty}::{name}`; supported: {}; or write it as a `#[lens]` function and call that",
                        primitives::supported_on_scalars()
                    ),
                );
            }
        }
        // `i32::abs(x)`: an integer type's function of a differentiated (float) value.
        if let [ty, method] = segments.as_slice()
            && SCALARS[2..].contains(&ty.ident.to_string().as_str())
            && reads_diff
        {
            return refused_once(
                &ty.ident,
                format!(
                    "`{}::{}` is an integer type's function, and a differentiated value is a float: write `f64::{}(..)` (or `f32::`), or the method form",
                    ty.ident, method.ident, method.ident
                ),
            );
        }
        // `l1(x)` in a `para!` model, for the sub-model `self.l1`.
        if let Some(name) = path.get_ident()
            && self.para
            && self.fields.contains(name)
            && self.lookup(&name.to_string()).is_none()
        {
            return refused_once(
                &c.func,
                format!(
                    "`{name}` is a sub-model of this model: call it as `self.{name}(..)` (a `#[lens]` function of the same name outside the model is called as `self::{name}(..)`)"
                ),
            );
        }
        // A call given `&mut` of a differentiated value (`mem::swap(&mut a, &mut b)`, also
        // imported as `swap(..)`, or a function of the user's): one error at the call,
        // saying how to write it; each `&mut` was refused on its own.
        if let Some(f) = segments.last()
            && c.args.iter().any(|a| {
                matches!(a, syn::Expr::Reference(r) if r.mutability.is_some()
                    && self.mentions_diff(r.expr.to_token_stream()))
            })
        {
            let advice = if ["swap", "replace", "take"].contains(&f.ident.to_string().as_str()) {
                format!(
                    "`{}` changes differentiated values through `&mut`, which the reverse sweep cannot follow: assign the bindings instead (`let t = a; a = b; b = t;`)",
                    written(path)
                )
            } else {
                format!(
                    "`{}` is given a differentiated value through `&mut`, which the reverse sweep cannot follow: make it return the new value and assign it (`a = {}(a, ..)`, a `#[lens]` function)",
                    written(path),
                    f.ident
                )
            };
            return refused_once(c, advice);
        }
        // `Some(x)`, `Ok(x)`, `Shape::Circle(x)` of a differentiated value: an enum's variant
        // (a tuple struct was recognised above); rustc said "cannot find `Some_vjp`".
        if let Some(last) = segments.last()
            && capitalised(&last.ident)
            && reads_diff
        {
            return refused_once(
                c,
                format!(
                    "`{}(..)` of a differentiated value: an enum's variant (`Some`, `Ok` and `Err` too) carries no change; pass the value itself, hold it in a struct deriving `Tangent`, or compute forward-only data (`x > 0.0`) in its own `let` first",
                    written(path)
                ),
            );
        }
        // `SVector::from([a, b])`, `SMatrix::from_row_slice(&[..])` of differentiated values:
        // no `from_vjp`; the constructors that are differentiated say so. nalgebra's types
        // only: another type's `from_*` may have a hand-written `from_*_vjp`.
        if let [.., ty, method] = segments.as_slice()
            && is_nalgebra_type(&ty.ident)
            && method.ident.to_string().starts_with("from")
            && reads_diff
        {
            return refused_once(
                &method.ident,
                format!(
                    "`{}::{}` is not differentiated: build a vector or matrix of differentiated values with `{}::new(a, b, ..)` (its entries, row by row) or `from_fn(|r, c| ..)`",
                    ty.ident, method.ident, ty.ident
                ),
            );
        }
        // `f(x)` of a local binding (a closure): no `f_vjp` to call.
        if let Some(name) = path.get_ident()
            && self.lookup(&name.to_string()).is_some()
        {
            return refused(
                &c.func,
                format!(
                    "`{name}` is a local binding (a closure?), and calling one is not differentiated; write it as a `#[lens]` function outside this one and call that"
                ),
            );
        }
        let type_relative = match segments.iter().rev().nth(1) {
            Some(seg) => {
                let q = seg.ident.to_string();
                q.starts_with(char::is_uppercase)
                    || SCALARS.contains(&q.as_str())
                    || self.type_params.contains(&q)
                    || q == "Self"
            }
            None => false,
        };
        CallForm::Lens {
            path,
            type_relative,
        }
    }
}

impl Analyser<'_> {
    /// `f64::name`, `f32::name` or `T::name` for a scalar type parameter `T`: the type and
    /// the method of a scalar's method called as a function (`f64::max(x, y)`).
    fn float_path<'p>(&self, path: &'p syn::Path) -> Option<(&'p Ident, &'p Ident)> {
        let [ty, method] = path.segments.iter().collect::<Vec<_>>()[..] else {
            return None;
        };
        (ty.ident == "f32" || ty.ident == "f64" || self.type_params.contains(&ty.ident.to_string()))
            .then_some((&ty.ident, &method.ident))
    }
}

/// The primitive number types: the two floats first, then the integers.
pub(super) const SCALARS: [&str; 14] = [
    "f32", "f64", "i8", "i16", "i32", "i64", "i128", "isize", "u8", "u16", "u32", "u64", "u128",
    "usize",
];

/// A type, a tuple struct or a variant named by a capital, not a function.
pub(crate) fn capitalised(ident: &Ident) -> bool {
    ident
        .to_string()
        .starts_with(|c: char| c.is_ascii_uppercase())
}

/// The error of `new` given `given` entries for a `rows` x `cols` value.
fn entries_mismatch(rows: usize, cols: usize, given: usize) -> String {
    let value = match (rows, cols) {
        (n, 1) => format!("a vector of {n} entries"),
        (1, n) => format!("a row vector of {n} entries"),
        (r, c) => format!("a {r}x{c} matrix ({} entries, row by row)", r * c),
    };
    let given = match given {
        1 => "1 value is given".to_string(),
        n => format!("{n} values are given"),
    };
    format!("`new` builds {value} from one value per entry, and {given}")
}

/// The error for a constructor filled by loops (`from_fn`, `repeat`) whose shape the call
/// does not write (left to inference, or behind an alias).
pub(super) fn shape_in_call(method: &str) -> String {
    let example = if method == "from_fn" {
        "|r, c| ..."
    } else {
        "x"
    };
    format!(
        "write the shape in the call, `SMatrix::<f64, R, C>::{method}({example})` or `SVector::<f64, N>::{method}({})`, not through an alias: its entries are filled by loops whose lengths must be constants",
        if method == "from_fn" {
            "|i, _| ..."
        } else {
            "x"
        }
    )
}
