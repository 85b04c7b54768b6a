//! nalgebra operations used by models: transpose, dot, component-wise product, sum.

use super::entrywise;
use crate::Real;
use nalgebra::SMatrix;

/// Matrices with a transpose, for [`transpose`]: static matrices, and heap matrices, whose
/// transpose is a new block (nalgebra's, reached through `Deref`, would be a static matrix
/// on the stack).
#[diagnostic::on_unimplemented(
    message = "no reverse rule for `.transpose()` of `{Self}`",
    label = "differentiated here, and `{Self}` is not a matrix",
    note = "`transpose` is differentiated on matrices (`SMatrix`, `HeapMatrix`)"
)]
pub trait Transpose: Sized {
    /// The transposed matrix's type, whose transpose is `Self` again.
    type Out: Transpose<Out = Self>;
    /// `self^T`, a new value.
    #[must_use]
    fn transposed(&self) -> Self::Out;
    /// [`transpose`], as a method: the macros call it so, and a value that is not a matrix
    /// is then one error (this trait's), with nothing following from the rule's result.
    #[inline(always)]
    fn transpose_vjp(self) -> (Self::Out, impl FnOnce(Self::Out) -> Self) {
        (self.transposed(), |d: Self::Out| d.transposed())
    }
}

impl<T: Real, const R: usize, const C: usize> Transpose for SMatrix<T, R, C> {
    type Out = SMatrix<T, C, R>;
    #[inline(always)]
    fn transposed(&self) -> SMatrix<T, C, R> {
        self.transpose()
    }
}

#[cfg(feature = "alloc")]
impl<T: Real, const R: usize, const C: usize> Transpose for crate::HeapMatrix<T, R, C> {
    type Out = crate::HeapMatrix<T, C, R>;
    #[inline]
    fn transposed(&self) -> crate::HeapMatrix<T, C, R> {
        self.transpose()
    }
}

/// `a^T`; reverse: `d^T`.
#[inline]
pub fn transpose<A: Transpose>(a: A) -> (A::Out, impl FnOnce(A::Out) -> A) {
    a.transpose_vjp()
}

/// Matrices with an inner product, for [`dot`] and [`dot_self`]: static and heap matrices.
#[diagnostic::on_unimplemented(
    message = "no reverse rule for `.dot` of `{Self}`",
    label = "differentiated here, and `{Self}` is not a matrix",
    note = "`a.dot(b)` is differentiated on matrices (`SMatrix`, `HeapMatrix`) of one shape"
)]
pub trait Dot: Sized {
    /// The entries' type.
    type Entry: Real;
    /// `<self, o>`, the sum of the entries' products.
    fn inner(&self, o: &Self) -> Self::Entry;
    /// `self k`, in the storage of `self`.
    #[must_use]
    fn scaled(self, k: Self::Entry) -> Self;
    /// `Self`, named: the operand's bound (`DotOperand<Self::Same>`) then names no type for
    /// a receiver without the rule (a scalar), and is not a second error.
    type Same;
    /// `m` itself.
    fn from_same(m: Self::Same) -> Self;
    /// `self` itself.
    fn to_same(self) -> Self::Same;
    /// [`dot`], as a method: the macros call it so, and a receiver that is not a matrix is
    /// then one error (this trait's), with nothing following from the rule's result.
    #[inline(always)]
    fn dot_vjp<B: DotOperand<Self::Same>>(
        self,
        b: B,
    ) -> (Self::Entry, impl FnOnce(Self::Entry) -> (Self, B::Change)) {
        let b = Self::from_same(b.value());
        (
            self.inner(&b),
            #[inline(always)]
            move |d: Self::Entry| (b.scaled(d), B::change(self.scaled(d).to_same())),
        )
    }
    /// [`Dot::dot_vjp`] with the operand `b` forward-only data: the receiver's change alone.
    #[inline(always)]
    fn dot_vjp_left<B: DotOperand<Self::Same>>(
        self,
        b: B,
    ) -> (Self::Entry, impl FnOnce(Self::Entry) -> Self) {
        let b = Self::from_same(b.value());
        (
            self.inner(&b),
            #[inline(always)]
            move |d: Self::Entry| b.scaled(d),
        )
    }
    /// [`Dot::dot_vjp`] with the receiver forward-only data: the operand's change alone.
    #[inline(always)]
    fn dot_vjp_right<B: DotOperand<Self::Same>>(
        self,
        b: B,
    ) -> (Self::Entry, impl FnOnce(Self::Entry) -> B::Change) {
        let value = self.inner(&Self::from_same(b.value()));
        (
            value,
            #[inline(always)]
            move |d: Self::Entry| B::change(self.scaled(d).to_same()),
        )
    }
    /// [`dot_self`], as a method.
    #[inline(always)]
    fn dot_self_vjp(self) -> (Self::Entry, impl FnOnce(Self::Entry) -> Self) {
        (
            self.inner(&self),
            #[inline(always)]
            move |d: Self::Entry| self.scaled(d + d),
        )
    }
}

