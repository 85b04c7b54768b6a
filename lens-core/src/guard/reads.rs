//! The sweep's values read at the types of the function as written (see the module
//! [`guard`](super)): rules' values, operands, witnesses of types, and indices.

/// A rule's value without its pullback: the function as written runs a differentiated
/// operation as `!Value(|| rule(operand(a), operand(b)).0)`, a method as `Value(|| ..)
/// .get()`. The rule runs in the closure's frame, not the caller's: a debug build keeps
/// every temporary of a frame for the frame's whole life, and the pullbacks (with the
/// operands they hold) left in the forward function's own frame made it four times as
/// large as written (545 KB against 135 KB, for two 64x256 products and five vector
/// operations); in closures it is 632 bytes.
///
/// The value is spanned from the expression's first token to its last (`!` or `Value` at
/// the first, the parentheses at the last), so that rustc reports a type error of it
/// over the whole expression with the help it gives for the code as written: a prefix
/// operation's precedence has it write `(y * 3.0).into()`, a method call's
/// `y.sin().into()`. A call spanned at the operator had it insert `.into()` after the
/// operator (`y *.into() 3.0`); a call over `y * 3.0`, after `3.0`. Neither form takes an
/// expected type into the closure, as a generic function's argument would, where the
/// mismatch was reported at an operand.
pub struct Value<F>(pub F);

impl<V, F: FnOnce() -> V> Value<F> {
    /// The rule's value (a method's form: a postfix call, so that an index after it,
    /// `v.component_mul(&w)[0]`, indexes its value).
    #[inline]
    pub fn get(self) -> V {
        (self.0)()
    }
}

impl<V, F: FnOnce() -> V> core::ops::Not for Value<F> {
    type Output = V;

    /// The rule's value (an operator's form).
    #[inline]
    fn not(self) -> V {
        (self.0)()
    }
}

/// A value of the sweep as a prefix operation (`!Moved(v)` is `v`): spread over an
/// operation as written (a call's argument, an array's element), rustc reports a type
/// error of it as it does the function as written's `!Value(..)` there, with the same
/// help, and merges the two.
pub struct Moved<T>(pub T);

impl<T> core::ops::Not for Moved<T> {
    type Output = T;

    /// The value.
    #[inline(always)]
    fn not(self) -> T {
        self.0
    }
}

/// An operand of a rule in the function as written, as given: the call, spanned at the
/// operation, gives the operand the operation's span as `name_vjp`'s operands have it, so
/// that a type error is the same diagnostic in both and reported once.
#[inline]
pub fn operand<T>(x: T) -> T {
    x
}

/// The type of `value`, as a zero-sized marker: it tells the helpers above the types of
/// the adjoints a nested pullback adds into (a value's change has the value's type), even
/// where that pullback is never called.
#[inline(always)]
pub fn witness<T>(_value: &T) -> core::marker::PhantomData<T> {
    core::marker::PhantomData
}

/// The type of the change a pullback takes, with no value: the sweep hands a rule's
/// pullback its change read at this type (`guard::Types`), so that a value bound or built
/// at another type (`let s: f64 = y * 3.0` of an `f32` `y`) is one error, the function as
/// written's, not a second at the operator.
#[inline(always)]
pub fn change_witness<A, R, P: FnOnce(A) -> R>(_pullback: &P) -> core::marker::PhantomData<A> {
    core::marker::PhantomData
}

/// An index, read back through the type of the entry it read (`E::Index`, which is
/// `I`): where the read failed (`v[k]` of an `i32` `k`, rustc's "cannot be indexed by
/// `i32`"), the entry's type is an error and so is this index, and rustc reports the read
/// alone, not also the reverse's `IndexRule<i32>` (at `#[lens]`).
#[inline(always)]
pub fn index_typed<I, E: IndexedBy<I>>(i: I, _entry: &E) -> E::Index {
    E::same(i)
}

/// See [`index_typed`].
pub trait IndexedBy<I> {
    /// `I`.
    type Index;
    /// `i`.
    fn same(i: I) -> Self::Index;
}

impl<I, E> IndexedBy<I> for E {
    type Index = I;
    #[inline(always)]
    fn same(i: I) -> I {
        i
    }
}

/// The reverse's adjoint of an indexed value, read back through the index's type (an
/// [`index_typed`] index): where the forward read failed (`m[0][1]`, an entry indexed
/// again), the index's type is an error and so is this, and rustc reports the read alone,
/// not also `f64: IndexRule<_>` (at `#[lens]`).
#[inline(always)]
pub fn slot_of_index<S, I: IndexedBy<S>>(slot: S, _index: &I) -> I::Index {
    I::same(slot)
}

/// Zero of the type a [`witness`] names: an adjoint started before anything reaches it,
/// whose type the code around it does not fix in time (a field of it is taken first).
#[inline(always)]
pub fn zeros_of<T: crate::Tangent>(_witness: core::marker::PhantomData<T>) -> T {
    T::zeros()
}
