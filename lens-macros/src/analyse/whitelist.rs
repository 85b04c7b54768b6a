//! The whitelist: what forward-only code may do with a differentiated value (read it),
//! and the checks that refuse the rest at its span.

use super::*;

impl Analyser<'_> {
    /// Refuses, in forward-only code that reads differentiated values (a condition, a
    /// comparison, a `println!`), anything that could change a binding: the change would be
    /// invisible to the reverse sweep.
    pub(super) fn check_read(&mut self, node: &(impl ToTokens + ?Sized)) {
        let tokens = node.to_token_stream();
        if !self.mentions_diff(tokens.clone()) {
            return;
        }
        let Ok(e) = syn::parse2::<Expr>(tokens) else {
            return;
        };
        let mut effects = Effects::default();
        syn::visit::Visit::visit_expr(&mut effects, &e);
        for (tokens, what) in effects.0 {
            if self.mentions_diff(tokens.clone()) {
                self.errors.at(
                    tokens,
                    format!("{what} in forward-only code that reads a differentiated value is not supported; compute the value in its own statement"),
                );
            }
        }
        for (name, call) in effects.1 {
            if !READ_METHODS.contains(&name.as_str())
                && !crate::primitives::methods().iter().any(|m| m.name == name)
                && !crate::primitives::NO_CHANGE.contains(&name.as_str())
                && !self.refused.contains(&call.to_string())
                && self.mentions_diff(call.clone())
            {
                self.errors.at(
                    call,
                    format!("`{name}` in forward-only code that reads a differentiated value might change a binding or keep the value where the reverse sweep cannot see it; only methods that just read (math such as `abs`, `norm`, `max`, and comparisons) are allowed here; compute it in its own `let` first"),
                );
            }
        }
        for (func, call) in effects.2 {
            let float_fn = func
                .segments
                .first()
                .is_some_and(|s| s.ident == "f32" || s.ident == "f64")
                && func.segments.len() == 2;
            if !float_fn
                && !self.refused.contains(&call.to_string())
                && self.mentions_diff(call.clone())
            {
                self.errors.at(
                    call,
                    "a call given a differentiated value in forward-only code (a condition, a comparison, a `println!`) might keep the value where the reverse sweep cannot see it; bind the call's result with `let` first (a `#[lens]` function is then differentiated)",
                );
            }
        }
    }

    /// A macro statement that sees differentiated values: only the printing, assertion and
    /// panic macros, whose arguments are read.
    pub(super) fn check_macro(&mut self, mac: &syn::Macro) {
        if !self.mentions_diff(mac.tokens.clone()) {
            return;
        }
        let name = mac
            .path
            .segments
            .last()
            .map(|s| s.ident.to_string())
            .unwrap_or_default();
        if !READING_MACROS.contains(&name.as_str()) {
            self.errors.at(
                mac,
                format!("`{name}!` cannot see differentiated values (only {} can); compute its input in a `let` first", READING_MACROS.iter().map(|m| format!("`{m}!`")).collect::<Vec<_>>().join(", ")),
            );
            return;
        }
        let parser = syn::punctuated::Punctuated::<Expr, syn::Token![,]>::parse_terminated;
        let Ok(args) = mac.parse_body_with(parser) else {
            self.errors.at(
                mac,
                format!("the arguments of `{name}!` could not be read as expressions"),
            );
            return;
        };
        for arg in &args {
            match arg {
                // A named format argument (`x = expr`).
                Expr::Assign(a) if matches!(&*a.left, Expr::Path(_)) => self.check_read(&*a.right),
                other => self.check_read(other),
            }
        }
    }

    /// A branch or loop body's pullback adds into the adjoints of the values it reads from
    /// outside through a helper of fixed arity (`__private::adjoints0` to `adjoints12`).
    pub(super) fn check_outside_reads(&mut self, n: usize, span: Span, what: &str) {
        const MAX: usize = 12;
        if n > MAX {
            self.errors.push(syn::Error::new(
                span,
                format!("this {what} reads {n} differentiated values from outside it, more than the {MAX} supported; put some of them in a tuple or a vector first, or move the {what}'s work into a `#[lens]` function"),
            ));
        }
    }
}

/// Macros whose arguments are only read, so they may print or check differentiated values.
pub(super) const READING_MACROS: &[&str] = &[
    "print",
    "println",
    "eprint",
    "eprintln",
    "assert",
    "assert_eq",
    "assert_ne",
    "debug_assert",
    "debug_assert_eq",
    "debug_assert_ne",
    "panic",
    "unreachable",
];