impl<T: Real, const R: usize, const C: usize> Dot for SMatrix<T, R, C> {
    type Entry = T;
    #[inline(always)]
    fn inner(&self, o: &Self) -> T {
        self.dot(o)
    }
    #[inline(always)]
    fn scaled(self, k: T) -> Self {
        self * k
    }
    type Same = Self;
    #[inline(always)]
    fn from_same(m: Self) -> Self {
        m
    }
    #[inline(always)]
    fn to_same(self) -> Self {
        self
    }
}

#[cfg(feature = "alloc")]
impl<T: Real, const R: usize, const C: usize> Dot for crate::HeapMatrix<T, R, C> {
    type Entry = T;
    #[inline]
    fn inner(&self, o: &Self) -> T {
        self.dot(&**o)
    }
    #[inline]
    fn scaled(self, k: T) -> Self {
        self * k
    }
    type Same = Self;
    #[inline(always)]
    fn from_same(m: Self) -> Self {
        m
    }
    #[inline(always)]
    fn to_same(self) -> Self {
        self
    }
}

/// The second operand of a differentiated `dot`: a matrix of the receiver's shape, by value
/// or borrowed (`x.dot(w)` with `#[nodiff] w: &SVector`). Any other operand is one error at
/// the call, saying so: the change it would get back is this trait's, so no second error
/// follows from the change's type not fitting the operand.
#[diagnostic::on_unimplemented(
    message = "no reverse rule for `.dot` with a `{Self}` operand",
    label = "this `dot` is differentiated, and its operand is not a matrix of the receiver's kind and shape",
    note = "`a.dot(b)` takes `b` of the same kind (static or heap), shape and scalar type as `a`, by value or borrowed (`a.dot(&b)`)"
)]
pub trait DotOperand<M> {
    /// The change the operand gets back.
    type Change;
    /// The operand's value.
    fn value(self) -> M;
    /// The change, from `d a`.
    fn change(m: M) -> Self::Change;
}

impl<T: Real, const R: usize, const C: usize> DotOperand<SMatrix<T, R, C>> for SMatrix<T, R, C> {
    type Change = Self;
    #[inline(always)]
    fn value(self) -> Self {
        self
    }
    #[inline(always)]
    fn change(m: Self) -> Self {
        m
    }
}

impl<T: Real, const R: usize, const C: usize> DotOperand<SMatrix<T, R, C>> for &SMatrix<T, R, C> {
    type Change = SMatrix<T, R, C>;
    #[inline(always)]
    fn value(self) -> SMatrix<T, R, C> {
        *self
    }
    #[inline(always)]
    fn change(m: SMatrix<T, R, C>) -> SMatrix<T, R, C> {
        m
    }
}

#[cfg(feature = "alloc")]
impl<T: Real, const R: usize, const C: usize> DotOperand<crate::HeapMatrix<T, R, C>>
    for crate::HeapMatrix<T, R, C>
{
    type Change = Self;
    #[inline]
    fn value(self) -> Self {
        self
    }
    #[inline]
    fn change(m: Self) -> Self {
        m
    }
}

