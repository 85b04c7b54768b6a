//! The analysis' intermediate form: variables, operands, statements, operations and
//! branches, in A-normal form.

use super::loops::Loop;
use proc_macro2::{Span, TokenStream};
use std::collections::BTreeMap;
use syn::{Ident, Path, Type};

/// Index of a variable in [`Analyser::vars`].
pub type VarId = usize;

/// One binding: a user variable (its forward name is the user's identifier) or a temporary.
pub struct Var {
    pub ident: Ident,
    pub diff: bool,
    /// Declared `let mut` (or a rebinding of such a variable): assignments rebind it.
    pub mutable: bool,
    /// Fresh temporary created by the analysis (may be renamed to a user binding).
    pub temp: bool,
}

/// An operand of an operation: a differentiated variable or a forward-only expression.
#[derive(Clone)]
pub enum Operand {
    Var(VarId),
    Const(TokenStream),
}

/// A block: its statements, its value and the differentiated variables from outside it
/// that it uses (its pullback returns their changes, in this order).
pub struct Block {
    pub stmts: Vec<Stmt>,
    pub result: Operand,
    pub free: Vec<VarId>,
    /// Outer `let mut` bindings a `let` of this block shadowed: slot -> (the binding as it was,
    /// a copy taken just before), so that the block can still hand the binding on.
    pub(super) kept: BTreeMap<(usize, usize), (VarId, VarId)>,
}

pub struct Stmt {
    pub kind: StmtKind,
    pub span: Span,
}

pub enum StmtKind {
    /// A forward-only statement, emitted as written.
    Verbatim(TokenStream),
    /// `let target = op;` (boxed: an operation is much larger than the other variants)
    Let {
        target: VarId,
        ty: Option<Box<Type>>,
        op: Box<Op>,
    },
    /// `let (a, _, c) = src;` on a differentiated tuple (`let [a, _, c] = src;` on an array
    /// when `array`).
    Destructure {
        src: VarId,
        targets: Vec<Option<VarId>>,
        array: bool,
    },
}

pub enum Op {
    /// `let x = y;`
    Alias(Operand),
    /// A primitive reverse rule: `func(args..., extra...)` returns `(value, pullback)`;
    /// the pullback returns one change per arg (a tuple when there are several).
    Rule {
        func: TokenStream,
        args: Vec<Operand>,
        extra: Vec<TokenStream>,
        /// Every operand has the first's type (the rule traits of scalar methods, `x.max(y)`,
        /// and of Z2 words, `a ^ b`): the sweep reads the others, and their changes, through
        /// guards (`expand::typed_like`), so that a mismatch is reported once, by the
        /// function as written.
        tied: bool,
        /// `+ - * /`: the tag of `rules::checked` the sweep runs the rule through, so that a
        /// missing rule is reported once, by the function as written.
        checked: Option<&'static str>,
        /// `func` has one-sided forms, `func_left` and `func_right` (`primitives::Method::
        /// sided`), which the sweep runs when one operand is forward-only data.
        sided: bool,
    },
    /// A call of another lens function through its `_lens_vjp`, tied to the function the
    /// call names (`item`, as written): see `crate::tie`; an associated function's through
    /// its `_vjp` (`item` is `None`).
    Call {
        path: Path,
        item: Option<Path>,
        args: Vec<Operand>,
        /// Where each argument is in the function as written, when the sweep can read it at
        /// the same place (a name; an operation, at its operator; an entry, over its whole
        /// extent): an argument of the wrong type is then the same diagnostic in both,
        /// reported once.
        spans: Vec<Option<ArgAt>>,
        /// The call's parentheses: the sweeps' call has them where the function as written
        /// does, so that a wrong number of arguments is the same diagnostic, reported once.
        parens: proc_macro2::Span,
    },
    /// `(a, b, ...)`
    Tuple(Vec<Operand>),
    /// `[a, b, ...]`, with each element's place as written (where a type error in it is
    /// reported, as in the function as written).
    Array(Vec<Operand>, Vec<Place>),
    /// `base.field` (a named field of a struct, `.0` of a tuple): the reverse adds the change
    /// into that field of `base`'s adjoint, in place.
    Field { base: Operand, member: syn::Member },
    /// `Path { a: x, b: y }`: a struct built from values; the reverse hands each field's
    /// change to its value.
    Struct {
        path: TokenStream,
        fields: Vec<(syn::Member, Operand)>,
        /// Each field's value's place as written.
        places: Vec<Place>,
        /// Built as a tuple struct, `Path(x, y)` (the fields are `0`, `1`, ..): the span of
        /// its parentheses as written.
        tuple: Option<proc_macro2::Span>,
    },
    /// `SVector::new(a, b, ...)` (any nalgebra constructor `new` from entries): the callee
    /// as written and the entries in its order (row by row for a matrix).
    Build {
        callee: TokenStream,
        args: Vec<Operand>,
        /// Each entry's place as written.
        places: Vec<Place>,
    },
    /// `self.field(args)` inside `para!`, with each argument's first and last token as
    /// written: the three bodies give the sub-model its input spread over those, so that a
    /// mistake in the call is one diagnostic (see `lens_core::sub_model`).
    Sub {
        field: Ident,
        args: Vec<Operand>,
        ends: Vec<Option<(Span, Span)>>,
    },
    /// `if` / `match` / a nested block: one pullback per branch, chosen in the forward pass.
    Branch(Branch),
    /// `base[index]` with a forward-only index: the entry, whose change the reverse adds
    /// into `base`'s adjoint at that place.
    /// `brackets` is the span of `[index]` as written, where rustc reports a read it refuses.
    Index {
        base: Operand,
        index: TokenStream,
        brackets: proc_macro2::Span,
    },
    /// A `for` loop over a range bounded by a constant: one pullback per iteration, kept on
    /// a fixed-size tape. Its value is the tuple of the loop-carried bindings.
    Loop(Box<Loop>),
}

