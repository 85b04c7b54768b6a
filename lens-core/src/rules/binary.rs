//! `+ - * /` and unary `-`, on scalars and nalgebra matrices.

use super::entrywise;
#[cfg(feature = "alloc")]
use crate::HeapMatrix;
use crate::Real;
#[cfg(feature = "alloc")]
use crate::heap::{add_product_nt, add_product_tn, product, product_nt, product_tn};
use nalgebra::SMatrix;

/// Reverse rule of `x + y`: `R(x, y; d) = (d, d)`.
#[diagnostic::on_unimplemented(
    message = "no reverse rule for `{Self} + {Rhs}`",
    label = "this sum is differentiated, and no rule takes a `{Self}` and a `{Rhs}`",
    note = "a differentiated `+` takes two values of one precision: two scalars or two matrices of one shape (a scalar is not added to every entry); convert one operand so that the types agree"
)]
pub trait AddRule<Rhs = Self>: Sized {
    /// The sum's type.
    type Out;
    /// `x + y` and its pullback.
    fn add_vjp(self, rhs: Rhs) -> (Self::Out, impl FnOnce(Self::Out) -> (Self, Rhs));
    /// [`Self::add_vjp`] when only `x` is differentiated (`y` is forward-only data): the
    /// pullback gives `x`'s change alone, and a rule that can skip `y`'s work does so.
    #[inline(always)]
    fn add_vjp_left(self, rhs: Rhs) -> (Self::Out, impl FnOnce(Self::Out) -> Self) {
        let (v, pb) = self.add_vjp(rhs);
        (v, move |d: Self::Out| pb(d).0)
    }
    /// [`Self::add_vjp`] when only `y` is differentiated: the pullback gives `y`'s change
    /// alone.
    #[inline(always)]
    fn add_vjp_right(self, rhs: Rhs) -> (Self::Out, impl FnOnce(Self::Out) -> Rhs) {
        let (v, pb) = self.add_vjp(rhs);
        (v, move |d: Self::Out| pb(d).1)
    }
}

/// Reverse rule of `x - y`: `R(x, y; d) = (d, -d)`.
#[diagnostic::on_unimplemented(
    message = "no reverse rule for `{Self} - {Rhs}`",
    label = "this difference is differentiated, and no rule takes a `{Self}` and a `{Rhs}`",
    note = "a differentiated `-` takes two values of one precision: two scalars or two matrices of one shape (a scalar is not subtracted from every entry); convert one operand so that the types agree"
)]
pub trait SubRule<Rhs = Self>: Sized {
    /// The difference's type.
    type Out;
    /// `x - y` and its pullback.
    fn sub_vjp(self, rhs: Rhs) -> (Self::Out, impl FnOnce(Self::Out) -> (Self, Rhs));
    /// [`Self::sub_vjp`] when only `x` is differentiated (`y` is forward-only data): the
    /// pullback gives `x`'s change alone, and a rule that can skip `y`'s work does so.
    #[inline(always)]
    fn sub_vjp_left(self, rhs: Rhs) -> (Self::Out, impl FnOnce(Self::Out) -> Self) {
        let (v, pb) = self.sub_vjp(rhs);
        (v, move |d: Self::Out| pb(d).0)
    }
    /// [`Self::sub_vjp`] when only `y` is differentiated: the pullback gives `y`'s change
    /// alone.
    #[inline(always)]
    fn sub_vjp_right(self, rhs: Rhs) -> (Self::Out, impl FnOnce(Self::Out) -> Rhs) {
        let (v, pb) = self.sub_vjp(rhs);
        (v, move |d: Self::Out| pb(d).1)
    }
}