#[cfg(feature = "alloc")]
impl<T: Real, const R: usize, const C: usize> DotOperand<crate::HeapMatrix<T, R, C>>
    for &crate::HeapMatrix<T, R, C>
{
    type Change = crate::HeapMatrix<T, R, C>;
    #[inline]
    fn value(self) -> crate::HeapMatrix<T, R, C> {
        self.clone()
    }
    #[inline]
    fn change(m: crate::HeapMatrix<T, R, C>) -> crate::HeapMatrix<T, R, C> {
        m
    }
}

/// `<a, b>` (sum of products); reverse: `(d b, d a)`. The second operand may be borrowed
/// (`x.dot(w)` with `#[nodiff] w: &SVector`).
#[inline]
pub fn dot<A: Dot<Same = A>, B: DotOperand<A>>(
    a: A,
    b: B,
) -> (A::Entry, impl FnOnce(A::Entry) -> (A, B::Change)) {
    a.dot_vjp(b)
}

/// A forward-only receiver of a matrix method with operands (`k.dot(&h)`, `k` not
/// differentiated), read as an owned matrix: a copy of a static one, a pooled block for a
/// heap one, through any reference. The method borrows its receiver in the function as
/// written, so `k` stays the caller's, and `k: &SMatrix` works like `k: SMatrix`.
#[diagnostic::on_unimplemented(
    message = "no reverse rule for this method of `{Self}`",
    label = "`{Self}` is not a matrix",
    note = "`dot`, `component_mul` and `component_div` are differentiated on matrices (`SMatrix`, `HeapMatrix`), owned or borrowed"
)]
pub trait Owned {
    /// The owned matrix.
    type Value;
    /// A copy of the matrix.
    fn owned_value(&self) -> Self::Value;
}

impl<T: Real, const R: usize, const C: usize> Owned for SMatrix<T, R, C> {
    type Value = Self;
    #[inline(always)]
    fn owned_value(&self) -> Self {
        *self
    }
}

#[cfg(feature = "alloc")]
impl<T: Real, const R: usize, const C: usize> Owned for crate::HeapMatrix<T, R, C> {
    type Value = Self;
    #[inline]
    fn owned_value(&self) -> Self {
        self.clone()
    }
}

// Scalars too, so that a scalar where a matrix method wants a matrix (`x.component_div(&k)`
// with `#[nodiff] k: f64`) is one error, the rule's, not a second one here; and Z2 words,
// so that a borrowed `#[nodiff] m: &u64` is an operand of `^ & |` as a borrowed matrix is of
// `+ - *`.
macro_rules! owned_scalar {
    ($($t:ty),*) => {$(
        impl Owned for $t {
            type Value = $t;
            #[inline(always)]
            fn owned_value(&self) -> $t {
                *self
            }
        }
    )*};
}
owned_scalar!(f32, f64, u64);

impl<M: Owned + ?Sized> Owned for &M {
    type Value = M::Value;
    #[inline(always)]
    fn owned_value(&self) -> M::Value {
        (**self).owned_value()
    }
}

/// [`Owned::owned_value`] of `m`.
#[inline(always)]
pub fn owned<M: Owned + ?Sized>(m: &M) -> M::Value {
    m.owned_value()
}

/// Values with an entry-wise product, for [`component_mul`] and [`component_square`]:
/// static matrices, and heap matrices, whose pullbacks then hold two block pointers rather
/// than two matrices (a recurrent cell's captures stay off the stack).
///
/// The rules are its methods (`component_mul_vjp`, ...), as the macros call them: a receiver
/// that is not a matrix (a scalar) is then one error, this trait's, with no second one from
/// the operand's type or from the value's.
#[diagnostic::on_unimplemented(
    message = "no reverse rule for this method of `{Self}`",
    label = "differentiated here, and `{Self}` is not a matrix",
    note = "`component_mul` and `component_div` are differentiated on matrices (`SMatrix`, `HeapMatrix`) of one shape"
)]
pub trait ComponentProduct: Sized + Clone {
    /// An owned copy of a borrowed operand (a copy of a static matrix, a pool block for a
    /// heap one).
    #[must_use]
    fn owned(b: &Self) -> Self;
    /// `self ∘ o`, a new value.
    #[must_use]
    fn times(&self, o: &Self) -> Self;
    /// `self ∘ o ∘ k` for a scalar `k`, in the storage of `self`.
    #[must_use]
    fn times_into(self, o: &Self, k: f64) -> Self;
    /// `self ⊘ o`, a new value.
    #[must_use]
    fn over(&self, o: &Self) -> Self;
    /// `Self`, named: the operand's bound (`ComponentOperand<Self::Same>`) and the value's
    /// type then name no type for a receiver without the rule.
    type Same;
    /// `m` itself.
    fn from_same(m: Self::Same) -> Self;
    /// `self` itself.
    fn to_same(self) -> Self::Same;

