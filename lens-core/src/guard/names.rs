//! A lens type's input and name (see the module [`guard`](super)): the second input that
//! makes a wrong one the traits' own error, and the check that the type's name is its own.

/// The input of no lens. Each `#[lens]` type implements its traits for it too (hidden
/// from rustc's suggestions by `#[diagnostic::do_not_recommend]`): with one impl only,
/// rustc read a wrong input as a mismatch against that impl's input, once in each sweep
/// of a `para!` model (three errors); with two it is the traits' own "cannot take an
/// input of type" error, once.
pub enum NotAnInput {}

/// Implemented by `B` for `(B, B)` only (and for a second shape that no call can meet,
/// so that rustc waits for both arguments instead of inferring the second from the
/// first): `#[lens]` checks with it that both namespaces of a lens type's name still refer
/// to that type where the function is (an item of the same name would hide the type's glob
/// re-export), in one obligation, hence one error.
#[diagnostic::on_unimplemented(
    message = "another item has the name of the lens type that `#[lens]` generates for this function",
    label = "another item has the lens type's name",
    note = "`#[lens] fn f` generates a lens type named after the function (`F`); give it another name with `#[lens(name = OtherName)]`, or rename the other item"
)]
pub trait IsTheLensTypeOfThisFunction<V, B> {
    // Named for rustc's help line on a clash: "the trait `IsTheLensTypeOfThisFunction<_,
    // ..>` is not implemented for `Model`", pointing at the other item.
    /// Compiles when the type that a struct pattern of the name gives (`Self`) and the type
    /// of the name's unit value (`V`) are both `B`: the check of a lens type, whose name is
    /// never written as a type (a generic one, or a user's generic struct of that name, would
    /// be an error about generics first). A pattern `Gain { .. }` finds a braced or tuple
    /// struct that a unit value would not. Called as `<_ as IsTheLensTypeOfThisFunction<_, B>>::lens_named`, so
    /// that a clash is one error at the function's name, with no note into this crate.
    #[inline(always)]
    fn lens_named(&self, _: &V) {}
}

impl<B> IsTheLensTypeOfThisFunction<B, B> for B {}

impl<B> IsTheLensTypeOfThisFunction<(NotAnInput, B), B> for B {}
