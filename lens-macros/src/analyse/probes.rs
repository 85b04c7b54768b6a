//! Type probes for loops that carry a number literal's binding.
//!
//! `let mut acc = 0.0; for i in 0..N { acc = acc.cos() + x; }` is a mistake in Rust: `acc`
//! is a float of no known type when `cos` is called, and rustc says so (E0689, "can't call
//! method `cos` on ambiguous numeric type `{float}`", with "you must specify a type for this
//! binding, like `f32`"). In a `#[lens]` function the loop carries `acc`, differentiated from
//! the second iteration on, and the method runs through its rule: rustc then reported "type
//! annotations needed for `(_, _)`" with a suggestion that cannot be written
//! (`acc.cos: (_, _)()`). A probe at the start of such a loop, `let _ = || acc.cos(any())`,
//! the receiver and the method at their places as written, is rustc's own error for the
//! mistake, the same in the function as written and in its sweeps (reported once), and it
//! comes first, so rustc reports nothing more about types it could not infer. When the
//! binding's type is known by then the probe is a closure never called. Only a float's own
//! methods of the primitives table without a turbofish are probed (their arguments' types
//! are the method's, so `any()` takes them), and only the binding the name means in the
//! loop (not one a loop variable, a nested loop's, a closure's or a pattern's hides).

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use std::collections::{BTreeMap, HashMap};
use syn::spanned::Spanned;
use syn::visit::Visit;
use syn::{Expr, Ident, Pat};

/// The probes of each `for` loop of `body` that has any, by [`super::node_key`] of the loop.
pub fn for_loops(body: &syn::Block) -> BTreeMap<usize, TokenStream> {
    let mut finder = Loops::default();
    finder.visit_block(body);
    finder.probes
}

#[derive(Default)]
struct Loops {
    /// Each name bound so far (in the order of the text), and whether its latest `let` was
    /// of a number literal with no type (`let mut acc = 0.0`).
    literal: HashMap<String, bool>,
    probes: BTreeMap<usize, TokenStream>,
}

/// `0.0`, `1`, `-2.5` with no suffix.
fn unsuffixed_number(e: &Expr) -> bool {
    match e {
        Expr::Lit(l) => match &l.lit {
            syn::Lit::Float(f) => f.suffix().is_empty(),
            syn::Lit::Int(i) => i.suffix().is_empty(),
            _ => false,
        },
        Expr::Unary(u) if matches!(u.op, syn::UnOp::Neg(_)) => unsuffixed_number(&u.expr),
        Expr::Paren(p) => unsuffixed_number(&p.expr),
        _ => false,
    }
}

/// The names a pattern binds.
fn bound_names(p: &Pat, out: &mut Vec<String>) {
    struct Names<'a>(&'a mut Vec<String>);
    impl<'ast> Visit<'ast> for Names<'_> {
        fn visit_pat_ident(&mut self, i: &'ast syn::PatIdent) {
            self.0.push(i.ident.to_string());
            syn::visit::visit_pat_ident(self, i);
        }
    }
    Names(out).visit_pat(p);
}

impl<'ast> Visit<'ast> for Loops {
    fn visit_local(&mut self, l: &'ast syn::Local) {
        if let Some(init) = &l.init {
            self.visit_expr(&init.expr);
            if let Some((_, e)) = &init.diverge {
                self.visit_expr(e);
            }
        }
        let literal = matches!(&l.pat, Pat::Ident(_))
            && l.init
                .as_ref()
                .is_some_and(|i| i.diverge.is_none() && unsuffixed_number(&i.expr));
        let mut names = Vec::new();
        bound_names(&l.pat, &mut names);
        for n in names {
            self.literal.insert(n, literal);
        }
    }