impl Op {
    /// The operands the operation takes by value (not a field's or an entry's base, which it
    /// reads through a borrow, nor what nested blocks read).
    pub fn taken(&self) -> Vec<&Operand> {
        match self {
            Op::Alias(o) => vec![o],
            Op::Rule { args, .. }
            | Op::Call { args, .. }
            | Op::Tuple(args)
            | Op::Array(args, _)
            | Op::Build { args, .. }
            | Op::Sub { args, .. } => args.iter().collect(),
            Op::Struct { fields, .. } => fields.iter().map(|(_, o)| o).collect(),
            Op::Field { .. } | Op::Index { .. } | Op::Branch(_) | Op::Loop(_) => Vec::new(),
        }
    }
}

pub struct Branch {
    pub head: BranchHead,
    pub blocks: Vec<Block>,
    /// Union of the blocks' free variables: what every branch's pullback returns.
    pub free: Vec<VarId>,
}

pub enum BranchHead {
    /// A plain nested block.
    Plain,
    /// `if <cond>` (the condition as written, including `let pat = e` for `if let`).
    If(TokenStream),
    /// `match <scrutinee> { <pat> [if guard] => ... }`.
    Match {
        scrutinee: TokenStream,
        arms: Vec<TokenStream>,
    },
}

/// A differentiated operator or method of the body as written, lowered to a rule: the
/// function as written runs it through the same rule (`!Value(|| rule(operand(a), ..).0)`),
/// so that a type error in it is the rule's one error, reported once for the three
/// functions, not rustc's own errors for the operator beside the rule's (see
/// `expand::written`).
pub struct InPlace {
    /// The rule's path, at the expression.
    pub func: TokenStream,
    /// The arguments after the operands, as written (`powi`'s exponent).
    pub extra: Vec<TokenStream>,
    /// How many of the expression's operands (the receiver first) the rule takes: fewer
    /// than written for `x * x` as `square(x)` and `x.dot(&x)` as `dot_self(x)`.
    pub operands: usize,
    /// `+ - * /` with one operand from forward-only data: that operand's index, and the type
    /// it is read with when nothing else fixes its own (`x + c.into()`, `v * c.into()`).
    pub infer: Option<(usize, Infer)>,
    /// Per operand (empty: none): forward-only data that a matrix method borrows (`k` in
    /// `h.dot(&k)` or `k.dot(&h)`), read as `rules::owned(&(k))` as the sweep reads it, so
    /// that `k` stays the caller's and a reference to a matrix reads as the matrix.
    pub owned: Vec<bool>,
    /// A method's rule run in a one-sided form (`Op::Rule::sided`): the differentiated
    /// operand's index.
    pub side: Option<usize>,
    /// A float method of several operands (`x.max(y)`, `Op::Rule::tied`): the operands after
    /// the receiver are read through `guard::Tie`, so that on a matrix the missing rule is
    /// the one error, not followed by a mismatch of each operand against the matrix type.
    pub tie: bool,
}

/// The type an operand whose type nothing fixes takes from the other operand
/// (`lens_core::guard`): `+` and `-` add values of one type; `*` and `/` scale by a scalar.
#[derive(Clone, Copy)]
pub enum Infer {
    /// The other operand's type (`guard::Infer`).
    Same,
    /// The other operand's scalar type: itself for a scalar, the entries' for a matrix
    /// (`guard::InferScalar`).
    Scalar,
}

/// Where a syntax node sits in the body the analysis read, as the key of [`InPlace`]:
/// the body is not moved or changed between the analysis and the rewrite.
pub fn node_key<T>(node: &T) -> usize {
    core::ptr::from_ref(node) as usize
}

/// Where a call's argument is in the function as written (see `Op::Call::spans`).
#[derive(Clone, Copy)]
pub struct ArgAt {
    /// The token rustc reports an argument of this form at (a name, an operator, a method's
    /// name), and where a lost change is reported.
    pub point: Span,
    /// The first and last tokens' spans, for a form reported over its whole extent (an entry
    /// `x[i]`, an operation, a method, parentheses): the sweep's argument is then spread over
    /// the same extent.
    pub ends: Option<(Span, Span)>,
    /// The form is a prefix operation where the function as written has it (an operator,
    /// run as `!Value(..)`; a sign), and the sweep's spread value is one too (`!Moved(v)`):
    /// rustc's help depends on the form (`(a * b).into()`, `x[0].into()`), and two helps
    /// that differ are two errors.
    pub prefix: bool,
}

/// Where a part of a value built from parts (an array's element, a struct's field, an entry
/// of a nalgebra `new`) is as written.
#[derive(Clone, Copy)]
pub struct Place {
    /// Its first token, where a binding read by name is read.
    pub first: Span,
    /// Its form, over which a computed part is spread (as a call's argument is).
    pub written: Option<ArgAt>,
}
