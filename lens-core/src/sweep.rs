//! What the sweeps `#[lens]` and `para!` generate call at run time besides the rules and the
//! guards: the stub of a refused body, the pullbacks' typing helpers, and a branch's choice.

/// The body of a function `#[lens]` generates for a function whose body it refused (with
/// an error of its own, so the crate does not build and this never runs): a value of any
/// type, without the "unreachable code" lint that `unreachable!()` in a tuple would
/// raise.
#[cold]
pub fn refused<T>() -> T {
    unreachable!("a #[lens] function whose body was refused")
}

/// Returns `f` unchanged; its bound tells the compiler that the pullback takes a change
/// of the value's own type, which it could not always infer from the closure's body
/// (a branch's `(value, bindings)` tuple whose value is never used).
#[inline(always)]
pub fn pullback_of<V, R, F: FnOnce(V) -> R>(_value: &V, f: F) -> F {
    f
}

/// [`pullback_of`] for the pullbacks inside `para!`, which also take the model's
/// parameter-change buffer.
#[inline(always)]
pub fn pullback_with_buffer<V, P, R, F: FnOnce(V, &mut P) -> R>(_value: &V, f: F) -> F {
    f
}

/// Pullbacks of nested blocks (branches, loop bodies) that add the changes of the values
/// they read from outside into the caller's adjoints, passed as a tuple of `&mut`, instead
/// of returning them: an iteration that reads one entry of a vector then costs one
/// addition, not a whole vector. The bound makes the closure take borrows of any
/// lifetime, so the pullbacks of all iterations (one type) can each borrow the adjoints.
macro_rules! pullback_with_adjoints {
    ($($name:ident $buffered:ident ($($a:ident),*);)*) => {$(
        #[doc = concat!("A pullback adding into ", stringify!($($a),*), " (see the macro above).")]
        #[inline(always)]
        pub fn $name<V, $($a,)* R, F>(
            _value: &V,
            _adjoints: ($(core::marker::PhantomData<$a>,)*),
            f: F,
        ) -> F
        where
            F: for<'a> FnOnce(V, ($(&'a mut $a,)*)) -> R,
        {
            f
        }

        #[doc = concat!("[`", stringify!($name), "`] inside `para!`, with the parameter-change buffer.")]
        #[inline(always)]
        pub fn $buffered<V, P, $($a,)* R, F>(
            _value: &V,
            _adjoints: ($(core::marker::PhantomData<$a>,)*),
            f: F,
        ) -> F
        where
            F: for<'a> FnOnce(V, ($(&'a mut $a,)*), &'a mut P) -> R,
        {
            f
        }
    )*};
}

pullback_with_adjoints! {
    adjoints0 adjoints0_buffered ();
    adjoints1 adjoints1_buffered (A0);
    adjoints2 adjoints2_buffered (A0, A1);
    adjoints3 adjoints3_buffered (A0, A1, A2);
    adjoints4 adjoints4_buffered (A0, A1, A2, A3);
    adjoints5 adjoints5_buffered (A0, A1, A2, A3, A4);
    adjoints6 adjoints6_buffered (A0, A1, A2, A3, A4, A5);
    adjoints7 adjoints7_buffered (A0, A1, A2, A3, A4, A5, A6);
    adjoints8 adjoints8_buffered (A0, A1, A2, A3, A4, A5, A6, A7);
    adjoints9 adjoints9_buffered (A0, A1, A2, A3, A4, A5, A6, A7, A8);
    adjoints10 adjoints10_buffered (A0, A1, A2, A3, A4, A5, A6, A7, A8, A9);
    adjoints11 adjoints11_buffered (A0, A1, A2, A3, A4, A5, A6, A7, A8, A9, A10);
    adjoints12 adjoints12_buffered (A0, A1, A2, A3, A4, A5, A6, A7, A8, A9, A10, A11);
}

/// A value of any type, for the argument places of a type probe that is never called
/// (`let _ = || acc.cos(any())`: `#[lens]`'s probes of a loop that carries a number
/// literal's binding, in `lens-macros/src/analyse/probes.rs`).
pub fn any<T>() -> T {
    unreachable!("a #[lens] type probe is a closure that is never called")
}

/// The most outside values a branch or loop body may read (the arities above).
pub const MAX_ADJOINTS: usize = 12;

/// The pullback of one branch of an `if` or `match`, chosen in the forward pass.
pub enum Either<L, R> {
    /// The first branch.
    Left(L),
    /// Any later branch.
    Right(R),
}
