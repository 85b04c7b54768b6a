// `A::tanh(x)` of a type parameter that is not a scalar (`A: Act`) is the user's function,
// not the float method: it is a call of a function with no generated reverse, refused,
// never differentiated as `x.tanh()` (which would disagree with the forward map).
use paralens::prelude::*;

pub trait Act {
    fn tanh(x: f64) -> f64;
}

#[lens]
fn act<A: Act>(x: f64) -> f64 {
    A::tanh(x) * 2.0
}

fn main() {}