/// Reverse rule of `x * y`: `(d y, x d)` for scalars, `(d y^T, x^T d)` for matrices.
#[diagnostic::on_unimplemented(
    message = "no reverse rule for `{Self} * {Rhs}`",
    label = "this product is differentiated, and no rule takes a `{Self}` and a `{Rhs}`",
    note = "a differentiated `*` takes two values of one precision: two scalars, a scalar and a matrix, or matrices of fitting shapes; convert one operand so that the types agree"
)]
pub trait MulRule<Rhs = Self>: Sized {
    /// The product's type.
    type Out;
    /// `x * y` and its pullback.
    fn mul_vjp(self, rhs: Rhs) -> (Self::Out, impl FnOnce(Self::Out) -> (Self, Rhs));
    /// [`Self::mul_vjp`] when only `x` is differentiated (`y` is forward-only data): the
    /// pullback gives `x`'s change alone, and a rule that can skip `y`'s work does so.
    #[inline(always)]
    fn mul_vjp_left(self, rhs: Rhs) -> (Self::Out, impl FnOnce(Self::Out) -> Self) {
        let (v, pb) = self.mul_vjp(rhs);
        (v, move |d: Self::Out| pb(d).0)
    }
    /// [`Self::mul_vjp`] when only `y` is differentiated: the pullback gives `y`'s change
    /// alone.
    #[inline(always)]
    fn mul_vjp_right(self, rhs: Rhs) -> (Self::Out, impl FnOnce(Self::Out) -> Rhs) {
        let (v, pb) = self.mul_vjp(rhs);
        (v, move |d: Self::Out| pb(d).1)
    }
}

/// Reverse rule of `x / y`: `(d / y, -d x / y^2)`.
#[diagnostic::on_unimplemented(
    message = "no reverse rule for `{Self} / {Rhs}`",
    label = "this quotient is differentiated, and no rule takes a `{Self}` and a `{Rhs}`",
    note = "a differentiated `/` takes two values of one precision: two scalars or a matrix and a scalar (`v / s`); convert one operand so that the types agree"
)]
pub trait DivRule<Rhs = Self>: Sized {
    /// The quotient's type.
    type Out;
    /// `x / y` and its pullback.
    fn div_vjp(self, rhs: Rhs) -> (Self::Out, impl FnOnce(Self::Out) -> (Self, Rhs));
    /// [`Self::div_vjp`] when only `x` is differentiated (`y` is forward-only data): the
    /// pullback gives `x`'s change alone, and a rule that can skip `y`'s work does so.
    #[inline(always)]
    fn div_vjp_left(self, rhs: Rhs) -> (Self::Out, impl FnOnce(Self::Out) -> Self) {
        let (v, pb) = self.div_vjp(rhs);
        (v, move |d: Self::Out| pb(d).0)
    }
    /// [`Self::div_vjp`] when only `y` is differentiated: the pullback gives `y`'s change
    /// alone.
    #[inline(always)]
    fn div_vjp_right(self, rhs: Rhs) -> (Self::Out, impl FnOnce(Self::Out) -> Rhs) {
        let (v, pb) = self.div_vjp(rhs);
        (v, move |d: Self::Out| pb(d).1)
    }
}

/// Reverse rule of `-x`: `-d`.
pub trait NegRule: Sized {
    /// `-x` and its pullback.
    fn neg_vjp(self) -> (Self, impl FnOnce(Self) -> Self);
}

/// Reverse rule of `x * x` (one value times itself): `2 x d`, one change where `x * y`
/// would give two equal ones to be added.
pub trait SquareRule: Sized {
    /// `x * x` and its pullback.
    fn square_vjp(self) -> (Self, impl FnOnce(Self) -> Self);
}

impl<T: Real> SquareRule for T {
    #[inline]
    fn square_vjp(self) -> (T, impl FnOnce(T) -> T) {
        (
            self * self,
            #[inline(always)]
            move |d: T| (d + d) * self,
        )
    }
}

/// A square heap matrix times itself, by `gemm`: `R(a; d) = d a^T + a^T d`, both products
/// added into one block.
#[cfg(feature = "alloc")]
impl<T: Real, const N: usize> SquareRule for HeapMatrix<T, N, N> {
    #[inline]
    fn square_vjp(self) -> (Self, impl FnOnce(Self) -> Self) {
        (product(&self, &self), move |d: Self| {
            let mut da = product_nt(&d, &self);
            add_product_tn(&mut da, &self, &d);
            da
        })
    }
}

/// A square matrix times itself: `R(a; d) = d a^T + a^T d`.
impl<T: Real, const N: usize> SquareRule for SMatrix<T, N, N> {
    #[inline]
    fn square_vjp(self) -> (Self, impl FnOnce(Self) -> Self) {
        (
            self * self,
            #[inline(always)]
            move |d: Self| d * self.transpose() + self.tr_mul(&d),
        )
    }
}

