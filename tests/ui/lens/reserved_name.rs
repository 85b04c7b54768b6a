// A binding whose name begins with `__` in a `#[lens]` body: the generated code names its
// adjoints, pullbacks and temporaries so, and a user `__d` once replaced the output change of
// `name_rev` (a wrong gradient, silently). Refused at the name, with a rename suggested.
use paralens::prelude::*;

#[lens]
fn f(x: f64) -> f64 {
    let __d = x * 3.0;
    __d * x
}

fn main() {}
