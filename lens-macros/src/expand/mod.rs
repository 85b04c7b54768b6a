//! Expansion: A-normal form into Rust. A block becomes
//! `{ forward sweep; (value, move |__d| { reverse sweep; changes }) }`.

mod forward;
mod lens;
mod para;
mod reverse;
mod written;

pub(crate) use lens::camel;
pub use lens::{lens, stub};
use para::sub_model_call;
pub use para::{para, without_markers};
pub use written::{rewrite as rewrite_written, rewrite_para as rewrite_para_forward};

use crate::analyse::{Block, Operand, Var, VarId};
use crate::rt::RT;
use proc_macro2::TokenStream;
use quote::{ToTokens, format_ident, quote};
use reverse::{Sweep, adjoint};
use std::collections::{BTreeMap, BTreeSet, HashSet};
use syn::{Ident, Type};

/// What expansion needs from analysis.
pub struct Cx<'a> {
    pub vars: &'a [Var],
    /// In `para!`: the parameter type. Every pullback then also takes `__dp: &mut Params`,
    /// the caller's parameter-change buffer, into which sub-models add their changes.
    pub params: Option<&'a TokenStream>,
    /// In `para!`'s `vjp_params`: the arguments, whose changes nobody wants. Contributions to
    /// them are dropped, and a sub-model given only arguments runs its own `vjp_params`.
    pub skip: Option<&'a [VarId]>,
    /// The variables the forward sweep reads more than once: their reads clone (see
    /// [`crate::analyse::read_again`]).
    pub again: &'a BTreeSet<VarId>,
    /// In `name_rev` (one frame): the variables that live until its sweep has run and are
    /// never moved, which a recomputed loop may read through a reference (see
    /// [`crate::analyse::frame_bound`]); `None` where pullbacks leave the function.
    pub frame: Option<&'a BTreeSet<VarId>>,
    /// Variables read through a reference: `(*r)` for `x` (see `forward::loop_expr`).
    pub by_ref: BTreeMap<VarId, Ident>,
    /// For each loop (by the variable its statement defines), the outside values it reads
    /// that are read again after it (see [`crate::analyse::read_after_loops`]).
    pub after: &'a BTreeMap<VarId, BTreeSet<VarId>>,
    /// `(target, id)`: the operation defining `target` takes variable `id` more than once
    /// (`h + h`), each time as a clone of its own clone (see `forward::clones`).
    pub doubled: core::cell::RefCell<BTreeSet<(VarId, VarId)>>,
    /// In `para!`: the sub-model fields, whose methods' results the operators' inference
    /// guard leaves alone (see `analyse::infer_operand`).
    pub subs: &'a [Ident],
    /// In the body of a loop whose reverse runs first to last (`recompute::any_order`): the
    /// entries' changes into outside values are added after the body's sweep, in the order
    /// the body reads them (see `reverse::Sweep::deferred`).
    pub defer_entries: bool,
}

impl<'a> Cx<'a> {
    /// Every expansion context of a function's body: no variable read through a reference.
    pub fn new(
        vars: &'a [Var],
        params: Option<&'a TokenStream>,
        skip: Option<&'a [VarId]>,
        again: &'a BTreeSet<VarId>,
        frame: Option<&'a BTreeSet<VarId>>,
        after: &'a BTreeMap<VarId, BTreeSet<VarId>>,
    ) -> Self {
        Cx {
            vars,
            params,
            skip,
            again,
            frame,
            by_ref: BTreeMap::new(),
            after,
            doubled: core::cell::RefCell::default(),
            subs: &[],
            defer_entries: false,
        }
    }

    /// This context with `refs` also read through their references.
    pub fn reading_through(&self, refs: &[(VarId, Ident)]) -> Cx<'a> {
        let mut by_ref = self.by_ref.clone();
        by_ref.extend(refs.iter().cloned());
        Cx {
            vars: self.vars,
            params: self.params,
            skip: self.skip,
            again: self.again,
            frame: self.frame,
            by_ref,
            after: self.after,
            doubled: self.doubled.clone(),
            subs: self.subs,
            defer_entries: self.defer_entries,
        }
    }

    /// A read of variable `id`: its name, or `(*r)` where it is read through reference `r`.
    pub fn read(&self, id: VarId) -> TokenStream {
        match self.by_ref.get(&id) {
            Some(r) => quote!((*#r)),
            None => self.vars[id].ident.to_token_stream(),
        }
    }
}

impl Cx<'_> {
    /// Whether the change of `id` is not wanted.
    pub fn skipped(&self, id: VarId) -> bool {
        self.skip.is_some_and(|s| s.contains(&id))
    }

    /// Whether a sub-model call on `args` needs no input change (all of them are skipped
    /// arguments or forward-only values).
    pub fn input_change_unwanted(&self, args: &[crate::analyse::Operand]) -> bool {
        self.skip.is_some()
            && args.iter().all(|a| match a {
                crate::analyse::Operand::Var(id) => self.skipped(*id),
                crate::analyse::Operand::Const(_) => true,
            })
    }

    /// The variables of a branch whose changes its pullback returns.
    pub fn wanted(&self, free: &[VarId]) -> Vec<VarId> {
        free.iter().copied().filter(|v| !self.skipped(*v)).collect()
    }
}