    /// [`component_mul`], as a method.
    #[inline(always)]
    fn component_mul_vjp<B: ComponentOperand<Self::Same>>(
        self,
        b: B,
    ) -> (Self::Same, impl FnOnce(Self::Same) -> (Self, Self)) {
        let b = Self::from_same(b.into_matrix());
        (
            self.times(&b).to_same(),
            #[inline(always)]
            move |d: Self::Same| {
                let d = Self::from_same(d);
                (d.times(&b), d.times_into(&self, 1.0))
            },
        )
    }
    /// [`component_mul`] with `b` forward-only data: `self`'s change `d ∘ b` alone, in the
    /// storage of `d`.
    #[inline(always)]
    fn component_mul_vjp_left<B: ComponentOperand<Self::Same>>(
        self,
        b: B,
    ) -> (Self::Same, impl FnOnce(Self::Same) -> Self) {
        let b = Self::from_same(b.into_matrix());
        (
            self.times(&b).to_same(),
            #[inline(always)]
            move |d: Self::Same| Self::from_same(d).times_into(&b, 1.0),
        )
    }
    /// [`component_mul`] with `self` forward-only data: `b`'s change `d ∘ self` alone (`b`
    /// itself is not kept).
    #[inline(always)]
    fn component_mul_vjp_right<B: ComponentOperand<Self::Same>>(
        self,
        b: B,
    ) -> (Self::Same, impl FnOnce(Self::Same) -> Self) {
        (
            self.times(&Self::from_same(b.into_matrix())).to_same(),
            #[inline(always)]
            move |d: Self::Same| Self::from_same(d).times_into(&self, 1.0),
        )
    }
    /// [`component_square`], as a method.
    #[inline(always)]
    fn component_square_vjp(self) -> (Self::Same, impl FnOnce(Self::Same) -> Self) {
        (
            self.times(&self).to_same(),
            #[inline(always)]
            move |d: Self::Same| Self::from_same(d).times_into(&self, 2.0),
        )
    }
    /// [`component_div`], as a method.
    #[inline(always)]
    fn component_div_vjp<B: ComponentOperand<Self::Same>>(
        self,
        b: B,
    ) -> (Self::Same, impl FnOnce(Self::Same) -> (Self, Self)) {
        let b = Self::from_same(b.into_matrix());
        let q = self.over(&b);
        (
            q.clone().to_same(),
            #[inline(always)]
            move |d: Self::Same| {
                let da = Self::from_same(d).over(&b);
                let db = q.times_into(&da, -1.0);
                (da, db)
            },
        )
    }
    /// [`component_div`] with `b` forward-only data: `self`'s change `d ⊘ b` alone.
    #[inline(always)]
    fn component_div_vjp_left<B: ComponentOperand<Self::Same>>(
        self,
        b: B,
    ) -> (Self::Same, impl FnOnce(Self::Same) -> Self) {
        let b = Self::from_same(b.into_matrix());
        (
            self.over(&b).to_same(),
            #[inline(always)]
            move |d: Self::Same| Self::from_same(d).over(&b),
        )
    }
    /// [`component_div`] with `self` forward-only data: `b`'s change `-d ∘ self ⊘ b^2` alone.
    #[inline(always)]
    fn component_div_vjp_right<B: ComponentOperand<Self::Same>>(
        self,
        b: B,
    ) -> (Self::Same, impl FnOnce(Self::Same) -> Self) {
        let b = Self::from_same(b.into_matrix());
        let q = self.over(&b);
        (
            q.clone().to_same(),
            #[inline(always)]
            move |d: Self::Same| q.times_into(&Self::from_same(d).over(&b), -1.0),
        )
    }
}

