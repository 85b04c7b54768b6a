//! Small questions about syntax: assignments, patterns, paths, nalgebra type names.

use proc_macro2::{Delimiter, TokenStream, TokenTree};
use syn::{BinOp, Expr, Ident, Pat, Path};

/// Whether `e` is an assignment (`x = e` or `x op= e`).
pub(super) fn is_assignment(e: &Expr) -> bool {
    match e {
        Expr::Assign(_) => true,
        Expr::Binary(b) => compound_op(&b.op).is_some(),
        _ => false,
    }
}

/// The operator of a compound assignment (`+` for `+=`), spanned at it.
pub fn compound_op(op: &BinOp) -> Option<BinOp> {
    Some(match op {
        BinOp::AddAssign(t) => BinOp::Add(syn::Token![+](t.spans[0])),
        BinOp::SubAssign(t) => BinOp::Sub(syn::Token![-](t.spans[0])),
        BinOp::MulAssign(t) => BinOp::Mul(syn::Token![*](t.spans[0])),
        BinOp::DivAssign(t) => BinOp::Div(syn::Token![/](t.spans[0])),
        BinOp::RemAssign(t) => BinOp::Rem(syn::Token![%](t.spans[0])),
        BinOp::BitXorAssign(t) => BinOp::BitXor(syn::Token![^](t.spans[0])),
        BinOp::BitAndAssign(t) => BinOp::BitAnd(syn::Token![&](t.spans[0])),
        BinOp::BitOrAssign(t) => BinOp::BitOr(syn::Token![|](t.spans[0])),
        BinOp::ShlAssign(t) => BinOp::Shl(syn::Token![<<](t.spans[0])),
        BinOp::ShrAssign(t) => BinOp::Shr(syn::Token![>>](t.spans[0])),
        _ => return None,
    })
}