impl<T: Real> AddRule for T {
    type Out = T;
    #[inline]
    fn add_vjp(self, y: T) -> (T, impl FnOnce(T) -> (T, T)) {
        (
            self + y,
            #[inline(always)]
            |d: T| (d, d),
        )
    }
}

impl<T: Real> SubRule for T {
    type Out = T;
    #[inline]
    fn sub_vjp(self, y: T) -> (T, impl FnOnce(T) -> (T, T)) {
        (
            self - y,
            #[inline(always)]
            |d: T| (d, -d),
        )
    }
}

impl<T: Real> MulRule for T {
    type Out = T;
    #[inline]
    fn mul_vjp(self, y: T) -> (T, impl FnOnce(T) -> (T, T)) {
        (
            self * y,
            #[inline(always)]
            move |d: T| (d * y, self * d),
        )
    }
}

impl<T: Real> DivRule for T {
    type Out = T;
    #[inline]
    fn div_vjp(self, y: T) -> (T, impl FnOnce(T) -> (T, T)) {
        let q = self / y;
        (
            q,
            #[inline(always)]
            move |d: T| (d / y, -d * q / y),
        )
    }
}

impl<T: Real> NegRule for T {
    #[inline]
    fn neg_vjp(self) -> (T, impl FnOnce(T) -> T) {
        (
            -self,
            #[inline(always)]
            |d: T| -d,
        )
    }
}

impl<T: Real, const R: usize, const C: usize> AddRule for SMatrix<T, R, C> {
    type Out = Self;
    #[inline]
    fn add_vjp(self, y: Self) -> (Self, impl FnOnce(Self) -> (Self, Self)) {
        (
            self + y,
            #[inline(always)]
            |d| (d, d),
        )
    }
}

impl<T: Real, const R: usize, const C: usize> SubRule for SMatrix<T, R, C> {
    type Out = Self;
    #[inline]
    fn sub_vjp(self, y: Self) -> (Self, impl FnOnce(Self) -> (Self, Self)) {
        (
            self - y,
            #[inline(always)]
            |d: Self| {
                let n = entrywise::neg(&d);
                (d, n)
            },
        )
    }
}

impl<T: Real, const R: usize, const C: usize> NegRule for SMatrix<T, R, C> {
    #[inline]
    fn neg_vjp(self) -> (Self, impl FnOnce(Self) -> Self) {
        (
            entrywise::neg(&self),
            #[inline(always)]
            |d: Self| entrywise::neg(&d),
        )
    }
}

// Heap matrices: the sum and difference reuse an operand's block, and the pullbacks hold
// nothing (a recurrent cell on heap activations keeps its captures off the stack).
#[cfg(feature = "alloc")]
impl<T: Real, const R: usize, const C: usize> AddRule for HeapMatrix<T, R, C> {
    type Out = Self;
    #[inline]
    fn add_vjp(self, y: Self) -> (Self, impl FnOnce(Self) -> (Self, Self)) {
        (
            self + y,
            #[inline(always)]
            |d: Self| (d.clone(), d),
        )
    }
    #[inline]
    fn add_vjp_left(self, y: Self) -> (Self, impl FnOnce(Self) -> Self) {
        (self + y, |d: Self| d)
    }
    #[inline]
    fn add_vjp_right(self, y: Self) -> (Self, impl FnOnce(Self) -> Self) {
        (self + y, |d: Self| d)
    }
}

#[cfg(feature = "alloc")]
impl<T: Real, const R: usize, const C: usize> SubRule for HeapMatrix<T, R, C> {
    type Out = Self;
    #[inline]
    fn sub_vjp(self, y: Self) -> (Self, impl FnOnce(Self) -> (Self, Self)) {
        (
            self - y,
            #[inline(always)]
            |d: Self| {
                let n = -d.clone();
                (d, n)
            },
        )
    }
    #[inline]
    fn sub_vjp_left(self, y: Self) -> (Self, impl FnOnce(Self) -> Self) {
        (self - y, |d: Self| d)
    }
    #[inline]
    fn sub_vjp_right(self, y: Self) -> (Self, impl FnOnce(Self) -> Self) {
        (self - y, |d: Self| -d)
    }
}

