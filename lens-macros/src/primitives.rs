//! The one table of the primitives `#[lens]` differentiates. For each method: its name, how
//! many arguments it takes besides its receiver, the reverse rule it lowers to (an item of
//! `lens_core::rules`; the operand types pick the impl), the rule used instead when its one
//! argument is its receiver (`x.dot(&x)`: one change `2 x d`, not two to be added), and
//! whether it has one-sided forms for a forward-only operand (`Method::sided`). For each
//! operator (`+`, unary `-`, `^` of words): its rule, and the tags of its checked forms. The
//! methods whose value carries no change (`floor`, `signum`, `len`). The analysis dispatches
//! through these tables, the "supported: ..." messages are built from them, and so is the
//! `paralens::primitives` page of the documentation ([`doc`], through `__primitives_doc!`).
//!
//! `powi` (an integer exponent that is not differentiated), `map` (a function name) and
//! `clone` (an alias) are lowered by the analysis itself.

/// The table: the float methods of one operand (the list `unary.rules`, which lens-core's
/// rules are generated from too), then the others.
pub fn methods() -> &'static [Method] {
    static ALL: std::sync::OnceLock<Vec<Method>> = std::sync::OnceLock::new();
    ALL.get_or_init(|| {
        crate::unary::names()
            .iter()
            .map(|&(name, rule)| m(name, 0, rule))
            .chain(OTHER_METHODS.iter().map(|o| Method { ..*o }))
            .collect()
    })
}

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

/// The methods besides those of one float operand, which come from `unary.rules`.
const OTHER_METHODS: &[Method] = &[
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

/// One differentiated operator.
pub struct Operator {
    /// As written: `+`, or `-` of one operand.
    pub symbol: &'static str,
    /// Operands: 2, or 1 for a prefix operator.
    pub arity: usize,
    /// The reverse rule (an item of `lens_core::rules`).
    pub rule: &'static str,
    /// The tags of `rules::checked`'s forms of `a op b` and `a op= b` (`Add`, `AddAssign`):
    /// the sweep runs the four arithmetic operators through them, so that operands without a
    /// rule are the function as written's one error. `None`: the rule itself (Z2 words).
    pub checked: Option<(&'static str, &'static str)>,
    /// What it applies to, for the documentation.
    pub on: &'static str,
}

const fn op(
    symbol: &'static str,
    rule: &'static str,
    checked: Option<(&'static str, &'static str)>,
    on: &'static str,
) -> Operator {
    Operator {
        symbol,
        arity: 2,
        rule,
        checked,
        on,
    }
}

const fn prefix(symbol: &'static str, rule: &'static str, on: &'static str) -> Operator {
    Operator {
        arity: 1,
        ..op(symbol, rule, None, on)
    }
}

/// The operators (`x op= e` is `x = x op e` of the same row).
pub const OPERATORS: &[Operator] = &[
    op(
        "+",
        "AddRule::add_vjp",
        Some(("Add", "AddAssign")),
        "scalars; matrices of one shape",
    ),
    op(
        "-",
        "SubRule::sub_vjp",
        Some(("Sub", "SubAssign")),
        "scalars; matrices of one shape",
    ),
    op(
        "*",
        "MulRule::mul_vjp",
        Some(("Mul", "MulAssign")),
        "scalars; a matrix and a scalar; matrix products (static and heap)",
    ),
    op(
        "/",
        "DivRule::div_vjp",
        Some(("Div", "DivAssign")),
        "scalars; a matrix by a scalar",
    ),
    op("^", "XorRule::xor_vjp", None, "`u64` Z2 words"),
    op("&", "AndRule::and_vjp", None, "`u64` Z2 words"),
    op("|", "OrRule::or_vjp", None, "`u64` Z2 words"),
    prefix("-", "NegRule::neg_vjp", "scalars; matrices"),
    prefix("!", "NotRule::not_vjp", "`u64` Z2 words"),
];

impl Operator {
    /// The rule as a path (in `lens_core::rules`).
    pub fn tokens(&self) -> proc_macro2::TokenStream {
        self.rule.parse().expect("the table's rules are paths")
    }
}

/// The operator `symbol` of `arity` operands.
pub fn operator(symbol: &str, arity: usize) -> &'static Operator {
    OPERATORS
        .iter()
        .find(|o| o.symbol == symbol && o.arity == arity)
        .expect("an operator of the table")
}

