// A struct literal of differentiated values naming a field the struct lacks, and a tuple
// struct built with an argument too many or too few: one error each, rustc's at the literal, with its
// help. It was two: the sweep read the change of the unknown field (`d.angel`, E0609), and
// built the tuple struct as `Pair { 0: .., 1: .., 2: .. }` (E0560 and E0609 at `#[lens]`).
use paralens::prelude::*;

#[derive(Clone, Copy, Debug, PartialEq, Tangent)]
pub struct Pose {
    pub at: f64,
    pub angle: f64,
}

#[derive(Clone, Copy, Debug, PartialEq, Tangent)]
pub struct Pair(pub f64, pub f64);

#[lens]
fn make_pose(x: f64, y: f64) -> Pose {
    Pose { at: x * 2.0, angel: y.sin() }
}

#[lens]
fn pose_read(x: f64, y: f64) -> f64 {
    let p = Pose { angel: y.sin(), at: x * 2.0 };
    p.at * y
}

#[lens]
fn make_pair(x: f64, y: f64) -> Pair {
    Pair(x * 2.0, y.sin(), x)
}

// An argument too few: one error, with rustc's help (it was two, the sweeps' suggesting
// `Pair(x, /* f64 */)(x)`).
#[lens]
fn make_half_pair(x: f64) -> f64 {
    let p = Pair(x * 2.0);
    p.0
}

fn main() {}