/// What a branch runs, read in place: a block, an expression as the one statement of a
/// block (a `match` arm, an `else if`), or nothing (the missing `else`). Not a copy: the
/// function as written is rewritten at the nodes the analysis read (see `InPlace`).
#[derive(Clone, Copy)]
pub(super) enum Part<'a> {
    Block(&'a syn::Block),
    /// A block whose value is dropped (a loop's body, whose value is `()`): its last
    /// expression is one more statement, run for its effects (`n += 1`, `if c { k = i }`).
    Body(&'a syn::Block),
    Expr(&'a Expr),
    Empty,
}

/// The identifiers a pattern binds, with whether each is `mut`.
pub(super) fn pattern_bindings(pat: &Pat) -> Vec<(Ident, bool)> {
    let mut out = Vec::new();
    collect_bindings(pat, &mut out);
    out
}

pub(super) fn collect_bindings(pat: &Pat, out: &mut Vec<(Ident, bool)>) {
    match pat {
        Pat::Ident(pi) => {
            out.push((pi.ident.clone(), pi.mutability.is_some()));
            if let Some((_, sub)) = &pi.subpat {
                collect_bindings(sub, out);
            }
        }
        Pat::Tuple(t) => t.elems.iter().for_each(|p| collect_bindings(p, out)),
        Pat::TupleStruct(t) => t.elems.iter().for_each(|p| collect_bindings(p, out)),
        Pat::Struct(s) => s.fields.iter().for_each(|f| collect_bindings(&f.pat, out)),
        Pat::Slice(s) => s.elems.iter().for_each(|p| collect_bindings(p, out)),
        Pat::Or(o) => {
            if let Some(first) = o.cases.first() {
                collect_bindings(first, out);
            }
        }
        Pat::Paren(p) => collect_bindings(&p.pat, out),
        Pat::Reference(r) => collect_bindings(&r.pat, out),
        Pat::Type(t) => collect_bindings(&t.pat, out),
        _ => {}
    }
}

pub(super) fn is_self(t: &TokenTree) -> bool {
    match t {
        TokenTree::Ident(i) => i == "self",
        TokenTree::Group(g) => g.stream().into_iter().any(|t| is_self(&t)),
        _ => false,
    }
}

/// Whether the unparsed tokens of a macro call a sub-model: `self . field (...)` with `field`
/// one of `fields`, at any depth. Other uses of `self` (a configuration field printed or
/// asserted) are forward-only data, as they are outside a macro.
pub(super) fn tokens_call_sub(tokens: TokenStream, fields: &[Ident]) -> bool {
    let tts: Vec<TokenTree> = tokens.into_iter().collect();
    let calls_here = tts.windows(4).any(|w| match (&w[0], &w[1], &w[2], &w[3]) {
        (TokenTree::Ident(s), TokenTree::Punct(p), TokenTree::Ident(f), TokenTree::Group(g)) => {
            s == "self"
                && p.as_char() == '.'
                && fields.contains(f)
                && g.delimiter() == Delimiter::Parenthesis
        }
        _ => false,
    });
    calls_here
        || tts
            .iter()
            .any(|t| matches!(t, TokenTree::Group(g) if tokens_call_sub(g.stream(), fields)))
}

pub(super) fn is_self_expr(e: &Expr) -> bool {
    matches!(e, Expr::Path(p) if p.path.is_ident("self"))
}

/// `a::b::f` with `suffix` appended to the last segment's name (`a::b::f_rev`).
pub fn suffixed(path: &Path, suffix: &str) -> Path {
    let mut p = path.clone();
    if let Some(last) = p.segments.last_mut() {
        // `r#match` gives `match_vjp`.
        let name = syn::ext::IdentExt::unraw(&last.ident);
        last.ident = Ident::new(&format!("{name}{suffix}"), last.ident.span());
    }
    p
}

/// `&x` as `x` (a method's operand may be borrowed: `x.dot(&y)`).
pub(super) fn strip_ref(e: &Expr) -> &Expr {
    match e {
        Expr::Reference(r) if r.mutability.is_none() => &r.expr,
        other => other,
    }
}

/// Whether `ident` names a static nalgebra matrix or vector type (`SVector`, `SMatrix`,
/// `Vector3`, `Matrix2x3`, `RowVector4`, ...).
/// The shape (rows, columns) a nalgebra type names with literal sizes: `SVector<T, 3>`,
/// `SMatrix<T, 2, 3>`, `RowSVector<T, 4>`, `Vector3`, `RowVector2`, `Matrix2`, `Matrix2x3`.
/// `None` for a shape given by a constant or a generic parameter, or another type.
pub(super) fn written_shape(ty: &syn::PathSegment) -> Option<(usize, usize)> {
    let name = ty.ident.to_string();
    let sizes: Vec<Option<usize>> = match &ty.arguments {
        syn::PathArguments::AngleBracketed(a) => a
            .args
            .iter()
            .skip(1)
            .map(|g| match g {
                syn::GenericArgument::Const(syn::Expr::Lit(syn::ExprLit {
                    lit: syn::Lit::Int(n),
                    ..
                })) => n.base10_parse().ok(),
                // `3` in type position parses as a type path only if it is not a literal.
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    };
    let literal = |k: usize| sizes.get(k).copied().flatten();
    let number = |s: &str| s.parse::<usize>().ok().filter(|n| (1..=6).contains(n));
    match name.as_str() {
        "SVector" => Some((literal(0)?, 1)),
        "RowSVector" => Some((1, literal(0)?)),
        "SMatrix" => Some((literal(0)?, literal(1)?)),
        _ => {
            if let Some(n) = name.strip_prefix("RowVector") {
                Some((1, number(n)?))
            } else if let Some(n) = name.strip_prefix("Vector") {
                Some((number(n)?, 1))
            } else if let Some(rest) = name.strip_prefix("Matrix") {
                match rest.split_once('x') {
                    Some((r, c)) => Some((number(r)?, number(c)?)),
                    None => number(rest).map(|n| (n, n)),
                }
            } else {
                None
            }
        }
    }
}

pub(super) fn is_nalgebra_type(ident: &Ident) -> bool {
    let s = ident.to_string();
    [
        "SVector",
        "SMatrix",
        "Vector",
        "Matrix",
        "RowSVector",
        "RowVector",
    ]
    .iter()
    .any(|p| {
        s.strip_prefix(p)
            .is_some_and(|rest| rest.chars().all(|c| c.is_ascii_digit() || c == 'x'))
    })
}

/// The first `iter`/`into_iter`/`iter_mut` call in a method chain, if any.
pub(super) fn iterator_in_chain(m: &syn::ExprMethodCall) -> Option<&syn::ExprMethodCall> {
    let mut e = m;
    loop {
        if ["iter", "into_iter", "iter_mut"].contains(&e.method.to_string().as_str()) {
            return Some(e);
        }
        match &*e.receiver {
            Expr::MethodCall(inner) => e = inner,
            _ => return None,
        }
    }
}

/// Whether evaluating `e` twice gives the same value and does nothing else: literals, names,
/// fields, entries and arithmetic on them, with no call, block, macro or assignment.
pub(super) fn without_effects(e: &Expr) -> bool {
    match e {
        Expr::Lit(_) | Expr::Path(_) => true,
        Expr::Paren(p) => without_effects(&p.expr),
        Expr::Group(g) => without_effects(&g.expr),
        Expr::Tuple(t) => t.elems.iter().all(without_effects),
        Expr::Binary(b) => {
            compound_op(&b.op).is_none() && without_effects(&b.left) && without_effects(&b.right)
        }
        Expr::Unary(u) => without_effects(&u.expr),
        Expr::Cast(c) => without_effects(&c.expr),
        Expr::Field(f) => without_effects(&f.base),
        Expr::Index(i) => without_effects(&i.expr) && without_effects(&i.index),
        Expr::Reference(r) => r.mutability.is_none() && without_effects(&r.expr),
        _ => false,
    }
}

/// The type parameters bounded by a scalar trait (`T: Real`, `T: Float`, inline or in the
/// where clause), in declaration order: those whose methods are the float methods
/// (`T::exp(x)` is `x.exp()`), and a `para!` model's scalar.
pub fn scalar_type_params(generics: &syn::Generics) -> Vec<&Ident> {
    let scalar =
        |bounds: &syn::punctuated::Punctuated<syn::TypeParamBound, syn::Token![+]>| {
            bounds.iter().any(|b| match b {
                syn::TypeParamBound::Trait(t) => t.path.segments.last().is_some_and(|s| {
                    s.ident == "Real" || s.ident == "Float" || s.ident == "RealField"
                }),
                _ => false,
            })
        };
    let in_where = |i: &Ident| {
        generics
            .where_clause
            .iter()
            .flat_map(|w| &w.predicates)
            .any(|p| match p {
                syn::WherePredicate::Type(pt) => {
                    matches!(&pt.bounded_ty, syn::Type::Path(tp) if tp.path.is_ident(i))
                        && scalar(&pt.bounds)
                }
                _ => false,
            })
    };
    generics
        .type_params()
        .filter(|t| scalar(&t.bounds) || in_where(&t.ident))
        .map(|t| &t.ident)
        .collect()
}

/// Whether `tokens` contain the identifier `name`.
pub fn mentions(tokens: TokenStream, name: &str) -> bool {
    any_token(tokens, &|t| matches!(t, TokenTree::Ident(i) if i == name))
}

/// Whether a token of `tokens`, inside groups too, satisfies `hit`.
pub fn any_token(tokens: TokenStream, hit: &dyn Fn(&TokenTree) -> bool) -> bool {
    tokens.into_iter().any(|t| match &t {
        TokenTree::Group(g) => any_token(g.stream(), hit),
        _ => hit(&t),
    })
}

/// Whether `e` ends in a block (`if`, `match`, a loop, a block), so that as a statement it
/// needs no `;`: one after it would be linted as redundant in the user's code.
pub(super) fn block_like(e: &Expr) -> bool {
    matches!(
        e,
        Expr::If(_)
            | Expr::Match(_)
            | Expr::Block(_)
            | Expr::ForLoop(_)
            | Expr::While(_)
            | Expr::Loop(_)
            | Expr::Unsafe(_)
            | Expr::TryBlock(_)
            | Expr::Const(_)
    )
}
