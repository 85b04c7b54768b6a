// A misspelt layer type in a `para!` model: one error, rustc's "cannot find type" with its
// suggestion, not again as the derived `Flat` impl's `slices` and `slices_mut` (E0053).
use paralens::prelude::*;

para! {
    pub struct Model {
        l1: Dense<4, 8>,
        l2: Dence<8, 3>,
    }
    fn forward(&self, x: SVector<f32, 4>) -> SVector<f32, 3> {
        let h = self.l1(x);
        self.l2(h)
    }
}

fn main() {}