impl<T: Real, const R: usize, const C: usize> ComponentProduct for SMatrix<T, R, C> {
    #[inline(always)]
    fn owned(b: &Self) -> Self {
        *b
    }
    #[inline(always)]
    fn times(&self, o: &Self) -> Self {
        entrywise::mul(self, o)
    }
    #[inline(always)]
    fn times_into(self, o: &Self, k: f64) -> Self {
        if k == 1.0 {
            entrywise::mul(&self, o)
        } else {
            entrywise::mul_scaled(&self, o, T::cst(k))
        }
    }
    #[inline(always)]
    fn over(&self, o: &Self) -> Self {
        entrywise::div(self, o)
    }
    type Same = Self;
    #[inline(always)]
    fn from_same(m: Self) -> Self {
        m
    }
    #[inline(always)]
    fn to_same(self) -> Self {
        self
    }
}

#[cfg(feature = "alloc")]
impl<T: Real, const R: usize, const C: usize> ComponentProduct for crate::HeapMatrix<T, R, C> {
    #[inline]
    fn owned(b: &Self) -> Self {
        b.clone()
    }
    #[inline]
    fn times(&self, o: &Self) -> Self {
        self.component_mul(o)
    }
    #[inline]
    fn times_into(self, o: &Self, k: f64) -> Self {
        use crate::activation::Elementwise;
        let k = T::cst(k);
        self.zip_entries(o, |x, y| x * y * k)
    }
    #[inline]
    fn over(&self, o: &Self) -> Self {
        self.component_div(o)
    }
    type Same = Self;
    #[inline(always)]
    fn from_same(m: Self) -> Self {
        m
    }
    #[inline(always)]
    fn to_same(self) -> Self {
        self
    }
}

/// The second operand of a differentiated `component_mul` or `component_div`: a matrix of
/// the receiver's kind and shape, by value or borrowed. Any other operand is one error at the
/// call, saying so.
#[diagnostic::on_unimplemented(
    message = "no reverse rule for this method with a `{Self}` operand",
    label = "differentiated here, and its operand is not a matrix of the receiver's kind and shape",
    note = "`a.component_mul(b)` and `a.component_div(b)` take `b` of the same kind (static or heap), shape and scalar type as `a`, by value or borrowed (`a.component_div(&b)`)"
)]
pub trait ComponentOperand<M> {
    /// The operand as an owned matrix: itself, or a copy of a borrowed one (a pooled block
    /// for a heap matrix).
    fn into_matrix(self) -> M;
}

impl<M: ComponentProduct> ComponentOperand<M> for M {
    #[inline(always)]
    fn into_matrix(self) -> M {
        self
    }
}

impl<M: ComponentProduct> ComponentOperand<M> for &M {
    #[inline(always)]
    fn into_matrix(self) -> M {
        M::owned(self)
    }
}

/// `a ∘ b` (component-wise); reverse: `(d ∘ b, d ∘ a)`. The second operand may be
/// borrowed.
#[inline]
pub fn component_mul<V: ComponentProduct<Same = V>>(
    a: V,
    b: impl ComponentOperand<V>,
) -> (V, impl FnOnce(V) -> (V, V)) {
    a.component_mul_vjp(b)
}

/// The sum of all entries; reverse: `d` in every entry.
#[inline]
pub fn sum<T: Real, const R: usize, const C: usize>(
    a: SMatrix<T, R, C>,
) -> (T, impl FnOnce(T) -> SMatrix<T, R, C>) {
    (a.sum(), |d: T| SMatrix::from_element(d))
}

/// `<a, a>`: a dot product of a value with itself; reverse `2 d a` (one change, where
/// `dot(a, a)` would return two equal ones to be added).
#[inline]
pub fn dot_self<A: Dot>(a: A) -> (A::Entry, impl FnOnce(A::Entry) -> A) {
    a.dot_self_vjp()
}

/// `a ∘ a`; reverse `2 d ∘ a`.
#[inline]
pub fn component_square<V: ComponentProduct<Same = V>>(a: V) -> (V, impl FnOnce(V) -> V) {
    a.component_square_vjp()
}