/// Methods forward-only code may call on (or with) a differentiated value besides the
/// primitives (`primitives::methods`, `primitives::NO_CHANGE`): they read it and return plain
/// data.
pub(super) const READ_METHODS: &[&str] = &[
    "powi",
    "clone",
    "fract",
    "amax",
    "amin",
    "partial_cmp",
    "total_cmp",
    "eq",
    "ne",
    "lt",
    "le",
    "gt",
    "ge",
    "is_normal",
];

/// What in an expression could change a binding or keep a value: assignments, `&mut`, blocks
/// and closures (which may hold either), nested macros; and, kept apart by name, method calls
/// (a method may take its receiver by `&mut`, or store its argument) and calls of functions.
#[derive(Default)]
pub(super) struct Effects(
    Vec<(TokenStream, &'static str)>,
    Vec<(String, TokenStream)>,
    Vec<(syn::Path, TokenStream)>,
);

impl<'a> syn::visit::Visit<'a> for Effects {
    fn visit_expr(&mut self, e: &'a Expr) {
        // A branch may read differentiated values in its condition, scrutinee and guards (it
        // then chooses forward-only data); its arms must not name them.
        match e {
            Expr::If(i) => {
                self.visit_expr(&i.cond);
                self.0.push((i.then_branch.to_token_stream(), "a branch"));
                if let Some((_, other)) = &i.else_branch {
                    self.0.push((other.to_token_stream(), "a branch"));
                }
                return;
            }
            Expr::Match(m) => {
                self.visit_expr(&m.expr);
                for arm in &m.arms {
                    if let Some((_, g)) = &arm.guard {
                        self.visit_expr(g);
                    }
                    self.0.push((arm.body.to_token_stream(), "a branch"));
                }
                return;
            }
            _ => {}
        }
        let what = match e {
            Expr::Assign(_) => Some("an assignment"),
            Expr::Binary(b) if compound_op(&b.op).is_some() => Some("an assignment"),
            Expr::Reference(r) if r.mutability.is_some() => Some("`&mut`"),
            Expr::Block(_) | Expr::Unsafe(_) => Some("a block"),
            Expr::ForLoop(_) | Expr::While(_) | Expr::Loop(_) => Some("a loop"),
            Expr::Closure(_) => Some("a closure"),
            Expr::Macro(_) => Some("a macro"),
            _ => None,
        };
        if let Some(what) = what {
            self.0.push((e.to_token_stream(), what));
            return;
        }
        match e {
            Expr::MethodCall(m) => self.1.push((m.method.to_string(), e.to_token_stream())),
            Expr::Call(c) => match &*c.func {
                Expr::Path(p) => self.2.push((p.path.clone(), e.to_token_stream())),
                other => self
                    .0
                    .push((other.to_token_stream(), "a call of a computed function")),
            },
            _ => {}
        }
        syn::visit::visit_expr(self, e);
    }
}

/// The names a string literal's inline format arguments capture (`"{x} {y:?}"`: `x`, `y`).
pub(super) fn format_captures(literal: &str) -> Vec<String> {
    if !literal.contains('"') {
        return Vec::new();
    }
    let mut names = Vec::new();
    let mut rest = literal;
    while let Some(open) = rest.find('{') {
        rest = &rest[open + 1..];
        if rest.starts_with('{') {
            rest = &rest[1..]; // `{{` is a literal brace
            continue;
        }
        let end = rest
            .find(|c: char| !(c.is_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        let name = &rest[..end];
        if name
            .chars()
            .next()
            .is_some_and(|c| c.is_alphabetic() || c == '_')
        {
            names.push(name.to_string());
        }
        rest = &rest[end..];
    }
    names
}

/// `return` and `?` anywhere in a body (closures and nested items excepted).
pub(super) struct EarlyExits(pub(super) Vec<(TokenStream, &'static str)>);

impl<'a> syn::visit::Visit<'a> for EarlyExits {
    fn visit_expr_return(&mut self, r: &'a syn::ExprReturn) {
        self.0.push((
            r.to_token_stream(),
            "`return` is not supported in a `#[lens]` body; make the value the block's last expression",
        ));
    }
    fn visit_expr_try(&mut self, t: &'a syn::ExprTry) {
        self.0.push((
            t.to_token_stream(),
            "`?` is not supported in a `#[lens]` body; a lens always produces its value",
        ));
    }
    fn visit_expr_closure(&mut self, _: &'a syn::ExprClosure) {}
    fn visit_item(&mut self, _: &'a syn::Item) {}
}