    fn visit_expr_for_loop(&mut self, f: &'ast syn::ExprForLoop) {
        self.visit_expr(&f.expr);
        let mut probes = TokenStream::new();
        // The loop's own bindings hide the names they bind in its body.
        let mut own = Vec::new();
        bound_names(&f.pat, &mut own);
        let mut names: Vec<&String> = self
            .literal
            .iter()
            .filter(|(n, lit)| **lit && !own.contains(n))
            .map(|(n, _)| n)
            .collect();
        names.sort();
        for name in names {
            let mut first = FirstUse { name, found: None };
            first.visit_block(&f.body);
            // Only a float's own methods, without a turbofish: their arguments' types are
            // the method's, so `any()` takes them (a trait's generic `c.add(1.0)` left the
            // probe's argument without a type).
            if let Some(Use::Receiver(m)) = first.found
                && m.turbofish.is_none()
                && crate::primitives::float_method(&m.method.to_string(), m.args.len())
            {
                let (receiver, method) = (&m.receiver, &m.method);
                let any = m.args.iter().map(|a| {
                    let __rt = crate::rt::at(a.span());
                    quote_spanned!(a.span()=> #__rt::any())
                });
                let call = quote_spanned!(m.span()=> #receiver.#method(#(#any),*));
                probes.extend(quote!(let _ = || #call;));
            }
        }
        if !probes.is_empty() {
            self.probes.insert(super::node_key(f), probes);
        }
        // The loop's own bindings, then its body (nested loops get probes of their own).
        let saved = self.literal.clone();
        for n in own {
            self.literal.insert(n, false);
        }
        self.visit_block(&f.body);
        self.literal = saved;
    }

    fn visit_block(&mut self, b: &'ast syn::Block) {
        // A `let` inside a block hides a name until the block ends.
        let saved = self.literal.clone();
        syn::visit::visit_block(self, b);
        self.literal = saved;
    }
}

enum Use<'a> {
    /// `name.method(args)`, as written.
    Receiver(&'a syn::ExprMethodCall),
    /// Any other mention (an operand, an argument, a new binding of the name).
    Other,
}

/// The first mention of `name` in a loop's body, in the order rustc checks types in (the
/// target of a plain assignment is not one: it takes no type from it).
struct FirstUse<'a, 'n> {
    name: &'n str,
    found: Option<Use<'a>>,
}

impl FirstUse<'_, '_> {
    fn is_name(&self, e: &Expr) -> bool {
        match e {
            Expr::Path(p) => p.qself.is_none() && p.path.is_ident(self.name),
            Expr::Paren(p) => self.is_name(&p.expr),
            _ => false,
        }
    }
}

impl<'a> Visit<'a> for FirstUse<'a, '_> {
    fn visit_expr(&mut self, e: &'a Expr) {
        if self.found.is_some() {
            return;
        }
        match e {
            Expr::MethodCall(m) if self.is_name(&m.receiver) => {
                self.found = Some(Use::Receiver(m));
            }
            Expr::Assign(a) if self.is_name(&a.left) => self.visit_expr(&a.right),
            // `s + x[i] * s.cos()`, `s += s.cos()`: rustc checks both operands before it gives
            // a number literal's binding the other operand's type, so a method called on the
            // name inside the other operand comes first.
            Expr::Binary(b) if self.is_name(&b.left) || self.is_name(&b.right) => {
                let other = if self.is_name(&b.left) {
                    &b.right
                } else {
                    &b.left
                };
                self.visit_expr(other);
                if self.found.is_none() {
                    self.found = Some(Use::Other);
                }
            }
            Expr::Path(p) if p.qself.is_none() && p.path.is_ident(self.name) => {
                self.found = Some(Use::Other);
            }
            _ => syn::visit::visit_expr(self, e),
        }
    }

    fn visit_local(&mut self, l: &'a syn::Local) {
        if self.found.is_some() {
            return;
        }
        if let Some(init) = &l.init {
            self.visit_expr(&init.expr);
        }
        let mut names = Vec::new();
        bound_names(&l.pat, &mut names);
        if self.found.is_none() && names.iter().any(|n| n == self.name) {
            self.found = Some(Use::Other);
        }
    }

    /// A binding of the name (a nested loop's pattern, a closure's parameter, a `match`
    /// arm's or an `if let`'s pattern) hides it: what follows is another variable.
    fn visit_pat_ident(&mut self, p: &'a syn::PatIdent) {
        if self.found.is_none() && p.ident == self.name {
            self.found = Some(Use::Other);
        }
        syn::visit::visit_pat_ident(self, p);
    }

    fn visit_ident(&mut self, _: &'a Ident) {}
}
