// As `scalar_bound_naming_another_generic`, with the scalar's bound in the where clause
// (`where T: Real + From<U>`): no `InitAt` (its impl would lose the bound and not compile),
// and the function and its lens type still compile and run.
use paralens::prelude::*;

#[lens]
fn mixed<T, U: Real>(#[param] w: T, x: T, y: U) -> T
where
    T: Real + From<U>,
{
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
