// A layer generic over its scalar whose bound names another generic of the function
// (`T: Real + From<U>`): its lens type has no `InitAt` (the impl could not declare `U`), and
// the function and its lens type still compile and run.
use paralens::prelude::*;

#[lens]
fn mixed<T: Real + From<U>, U: Real>(#[param] w: T, x: T, y: U) -> T {
    let _ = y;
    w * x
}

fn main() {
    assert_eq!(mixed(2.0f64, 3.0, 1.0f32), 6.0);
    let (y, pb) = Mixed.vjp(&2.0f64, (3.0, 1.0f32));
    let mut dw = 0.0f64;
    let (dx, dy) = pb(1.0, &mut dw);
    assert_eq!((y, dw, dx, dy), (6.0, 3.0, 2.0, 0.0));
}