#[cfg(feature = "alloc")]
impl<T: Real, const R: usize, const C: usize> NegRule for HeapMatrix<T, R, C> {
    #[inline]
    fn neg_vjp(self) -> (Self, impl FnOnce(Self) -> Self) {
        (
            -self,
            #[inline(always)]
            |d: Self| -d,
        )
    }
}

/// Scaling and division of a heap matrix by a scalar (`h * s`, `s * h`, `h / s`): the
/// value in a new block, the pullback holding `h`'s block and writing the matrix's change
/// into the output change's.
#[cfg(feature = "alloc")]
impl<T: Real, const R: usize, const C: usize> MulRule<T> for HeapMatrix<T, R, C> {
    type Out = Self;
    #[inline]
    fn mul_vjp(self, s: T) -> (Self, impl FnOnce(Self) -> (Self, T)) {
        (self.clone() * s, move |d: Self| {
            let ds = self.dot(&d);
            (d * s, ds)
        })
    }
    #[inline]
    fn mul_vjp_left(self, s: T) -> (Self, impl FnOnce(Self) -> Self) {
        (self * s, move |d: Self| d * s)
    }
    #[inline]
    fn mul_vjp_right(self, s: T) -> (Self, impl FnOnce(Self) -> T) {
        (self.clone() * s, move |d: Self| self.dot(&d))
    }
}

/// `s * h`: the rule of `h * s`, its changes swapped.
#[cfg(feature = "alloc")]
impl<T: Real, const R: usize, const C: usize> MulRule<HeapMatrix<T, R, C>> for T {
    type Out = HeapMatrix<T, R, C>;
    #[inline]
    fn mul_vjp(
        self,
        m: HeapMatrix<T, R, C>,
    ) -> (
        HeapMatrix<T, R, C>,
        impl FnOnce(HeapMatrix<T, R, C>) -> (T, HeapMatrix<T, R, C>),
    ) {
        let (y, pb) = m.mul_vjp(self);
        (y, move |d: HeapMatrix<T, R, C>| {
            let (dm, ds) = pb(d);
            (ds, dm)
        })
    }
    #[inline]
    fn mul_vjp_left(
        self,
        m: HeapMatrix<T, R, C>,
    ) -> (HeapMatrix<T, R, C>, impl FnOnce(HeapMatrix<T, R, C>) -> T) {
        m.mul_vjp_right(self)
    }
    #[inline]
    fn mul_vjp_right(
        self,
        m: HeapMatrix<T, R, C>,
    ) -> (
        HeapMatrix<T, R, C>,
        impl FnOnce(HeapMatrix<T, R, C>) -> HeapMatrix<T, R, C>,
    ) {
        m.mul_vjp_left(self)
    }
}

#[cfg(feature = "alloc")]
impl<T: Real, const R: usize, const C: usize> DivRule<T> for HeapMatrix<T, R, C> {
    type Out = Self;
    #[inline]
    fn div_vjp(self, s: T) -> (Self, impl FnOnce(Self) -> (Self, T)) {
        let mut y = self.clone();
        y.apply(|x| *x /= s);
        (y, move |mut d: Self| {
            let ds = -self.dot(&d) / (s * s);
            d.apply(|x| *x /= s);
            (d, ds)
        })
    }
    #[inline]
    fn div_vjp_left(self, s: T) -> (Self, impl FnOnce(Self) -> Self) {
        let mut y = self;
        y.apply(|x| *x /= s);
        (y, move |mut d: Self| {
            d.apply(|x| *x /= s);
            d
        })
    }
}

/// Matrix product (matrix-vector when `C = 1`): `R(a, b; d) = (d b^T, a^T d)`.
impl<T: Real, const R: usize, const K: usize, const C: usize> MulRule<SMatrix<T, K, C>>
    for SMatrix<T, R, K>
{
    type Out = SMatrix<T, R, C>;
    #[inline]
    fn mul_vjp(
        self,
        b: SMatrix<T, K, C>,
    ) -> (
        SMatrix<T, R, C>,
        impl FnOnce(SMatrix<T, R, C>) -> (Self, SMatrix<T, K, C>),
    ) {
        (
            self * b,
            #[inline(always)]
            move |d: SMatrix<T, R, C>| (d * b.transpose(), self.tr_mul(&d)),
        )
    }
    #[inline]
    fn mul_vjp_left(
        self,
        b: SMatrix<T, K, C>,
    ) -> (SMatrix<T, R, C>, impl FnOnce(SMatrix<T, R, C>) -> Self) {
        (
            self * b,
            #[inline(always)]
            move |d: SMatrix<T, R, C>| d * b.transpose(),
        )
    }
    #[inline]
    fn mul_vjp_right(
        self,
        b: SMatrix<T, K, C>,
    ) -> (
        SMatrix<T, R, C>,
        impl FnOnce(SMatrix<T, R, C>) -> SMatrix<T, K, C>,
    ) {
        (
            self * b,
            #[inline(always)]
            move |d: SMatrix<T, R, C>| self.tr_mul(&d),
        )
    }
}

