//! The one table of the methods `#[lens]` differentiates: each method's name, how many
//! arguments it takes besides its receiver, the reverse rule it lowers to (an item of
//! `lens_core::rules`; the operand types pick the impl), and the rule used instead when its
//! one argument is its receiver (`x.dot(&x)`: one change `2 x d`, not two to be added), and
//! whether it has one-sided forms for a forward-only operand (`Method::sided`). The
//! analysis dispatches through it, and the "supported: ..." message is built from it.
//!
//! `powi` (an integer exponent that is not differentiated), `map` (a function name) and
//! `clone` (an alias) are lowered by the analysis itself.

/// One differentiated method.
pub struct Method {
    pub name: &'static str,
    pub args: usize,
    pub rule: &'static str,
    pub square: Option<&'static str>,
    /// The rule has one-sided forms, `rule_left` and `rule_right`, run when one operand is
    /// forward-only data: their pullbacks compute the other operand's change alone.
    pub sided: bool,
}

const fn m(name: &'static str, args: usize, rule: &'static str) -> Method {
    Method {
        name,
        args,
        rule,
        square: None,
        sided: false,
    }
}

/// A matrix method with one operand and one-sided forms (`component_div`).
const fn sided(name: &'static str, rule: &'static str) -> Method {
    Method {
        name,
        args: 1,
        rule,
        square: None,
        sided: true,
    }
}

/// A matrix method whose square variant is used when its operand is its receiver; it has
/// one-sided forms too.
const fn sq(name: &'static str, rule: &'static str, square: &'static str) -> Method {
    Method {
        name,
        args: 1,
        rule,
        square: Some(square),
        sided: true,
    }
}

/// The table.
pub const METHODS: &[Method] = &[
    m("exp", 0, "ExpRule::exp_vjp"),
    m("exp2", 0, "Exp2Rule::exp2_vjp"),
    m("ln", 0, "LnRule::ln_vjp"),
    m("log2", 0, "Log2Rule::log2_vjp"),
    m("log10", 0, "Log10Rule::log10_vjp"),
    m("sqrt", 0, "SqrtRule::sqrt_vjp"),
    m("sin", 0, "SinRule::sin_vjp"),
    m("cos", 0, "CosRule::cos_vjp"),
    m("tan", 0, "TanRule::tan_vjp"),
    m("tanh", 0, "TanhRule::tanh_vjp"),
    m("sinh", 0, "SinhRule::sinh_vjp"),
    m("cosh", 0, "CoshRule::cosh_vjp"),
    m("asin", 0, "AsinRule::asin_vjp"),
    m("acos", 0, "AcosRule::acos_vjp"),
    m("atan", 0, "AtanRule::atan_vjp"),
    m("abs", 0, "AbsRule::abs_vjp"),
    m("recip", 0, "RecipRule::recip_vjp"),
    m("powf", 1, "PowfRule::powf_vjp"),
    m("max", 1, "MaxRule::max_vjp"),
    m("min", 1, "MinRule::min_vjp"),
    m("max", 0, "Reduce::max_vjp"),
    m("min", 0, "Reduce::min_vjp"),
    m("atan2", 1, "Atan2Rule::atan2_vjp"),
    m("hypot", 1, "HypotRule::hypot_vjp"),
    m("mul_add", 2, "MulAddRule::mul_add_vjp"),
    m("clamp", 2, "ClampRule::clamp_vjp"),
    m("transpose", 0, "Transpose::transpose_vjp"),
    m("sum", 0, "Reduce::sum_vjp"),
    m("mean", 0, "Reduce::mean_vjp"),
    m("norm", 0, "Reduce::norm_vjp"),
    m("norm_squared", 0, "Reduce::norm_squared_vjp"),
    sq("dot", "Dot::dot_vjp", "Dot::dot_self_vjp"),
    sq(
        "component_mul",
        "ComponentProduct::component_mul_vjp",
        "ComponentProduct::component_square_vjp",
    ),
    sided("component_div", "ComponentProduct::component_div_vjp"),
];

/// Whether `m`'s rule takes every operand at the receiver's type (`Self`): the rule traits
/// of scalar methods (`MaxRule::max_vjp(self, y: Self)`). The rules of matrices' methods take
/// an operand that may also be borrowed (`x.dot(w)` with `w: &SVector`).
pub fn tied(m: &Method) -> bool {
    m.args > 0 && m.rule.contains("Rule::")
}

/// Whether `name` with `args` arguments is a method of a float (its rule a scalar rule
/// trait's, `CosRule::cos_vjp`, or `powi`): inherent methods of `f32` and `f64` whose
/// arguments' types the method fixes (the loops' type probes, `analyse/probes.rs`).
pub fn float_method(name: &str, args: usize) -> bool {
    (name == "powi" && args == 1) || find(name, args).is_some_and(|m| m.rule.contains("Rule::"))
}

/// Methods lowered by the analysis itself (see the module's documentation).
pub const SPECIAL: &[&str] = &["powi", "map", "clone"];

/// The entry for `name` called with `args` arguments.
pub fn find(name: &str, args: usize) -> Option<&'static Method> {
    METHODS.iter().find(|m| m.name == name && m.args == args)
}

/// The argument counts `name` is differentiated with (empty: not a differentiated method).
pub fn arities(name: &str) -> Vec<usize> {
    METHODS
        .iter()
        .filter(|m| m.name == name)
        .map(|m| m.args)
        .collect()
}

/// Whether `name` is a differentiated method.
pub fn known(name: &str) -> bool {
    SPECIAL.contains(&name) || METHODS.iter().any(|m| m.name == name)
}

/// The methods of a scalar once each, for `f64::name(x)` (not the matrices' `dot`,
/// `transpose`, ..).
pub fn supported_on_scalars() -> String {
    let mut names: Vec<&str> = Vec::new();
    for m in METHODS {
        if m.rule.contains("Rule::") && !names.contains(&m.name) {
            names.push(m.name);
        }
    }
    names.push("powi");
    names.join(", ")
}

/// "exp, exp2, ln, ...": every differentiated method once, for error messages.
pub fn supported() -> String {
    let mut names: Vec<&str> = Vec::new();
    for m in METHODS {
        if !names.contains(&m.name) {
            names.push(m.name);
        }
    }
    names.extend(SPECIAL);
    names.join(", ")
}
