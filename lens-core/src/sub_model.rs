//! A `para!` model's call of one of its sub-models, `self.l(x)`, checked in one form for the
//! model's three bodies (`forward`, `vjp`, `vjp_params`).
//!
//! Each body passes the input through [`sub_model_input`] with the same tokens and spans
//! before calling the sub-model: a mistake in the call (an input the sub-model does not take,
//! or one at another scalar than its parameters) is then one diagnostic, as rustc reports
//! identical ones once, instead of one per body naming that body's method.

use crate::para::Para;

/// `x` in `self.l(x)` inside a `para!` model, checked: the sub-model `model`, at its
/// parameters `param`, must be a parametric lens on it.
#[doc(hidden)]
#[inline(always)]
pub fn sub_model_input<L: Para<X>, X>(model: &L, param: &L::Param, input: X) -> X {
    let _ = (model, param);
    input
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Dense, Init};
    use nalgebra::SVector;

    #[test]
    fn the_input_passes_unchanged() {
        let layer = Dense::<3, 2, f64>::new();
        let p = layer.init(4);
        let x = SVector::<f64, 3>::new(0.5, -1.0, 2.0);
        assert_eq!(sub_model_input(&layer, &p, x), x);
    }
}