/// Matrix product of heap matrices (matrix-vector when `C = 1`): the same rule, each product
/// by [`crate::gemm::gemm`] into a pooled block, so that a layer of MNIST size written with
/// `#[lens]` keeps its values off the stack and allocates nothing once the pool is warm. The
/// pullback holds both operands' blocks (two pointers).
#[cfg(feature = "alloc")]
impl<T: Real, const R: usize, const K: usize, const C: usize> MulRule<HeapMatrix<T, K, C>>
    for HeapMatrix<T, R, K>
{
    type Out = HeapMatrix<T, R, C>;
    #[inline]
    fn mul_vjp(
        self,
        b: HeapMatrix<T, K, C>,
    ) -> (
        HeapMatrix<T, R, C>,
        impl FnOnce(HeapMatrix<T, R, C>) -> (Self, HeapMatrix<T, K, C>),
    ) {
        (product(&self, &b), move |d: HeapMatrix<T, R, C>| {
            // d b^T, then a^T d.
            (product_nt(&d, &b), product_tn(&self, &d))
        })
    }
    /// Only `a` differentiated (a layer's weights times a `#[nodiff]` input): `d b^T`
    /// alone, one product fewer per step, and the pullback holds `b` only.
    #[inline]
    fn mul_vjp_left(
        self,
        b: HeapMatrix<T, K, C>,
    ) -> (
        HeapMatrix<T, R, C>,
        impl FnOnce(HeapMatrix<T, R, C>) -> Self,
    ) {
        let y = product(&self, &b);
        drop(self);
        (y, move |d: HeapMatrix<T, R, C>| product_nt(&d, &b))
    }
    /// Only `b` differentiated: `a^T d` alone.
    #[inline]
    fn mul_vjp_right(
        self,
        b: HeapMatrix<T, K, C>,
    ) -> (
        HeapMatrix<T, R, C>,
        impl FnOnce(HeapMatrix<T, R, C>) -> HeapMatrix<T, K, C>,
    ) {
        let y = product(&self, &b);
        drop(b);
        (y, move |d: HeapMatrix<T, R, C>| product_tn(&self, &d))
    }
}

/// Static weights times a heap batch (`w * x`, `w: SMatrix<T, R, K>`, `x: HeapMatrix<T, K,
/// C>`): the same rule, the product and the batch's change in pooled blocks by `gemm`, the
/// weights' change a static matrix like the weights.
#[cfg(feature = "alloc")]
impl<T: Real, const R: usize, const K: usize, const C: usize> MulRule<HeapMatrix<T, K, C>>
    for SMatrix<T, R, K>
{
    type Out = HeapMatrix<T, R, C>;
    #[inline]
    fn mul_vjp(
        self,
        b: HeapMatrix<T, K, C>,
    ) -> (
        HeapMatrix<T, R, C>,
        impl FnOnce(HeapMatrix<T, R, C>) -> (Self, HeapMatrix<T, K, C>),
    ) {
        (product(&self, &b), move |d: HeapMatrix<T, R, C>| {
            let mut da = Self::zeros();
            add_product_nt(&mut da, &d, &b);
            (da, product_tn(&self, &d))
        })
    }
    /// Only the weights differentiated (a `#[nodiff]` batch): `d b^T` alone.
    #[inline]
    fn mul_vjp_left(
        self,
        b: HeapMatrix<T, K, C>,
    ) -> (
        HeapMatrix<T, R, C>,
        impl FnOnce(HeapMatrix<T, R, C>) -> Self,
    ) {
        (product(&self, &b), move |d: HeapMatrix<T, R, C>| {
            let mut da = Self::zeros();
            add_product_nt(&mut da, &d, &b);
            da
        })
    }
    /// Only the batch differentiated (fixed weights): `a^T d` alone.
    #[inline]
    fn mul_vjp_right(
        self,
        b: HeapMatrix<T, K, C>,
    ) -> (
        HeapMatrix<T, R, C>,
        impl FnOnce(HeapMatrix<T, R, C>) -> HeapMatrix<T, K, C>,
    ) {
        let y = product(&self, &b);
        drop(b);
        (y, move |d: HeapMatrix<T, R, C>| product_tn(&self, &d))
    }
}

