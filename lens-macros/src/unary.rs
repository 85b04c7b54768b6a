//! The one list of the float methods of one operand (`unary.rules`), read by both sides: the
//! macro's table of primitives ([`names`]) and lens-core's rule traits (`__unary_rules!`,
//! [`rules`]), so that a primitive of one operand is added by one entry there.

use proc_macro2::{TokenStream, TokenTree};
use quote::quote;
use std::sync::OnceLock;

const SOURCE: &str = include_str!("unary.rules");

/// One entry: its tokens (`/// doc` `Rule::method_vjp, |x, y, d| forward => reverse`), the
/// rule trait's name and the method's.
struct Entry {
    tokens: TokenStream,
    rule: String,
    method: String,
}

fn entries() -> Vec<Entry> {
    let all: TokenStream = SOURCE.parse().expect("unary.rules is Rust tokens");
    let mut out = Vec::new();
    let mut current = TokenStream::new();
    for t in all {
        match &t {
            TokenTree::Punct(p) if p.as_char() == ';' => {
                out.push(entry(std::mem::take(&mut current)));
            }
            _ => current.extend([t]),
        }
    }
    assert!(current.is_empty(), "unary.rules: every entry ends with `;`");
    out
}

fn entry(tokens: TokenStream) -> Entry {
    // Past the doc attributes (`#` and a bracketed group each): `Rule :: method_vjp`.
    let idents: Vec<String> = tokens
        .clone()
        .into_iter()
        .skip_while(|t| !matches!(t, TokenTree::Ident(_)))
        .filter_map(|t| match t {
            TokenTree::Ident(i) => Some(i.to_string()),
            _ => None,
        })
        .take(2)
        .collect();
    let [rule, vjp] = idents.as_slice() else {
        panic!("unary.rules: an entry starts `Rule::method_vjp`");
    };
    let method = vjp
        .strip_suffix("_vjp")
        .expect("unary.rules: the rule's method is `method_vjp`")
        .to_string();
    Entry {
        tokens,
        rule: rule.clone(),
        method,
    }
}

/// Each entry's method and rule (`("cbrt", "CbrtRule::cbrt_vjp")`), in the list's order.
pub fn names() -> &'static [(&'static str, &'static str)] {
    static NAMES: OnceLock<Vec<(&'static str, &'static str)>> = OnceLock::new();
    NAMES.get_or_init(|| {
        entries()
            .into_iter()
            .map(|e| {
                let rule = format!("{}::{}_vjp", e.rule, e.method);
                // Once per compiler process: the table's strings live as long as it does.
                (&*e.method.leak(), &*rule.leak())
            })
            .collect()
    })
}

/// lens-core's side: `unary_rule!(entry);` for every entry (the macro is lens-core's, in
/// `rules/unary.rs`), and `UnaryRules`, every rule at once, a supertrait of `Real`.
pub fn rules() -> TokenStream {
    let entries = entries();
    let each = entries.iter().map(|e| &e.tokens);
    let bounds: Vec<TokenStream> = entries
        .iter()
        .map(|e| {
            let rule = proc_macro2::Ident::new(&e.rule, proc_macro2::Span::call_site());
            quote!(#rule<Out = Self>)
        })
        .collect();
    let on_t = bounds.iter().map(|b| {
        let s = b.to_string().replace("Self", "T");
        s.parse::<TokenStream>().expect("a bound")
    });
    quote! {
        #(unary_rule!(#each);)*

        /// Every rule of a float method of one operand (`exp`, `sin`, ...: the list on the
        /// `paralens::primitives` page), as one bound: a supertrait of [`Real`](crate::Real),
        /// implemented for every type that has them all.
        pub trait UnaryRules: #(#bounds)+* {}

        impl<T> UnaryRules for T where T: #(#on_t)+* {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_entry_reaches_the_table_and_the_rules() {
        let names = names();
        assert!(names.contains(&("cbrt", "CbrtRule::cbrt_vjp")));
        assert!(names.contains(&("ln_1p", "Ln1pRule::ln_1p_vjp")));
        let rules = rules().to_string();
        for (method, rule) in names {
            assert!(crate::primitives::known(method), "{method}");
            assert_eq!(
                crate::primitives::find(method, 0).map(|m| m.rule),
                Some(*rule)
            );
            let name = rule.split("::").next().unwrap();
            assert!(rules.contains(&format!("{name} :: {method}_vjp")), "{rule}");
            assert!(rules.contains(&format!("{name} < Out = T >")), "{rule}");
        }
        assert_eq!(rules.matches("unary_rule !").count(), names.len());
    }
}