/// `a ⊘ b` (component-wise quotient) of static or heap matrices; reverse
/// `(d ⊘ b, -d ∘ a ⊘ b^2)`, the second as `-(d ⊘ b) ∘ q` with `q = a ⊘ b` kept from the
/// forward (one division per entry in the reverse, not two). The second operand may be
/// borrowed.
#[inline]
pub fn component_div<V: ComponentProduct<Same = V>>(
    a: V,
    b: impl ComponentOperand<V>,
) -> (V, impl FnOnce(V) -> (V, V)) {
    a.component_div_vjp(b)
}

/// The Euclidean (Frobenius) norm; reverse `d a / |a|` (zero at the origin, where it has no
/// derivative).
#[inline]
pub fn norm<T: Real, const R: usize, const C: usize>(
    a: SMatrix<T, R, C>,
) -> (T, impl FnOnce(T) -> SMatrix<T, R, C>) {
    let n = a.norm();
    (
        n,
        #[inline(always)]
        move |d: T| {
            if n == T::zero() {
                SMatrix::zeros()
            } else {
                a * (d / n)
            }
        },
    )
}

/// The squared norm `<a, a>`; reverse `2 d a`.
#[inline]
pub fn norm_squared<T: Real, const R: usize, const C: usize>(
    a: SMatrix<T, R, C>,
) -> (T, impl FnOnce(T) -> SMatrix<T, R, C>) {
    dot_self(a)
}

/// The mean of the entries; reverse `d / (R C)` in every entry.
#[inline]
pub fn mean<T: Real, const R: usize, const C: usize>(
    a: SMatrix<T, R, C>,
) -> (T, impl FnOnce(T) -> SMatrix<T, R, C>) {
    (a.mean(), |d: T| {
        SMatrix::from_element(d / T::cst((R * C) as f64))
    })
}

/// The largest entry (`a.max()`); reverse `d` at that entry (the first of equal ones).
#[inline]
pub fn max_entry<T: Real, const R: usize, const C: usize>(
    a: SMatrix<T, R, C>,
) -> (T, impl FnOnce(T) -> SMatrix<T, R, C>) {
    extreme(a, |x, best| x > best)
}

/// The smallest entry (`a.min()`); reverse `d` at that entry (the first of equal ones).
#[inline]
pub fn min_entry<T: Real, const R: usize, const C: usize>(
    a: SMatrix<T, R, C>,
) -> (T, impl FnOnce(T) -> SMatrix<T, R, C>) {
    extreme(a, |x, best| x < best)
}

/// Where the entry that `better` prefers to all others is (the first of equal ones), in
/// column-major order: the scan of `max()` and `min()` for static and heap matrices.
#[inline]
fn extreme_at<T: Real, const R: usize, const C: usize>(
    a: &SMatrix<T, R, C>,
    better: impl Fn(T, T) -> bool,
) -> usize {
    // Over the storage as a slice, the best value kept: nalgebra's iterator and indexing
    // go entry by entry through its strides, slow on a heap matrix of layer size.
    let entries = a.as_slice();
    let (mut at, mut best) = (0, entries[0]);
    for (i, &x) in entries.iter().enumerate() {
        if better(x, best) {
            (at, best) = (i, x);
        }
    }
    at
}

#[inline]
fn extreme<T: Real, const R: usize, const C: usize>(
    a: SMatrix<T, R, C>,
    better: impl Fn(T, T) -> bool,
) -> (T, impl FnOnce(T) -> SMatrix<T, R, C>) {
    let at = extreme_at(&a, better);
    (a[at], move |d: T| {
        let mut g = SMatrix::zeros();
        g[at] = d;
        g
    })
}