/// Heap weights times a static input (`w * x`, `w: HeapMatrix<T, R, K>`, `x: SMatrix<T, K,
/// C>`, one example or a small static batch): the same rule, the product and the weights'
/// change in pooled blocks by `gemm`, the input's change a static matrix like the input.
#[cfg(feature = "alloc")]
impl<T: Real, const R: usize, const K: usize, const C: usize> MulRule<SMatrix<T, K, C>>
    for HeapMatrix<T, R, K>
{
    type Out = HeapMatrix<T, R, C>;
    #[inline]
    fn mul_vjp(
        self,
        b: SMatrix<T, K, C>,
    ) -> (
        HeapMatrix<T, R, C>,
        impl FnOnce(HeapMatrix<T, R, C>) -> (Self, SMatrix<T, K, C>),
    ) {
        (product(&self, &b), move |d: HeapMatrix<T, R, C>| {
            let mut db = SMatrix::zeros();
            add_product_tn(&mut db, &self, &d);
            (product_nt(&d, &b), db)
        })
    }
    /// Only the weights differentiated (a `#[nodiff]` input): `d b^T` alone.
    #[inline]
    fn mul_vjp_left(
        self,
        b: SMatrix<T, K, C>,
    ) -> (
        HeapMatrix<T, R, C>,
        impl FnOnce(HeapMatrix<T, R, C>) -> Self,
    ) {
        let y = product(&self, &b);
        drop(self);
        (y, move |d: HeapMatrix<T, R, C>| product_nt(&d, &b))
    }
    /// Only the input differentiated (fixed weights): `a^T d` alone.
    #[inline]
    fn mul_vjp_right(
        self,
        b: SMatrix<T, K, C>,
    ) -> (
        HeapMatrix<T, R, C>,
        impl FnOnce(HeapMatrix<T, R, C>) -> SMatrix<T, K, C>,
    ) {
        (product(&self, &b), move |d: HeapMatrix<T, R, C>| {
            let mut db = SMatrix::zeros();
            add_product_tn(&mut db, &self, &d);
            db
        })
    }
}

/// Scaling on the right, `m * s`: `R(m, s; d) = (s d, <m, d>)`.
impl<T: Real, const R: usize, const C: usize> MulRule<T> for SMatrix<T, R, C> {
    type Out = Self;
    #[inline]
    fn mul_vjp(self, s: T) -> (Self, impl FnOnce(Self) -> (Self, T)) {
        (
            self * s,
            #[inline(always)]
            move |d: Self| (d * s, self.dot(&d)),
        )
    }
}

/// Scaling on the left, `s * m`.
impl<T: Real, const R: usize, const C: usize> MulRule<SMatrix<T, R, C>> for T {
    type Out = SMatrix<T, R, C>;
    #[inline]
    fn mul_vjp(
        self,
        m: SMatrix<T, R, C>,
    ) -> (
        SMatrix<T, R, C>,
        impl FnOnce(SMatrix<T, R, C>) -> (T, SMatrix<T, R, C>),
    ) {
        (
            m * self,
            #[inline(always)]
            move |d: SMatrix<T, R, C>| (m.dot(&d), d * self),
        )
    }
}

/// Division by a scalar, `m / s`: `R(m, s; d) = (d / s, -<m, d> / s^2)`.
impl<T: Real, const R: usize, const C: usize> DivRule<T> for SMatrix<T, R, C> {
    type Out = Self;
    #[inline]
    fn div_vjp(self, s: T) -> (Self, impl FnOnce(Self) -> (Self, T)) {
        (
            self / s,
            #[inline(always)]
            move |d: Self| (d / s, -self.dot(&d) / (s * s)),
        )
    }
}