/// One value a block's pullback returns.
pub enum Ret<'a> {
    /// The change of a variable; zero of the given type (or inferred) if it got none.
    Var(VarId, Option<&'a Type>),
    /// The change of a variable; zero of the type the witness names if it got none (a
    /// loop's carried value whose value before the iteration is never read).
    Zero(VarId, TokenStream),
    /// `()` for a slot that is not differentiated.
    Unit,
}

/// A block's forward statements, its value, the names of its outside adjoints, its reverse
/// sweep and the changes the sweep returns.
struct Parts {
    forward: Vec<TokenStream>,
    value: TokenStream,
    slots: Vec<Ident>,
    reverse: TokenStream,
    changes: TokenStream,
}

fn parts(
    cx: &Cx,
    b: &Block,
    returns: &[Ret],
    external: Option<(&[VarId], &TokenStream)>,
    tuple: bool,
    change: &TokenStream,
) -> Parts {
    let forward: Vec<TokenStream> = b.stmts.iter().map(|s| forward::stmt(cx, s)).collect();
    let value = match &b.result {
        // Read again later (by a loop's next iteration): the block hands on a clone.
        crate::analyse::Operand::Var(id) if cx.again.contains(id) => {
            let x = cx.read(*id);
            quote!(#x.clone())
        }
        other => forward::operand(cx, other),
    };
    let slots: Vec<Ident> = (0..external.map_or(0, |(e, _)| e.len()))
        .map(|k| format_ident!("__a{}", k))
        .collect();
    let mut sweep = Sweep {
        cx,
        have: HashSet::new(),
        external: external
            .map_or(&[][..], |(e, _)| e)
            .iter()
            .copied()
            .zip(slots.iter().cloned())
            .collect(),
        out: TokenStream::new(),
        deferred: Vec::new(),
    };
    sweep.contribute(&b.result, change.clone());
    for s in b.stmts.iter().rev() {
        sweep.stmt(s);
    }
    // Gathered last read first: added first read first.
    for entry in sweep.deferred.drain(..).rev() {
        sweep.out.extend(entry);
    }
    let changes: Vec<TokenStream> = returns
        .iter()
        .map(|r| match r {
            Ret::Unit => quote!(()),
            // An argument's change as its declared type: a change of another type comes from
            // a type error that the function as written reports.
            Ret::Var(id, Some(ty)) if sweep.have.contains(id) => {
                let d = adjoint(cx, *id);
                typed_as(&ty.to_token_stream(), quote!(#d))
            }
            Ret::Var(id, _) | Ret::Zero(id, _) if sweep.have.contains(id) => {
                let d = adjoint(cx, *id);
                quote!(#d)
            }
            Ret::Var(_, Some(ty)) => quote!(<#ty as #RT::Tangent>::zeros()),
            Ret::Var(_, None) => quote!(#RT::Tangent::zeros()),
            Ret::Zero(_, w) => quote!(#RT::zeros_of(#w)),
        })
        .collect();
    let changes = match (tuple, changes.as_slice()) {
        (false, [one]) => one.clone(),
        _ => quote!((#(#changes,)*)),
    };
    Parts {
        forward,
        value,
        slots,
        reverse: sweep.out,
        changes,
    }
}

/// The top block of a `#[lens]` function (no outside adjoints, no parameter buffer) as one
/// expression evaluating to the changes of its arguments at the output change `d`: the forward
/// statements and the reverse sweep in one frame, for `name_rev`. The pullbacks' captures are
/// not moved into a closure and out of `name_vjp` first (at 256 pairs of the Rosenbrock
/// function, 2 KB each).
pub fn block_rev(
    cx: &Cx,
    b: &Block,
    returns: &[Ret],
    d_type: &Type,
    d: &Ident,
    tuple: bool,
) -> TokenStream {
    // The output change, hygienic (mixed-site): the sweep reads it after the body's
    // statements, in the same scope, and a local the body binds must not hide it.
    let change = Ident::new("__d", proc_macro2::Span::mixed_site());
    // The block's value is not needed: the sweep starts from the output change.
    let Parts {
        forward,
        reverse,
        changes,
        ..
    } = parts(cx, b, returns, None, tuple, &quote!(#change));
    // The output change as the value's own type (see `typed_as`).
    let as_value = match &b.result {
        crate::analyse::Operand::Var(id) => {
            let x = cx.read(*id);
            let w = quote!(#RT::witness(&#x));
            let checked = typed_like_var(w, quote!(#change));
            quote!(let #change = #checked;)
        }
        // Not needed by the sweep, but run as the function runs it (its effects, a panic).
        // At the declared type, which may be what gives it one (`(x > 0.0).into()`).
        crate::analyse::Operand::Const(ts) if ts.to_string() != "()" => {
            quote!(let _: #d_type = #ts;)
        }
        crate::analyse::Operand::Const(_) => TokenStream::new(),
    };
    let traits = guard_traits();
    quote!({
        #traits
        let #change: #d_type = #d;
        #(#forward)*
        #as_value
        #reverse
        #changes
    })
}

/// Expands a block to an expression evaluating to `(value, pullback)`. The pullback
/// returns `returns` as a tuple (or the single value when `tuple` is false and there is
/// exactly one).
///
/// A nested block (a branch, a loop body) also takes the adjoints of `external`, the values
/// from outside it that it reads, as a tuple of `&mut`, and adds their changes in place; the
/// tokens beside them name their witnesses (see [`witnesses`]).
///
/// A branch's block also takes `like`, the witness of the type all the branch's blocks share
/// (the first block's): its value is read as that type, and its change as its own (see
/// `typed_as`). Blocks of two types are the function as written's error, once; without this
/// the sweep's blocks disagreed too, reported at `#[lens]` naming `Either`.
pub fn block(
    cx: &Cx,
    b: &Block,
    returns: &[Ret],
    external: Option<(&[VarId], &TokenStream)>,
    d_type: Option<&Type>,
    like: Option<&TokenStream>,
    tuple: bool,
) -> TokenStream {
    let Parts {
        forward,
        value,
        slots,
        reverse,
        changes,
    } = parts(cx, b, returns, external, tuple, &quote!(__d));
    let param = match d_type {
        Some(t) => quote!(__d: #t),
        None => quote!(__d),
    };
    // The top block of a function: its value as the declared type, and the output change as
    // the value's own type (see `typed_as`).
    let (as_declared, reverse) = match (external, d_type) {
        (None, Some(t)) => {
            let v = typed_as(&t.to_token_stream(), quote!(__v));
            let d = typed_like_var(quote!(__wv), quote!(__d));
            (
                quote!(
                    let __wv = #RT::witness(&__v);
                    let __v = #v;
                ),
                quote!(let __d = #d; #reverse),
            )
        }
        (Some(_), None) => match like {
            Some(wb) => {
                let v = typed_like_var(wb.clone(), quote!(__v));
                let d = typed_like_var(quote!(__wo), quote!(__d));
                (
                    quote!(
                        let __wo = #RT::witness(&__v);
                        let __v = #v;
                    ),
                    quote!(let __d = #d; #reverse),
                )
            }
            None => (TokenStream::new(), reverse),
        },
        _ => (TokenStream::new(), reverse),
    };
    let private = quote!(#RT);
    let closure = match (external, cx.params) {
        (None, Some(params)) => quote!(#private::pullback_with_buffer(
            &__v,
            #[inline(always)]
            move |#param, __dp: &mut #params| {
                #reverse
                #changes
            }
        )),
        (None, None) => quote!(#private::pullback_of(
            &__v,
            #[inline(always)]
            move |#param| {
                #reverse
                #changes
            }
        )),
        (Some((_, witness)), params) => {
            let helper = adjoints_helper(slots.len(), params.is_some());
            let buf = params.map(|p| quote!(, __dp: &mut #p));
            quote!(#private::#helper(
                &__v,
                #witness,
                #[inline(always)]
                move |#param, __acc #buf| {
                    let (#(#slots,)*) = __acc;
                    #reverse
                    #changes
                }
            ))
        }
    };
    let traits = external.is_none().then(guard_traits);
    quote!({
        #traits
        #(#forward)*
        let __v = #value;
        #as_declared
        let __pb = #closure;
        (__v, __pb)
    })
}

/// The one operand of `a op b` (an operator run through `rules::checked`) that is
/// differentiated, when the other is forward-only data: the sweep then runs the rule's
/// one-sided form (`lens_rule_left`, `lens_rule_right`), whose pullback gives that change
/// alone and skips the other's work (the second product of a layer's `w * x` with a
/// `#[nodiff]` input). The forward and the reverse ask the same question here, so they agree.
///
/// A method's rule with one-sided forms (`Op::Rule::sided`: `dot`, `component_mul`,
/// `component_div`) is run so too, as `func_left` or `func_right`
/// ([`crate::analyse::sided_rule`]).
pub fn differentiated_side(cx: &Cx, args: &[Operand]) -> Option<usize> {
    let diff: Vec<bool> = args
        .iter()
        .map(|a| matches!(a, Operand::Var(id) if cx.vars[*id].diff))
        .collect();
    match diff.as_slice() {
        [true, false] => Some(0),
        [false, true] => Some(1),
        _ => None,
    }
}

/// The forward-only operand `o` of an operator read through its guard (`lens_core::guard`),
/// `w` being the other operand: `Infer` for `+` and `-`, `InferScalar` for `*` and `/`.
pub fn infer_read(kind: crate::analyse::Infer, w: &TokenStream, o: &TokenStream) -> TokenStream {
    match kind {
        crate::analyse::Infer::Same => {
            quote!(#RT::guard::Infer::of(&#w, &#o).lens_infer(#o))
        }
        crate::analyse::Infer::Scalar => quote!(
            #RT::guard::InferScalar::of(&#w, &#o).lens_infer_scalar(#o)
        ),
    }
}

/// The traits the guards of a sweep resolve their methods through, brought into scope once
/// at the top of each generated function's body (nested blocks and closures are inside it).
pub fn guard_traits() -> TokenStream {
    quote!(
        #[allow(unused_imports)]
        use #RT::guard::{
            ChangeExact as _, NoChangeFromTheCall as _, ChangeOther as _, Exact as _, ExactTypes as _,
            FieldsAsIs as _, FieldsKnown as _, FieldsUnknown as _, InferAsIs as _, InferSame as _,
            InferScalarAsIs as _, InferScalarSame as _, Mismatch as _, MismatchTypes as _,
            SpreadExact as _, SpreadOther as _,
        };
        #[allow(unused_imports)]
        use #RT::rules::checked::{
            Dispatch as _, Mismatch as _, PickLeft as _, PickMatrix as _, PickProduct as _,
        };
    )
}

/// The value of the variable `x` read as a value of type `ty` in the sweep
/// (`lens_core::guard`): itself when it has that type; when it has another, the function as
/// written has a type error, reported there once, and the sweep goes on with the type it
/// expects instead of reporting it again. The value is handed over without a copy of its own
/// (a debug build gives each temporary a place in the frame).
pub fn typed_as(ty: &TokenStream, x: TokenStream) -> TokenStream {
    quote!(#RT::guard::Types::<#ty, _>::of(&#x).lens_typed_move(#x))
}

/// [`typed_as`] for the type a witness (`witness(&value)`) names.
pub fn typed_like_var(witness: TokenStream, x: TokenStream) -> TokenStream {
    quote!(#RT::guard::Types::like(#witness, &#x).lens_typed_move(#x))
}

/// [`typed_like_var`] for any expression `x` (an operand of a rule: `2.0`, `k.into()`),
/// taken by value.
pub fn typed_like(witness: TokenStream, x: TokenStream) -> TokenStream {
    quote!(#RT::guard::Typed::like(#witness, #x).lens_typed())
}

/// `let __w<n> = (witness(&x), ...);`: the types of a nested block's outside values, bound
/// before the block (inside it, a `let` may hide their names). Returns the statement and the
/// name.
pub fn witnesses(cx: &Cx, target: VarId, free: &[VarId]) -> (TokenStream, TokenStream) {
    let w = format_ident!("__w{}", target);
    let xs = free.iter().map(|v| cx.read(*v));
    let rt = RT;
    (quote!(let #w = (#(#rt::witness(&#xs),)*);), quote!(#w))
}

/// The `__private` helper fixing the signature of a nested block's pullback that adds into
/// `n` adjoints (see `adjoints0` ...).
pub fn adjoints_helper(n: usize, buffered: bool) -> Ident {
    if buffered {
        format_ident!("adjoints{}_buffered", n)
    } else {
        format_ident!("adjoints{}", n)
    }
}

/// [`allows`] for the generated sweeps (`name_vjp`, `name_rev`, a model's `vjp`): also
/// `unreachable_code`, which a block that diverges (`None => panic!()`) trips where the sweep
/// pairs its value with its pullback. Not for the function as written, whose own unreachable
/// code is the user's to hear about.
pub fn sweep_allows() -> TokenStream {
    allowing(quote!(unreachable_code,))
}

/// Lints that generated code may trip without a fault of the user's.
pub fn allows() -> TokenStream {
    allowing(TokenStream::new())
}

/// The lints of [`allows`], and `extra` (each followed by a comma).
pub(super) fn allowing(extra: TokenStream) -> TokenStream {
    quote!(#[allow(
        dead_code,
        unused_variables,
        unused_mut,
        unused_parens,
        unused_braces,
        unused_assignments,
        #extra
        clippy::all,
        clippy::pedantic
    )])
}