/// The reductions of a matrix to a scalar (`norm`, `norm_squared`, `sum`, `mean`, `max()`,
/// `min()`) as one rule trait, so that one on a value that is not a matrix (`x.norm()` with
/// `x: f64`) is one unmet bound, the same error in the function as written and in its sweep
/// (reported once), with no type for what follows it to disagree with. As functions taking an
/// `SMatrix`, each was a mismatch in both, with two different messages.
#[diagnostic::on_unimplemented(
    message = "no reverse rule for this reduction of `{Self}`",
    label = "differentiated here, and `{Self}` is not a matrix",
    note = "`norm`, `norm_squared`, `sum`, `mean`, `max()` and `min()` are differentiated on matrices (`SMatrix`, `HeapMatrix`)"
)]
pub trait Reduce: Sized {
    /// The entries' type.
    type Entry;
    /// [`norm`].
    fn norm_vjp(self) -> (Self::Entry, impl FnOnce(Self::Entry) -> Self);
    /// [`norm_squared`].
    fn norm_squared_vjp(self) -> (Self::Entry, impl FnOnce(Self::Entry) -> Self);
    /// [`sum`].
    fn sum_vjp(self) -> (Self::Entry, impl FnOnce(Self::Entry) -> Self);
    /// [`mean`].
    fn mean_vjp(self) -> (Self::Entry, impl FnOnce(Self::Entry) -> Self);
    /// [`max_entry`].
    fn max_vjp(self) -> (Self::Entry, impl FnOnce(Self::Entry) -> Self);
    /// [`min_entry`].
    fn min_vjp(self) -> (Self::Entry, impl FnOnce(Self::Entry) -> Self);
}

impl<T: Real, const R: usize, const C: usize> Reduce for SMatrix<T, R, C> {
    type Entry = T;
    #[inline(always)]
    fn norm_vjp(self) -> (T, impl FnOnce(T) -> Self) {
        norm(self)
    }
    #[inline(always)]
    fn norm_squared_vjp(self) -> (T, impl FnOnce(T) -> Self) {
        norm_squared(self)
    }
    #[inline(always)]
    fn sum_vjp(self) -> (T, impl FnOnce(T) -> Self) {
        sum(self)
    }
    #[inline(always)]
    fn mean_vjp(self) -> (T, impl FnOnce(T) -> Self) {
        mean(self)
    }
    #[inline(always)]
    fn max_vjp(self) -> (T, impl FnOnce(T) -> Self) {
        max_entry(self)
    }
    #[inline(always)]
    fn min_vjp(self) -> (T, impl FnOnce(T) -> Self) {
        min_entry(self)
    }
}

/// The reductions of a heap matrix: each pullback holds the matrix's block and writes the
/// change into it, so no second block is taken.
#[cfg(feature = "alloc")]
impl<T: Real, const R: usize, const C: usize> Reduce for crate::HeapMatrix<T, R, C> {
    type Entry = T;
    #[inline]
    fn norm_vjp(self) -> (T, impl FnOnce(T) -> Self) {
        let n = self.norm();
        (n, move |d: T| {
            let mut g = self;
            if n == T::zero() {
                g.fill(T::zero());
            } else {
                g.scale_mut(d / n);
            }
            g
        })
    }
    #[inline]
    fn norm_squared_vjp(self) -> (T, impl FnOnce(T) -> Self) {
        (self.norm_squared(), move |d: T| {
            let mut g = self;
            g.scale_mut(d + d);
            g
        })
    }
    #[inline]
    fn sum_vjp(self) -> (T, impl FnOnce(T) -> Self) {
        (self.sum(), move |d: T| {
            let mut g = self;
            g.fill(d);
            g
        })
    }
    #[inline]
    fn mean_vjp(self) -> (T, impl FnOnce(T) -> Self) {
        (self.mean(), move |d: T| {
            let mut g = self;
            g.fill(d / T::cst((R * C) as f64));
            g
        })
    }
    #[inline]
    fn max_vjp(self) -> (T, impl FnOnce(T) -> Self) {
        heap_extreme(self, |x, best| x > best)
    }
    #[inline]
    fn min_vjp(self) -> (T, impl FnOnce(T) -> Self) {
        heap_extreme(self, |x, best| x < best)
    }
}

#[cfg(feature = "alloc")]
#[inline]
fn heap_extreme<T: Real, const R: usize, const C: usize>(
    a: crate::HeapMatrix<T, R, C>,
    better: impl Fn(T, T) -> bool,
) -> (T, impl FnOnce(T) -> crate::HeapMatrix<T, R, C>) {
    let at = extreme_at(&a, better);
    (a[at], move |d: T| {
        let mut g = a;
        g.fill(T::zero());
        g[at] = d;
        g
    })
}
