// The guard of the generated reverse sweep, used where the types differ in a program that
// otherwise compiles (a defect `#[lens]` could have): the build fails, it never runs.
use paralens::__private::guard::{Mismatch as _, Typed};

fn main() {
    let x: f32 = Typed::<f32, _>::new(1.0_f64).lens_typed();
    println!("{x}");
}