/// Methods whose value carries no change: counts and shapes, tests, signs, and the step
/// functions, whose derivative is zero wherever it exists. Their value is forward-only data.
pub const NO_CHANGE: &[&str] = &[
    "len",
    "nrows",
    "ncols",
    "shape",
    "is_empty",
    "is_nan",
    "is_finite",
    "is_infinite",
    "is_sign_negative",
    "is_sign_positive",
    "signum",
    "floor",
    "ceil",
    "round",
    "trunc",
    "argmax",
    "argmin",
    "imax",
    "imin",
    "count_ones",
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
    methods().iter().find(|m| m.name == name && m.args == args)
}

/// The argument counts `name` is differentiated with (empty: not a differentiated method).
pub fn arities(name: &str) -> Vec<usize> {
    methods()
        .iter()
        .filter(|m| m.name == name)
        .map(|m| m.args)
        .collect()
}

/// Whether `name` is a differentiated method.
pub fn known(name: &str) -> bool {
    SPECIAL.contains(&name) || methods().iter().any(|m| m.name == name)
}

/// The methods of a scalar once each, for `f64::name(x)` (not the matrices' `dot`,
/// `transpose`, ..).
pub fn supported_on_scalars() -> String {
    let mut names: Vec<&str> = Vec::new();
    for m in methods() {
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
    for m in methods() {
        if !names.contains(&m.name) {
            names.push(m.name);
        }
    }
    names.extend(SPECIAL);
    names.join(", ")
}

/// The tables as Markdown, for the `paralens::primitives` page of the documentation.
pub fn doc() -> String {
    let mut out = String::from(
        "The primitives `#[lens]` and `para!` differentiate, generated from the macro crate's \
         table (`lens-macros/src/primitives.rs`, with the list `unary.rules`), which the analysis dispatches through. Each \
         rule is an item of [`rules`](crate::rules); the operands' types pick its impl, so a \
         type of the user's that implements a rule trait is differentiated by it too.\n\n\
         ## Operators\n\n\
         `x op= e` (on a `let mut` binding) is `x = x op e`.\n\n\
         | operator | operands | rule | applies to |\n|---|---|---|---|\n",
    );
    for o in OPERATORS {
        let written = if o.arity == 1 {
            format!("`{}x`", o.symbol)
        } else {
            format!("`a {} b`", o.symbol)
        };
        out.push_str(&format!(
            "| {written} | {} | `{}` | {} |\n",
            o.arity, o.rule, o.on
        ));
    }
    out.push_str(
        "\n## Methods\n\n\
         Called as methods (`x.sin()`) or, for a float's, through the type (`f64::max(x, y)`, \
         `T::exp(x)`). The square variant is the rule when the operand is the receiver itself \
         (`x.dot(&x)`); one-sided forms run when one operand is forward-only data.\n\n\
         | method | arguments besides the receiver | rule | square variant | one-sided forms |\n\
         |---|---|---|---|---|\n",
    );
    for m in methods() {
        out.push_str(&format!(
            "| `{}` | {} | `{}` | {} | {} |\n",
            m.name,
            m.args,
            m.rule,
            m.square.map_or("".to_string(), |s| format!("`{s}`")),
            if m.sided { "yes" } else { "" }
        ));
    }
    out.push_str(
        "| `powi` | 1 (an integer, forward-only) | `PowiRule::powi_vjp` | | |\n\
         | `map` | 1 (the name of a `#[lens]` function of one scalar) | entry by entry, that function's | | |\n\
         | `clone` | 0 | the value itself | | |\n",
    );
    out.push_str(
        "\n## Methods without a change\n\n\
         Their value is forward-only data (a count, a test, a sign, a step function's value: \
         the derivative is zero wherever it exists): ",
    );
    let names: Vec<String> = NO_CHANGE.iter().map(|n| format!("`{n}`")).collect();
    out.push_str(&names.join(", "));
    out.push_str(".\n");
    out.push_str(EDGES);
    out.push_str(ADDING);
    out
}

/// What the rules give at their edges (checked by `tests/edges.rs`).
const EDGES: &str = "\n## At their edges\n\n\
The forward value of every rule is Rust's own method's, bit for bit, at every point \
(zeros of both signs, infinities, NaN, subnormals): `x.mul_add(a, b)` is rounded once, \
`x.max(y)` with a NaN operand is the other one. The change is the derivative's value \
wherever that is a number; where the derivative is infinite or undefined the rule gives \
what the formula gives (an infinity or NaN: no value is invented), except at the kinks \
below, where a subgradient is chosen. A zero output change times an infinite derivative is \
NaN, as in any reverse mode.\n\n\
| method | at | value | change |\n|---|---|---|---|\n\
| `abs` | 0 | 0 | 0 |\n\
| `max`, `min` | a tie `x == y` | `x` | all to `x` |\n\
| `max`, `min` | one operand NaN | the other, as Rust's | all to the other |\n\
| `clamp` | `x` at `lo` or `hi` | `x` | all to `x` (bounds are inside) |\n\
| `clamp` | `lo > hi` or a NaN bound | panics, as Rust's | |\n\
| `hypot`, `atan2`, `norm` | the origin | 0 | 0 |\n\
| `powf` | `a = 0` | 1 (`0^0` too) | 0 for `x` |\n\
| `powf` | `x <= 0` | Rust's | 0 for `a` |\n\
| `powi` | `n = 0` | 1 | 0 |\n\
| `sqrt`, `cbrt` | 0 | 0 | `+inf` (the derivative is infinite) |\n\
| `ln`, `log2`, `log10` | 0 | `-inf` | `+inf` |\n\
| `ln`, `sqrt`, `asin`, `acos`, `acosh`, `atanh` | outside the domain | NaN | NaN |\n\
| `recip` | 0 | `+inf` | `-inf` |\n\
| any | NaN | NaN | NaN |\n";

/// How to add a primitive.
const ADDING: &str = "\n## Adding a primitive\n\n\
A method of one float operand (as `cbrt` was): \n\
1. one entry in `lens-macros/src/unary.rules`, `CbrtRule::cbrt_vjp, |x, y, d| x.cbrt() => \
d / (T::cst(3.0) * y * y);` under its doc line: the forward as Rust writes it and the \
reverse in `x` (the operand), `y` (the value) and `d` (the output change). From this one \
list lens-core generates the rule trait `CbrtRule` with its impls for `f32` and `f64`, \
re-exported in [`rules`](crate::rules) and a supertrait of [`Real`] (through `UnaryRules`), \
and the macro's table gets the method: the analysis, the refusals' lists, the loops' \
recomputation and this page read it;\n\
2. its tests: the method beside the others in `tests/methods.rs` (finite differences in \
`f64`, `f32` against the `f64` derivative, a generic `T: Real`) and in `tests/edges.rs` \
(Rust's value at every edge point, the derivative's where it is a number).\n\n\
A method of several operands, or of a matrix, has a hand-written rule in \
`lens-core/src/rules/` and a line in the table `OTHER_METHODS` of \
`lens-macros/src/primitives.rs`.\n";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_primitive_is_in_the_documentation() {
        let doc = doc();
        for m in methods() {
            assert!(doc.contains(&format!("| `{}` | {} | `{}` |", m.name, m.args, m.rule)));
        }
        for o in OPERATORS {
            assert!(doc.contains(o.rule), "{}", o.symbol);
        }
        for n in NO_CHANGE.iter().chain(SPECIAL) {
            assert!(doc.contains(&format!("`{n}`")), "{n}");
        }
    }

    #[test]
    fn no_method_both_differentiated_and_without_change() {
        for n in NO_CHANGE {
            assert!(!known(n), "{n}");
        }
    }
}
