//! Issue 42's reproducers: results that were silently wrong because a name decided what is
//! pure or which reverse a call reaches. Each is checked against the value computed by hand
//! and against central finite differences.
#![deny(warnings)]
#![allow(clippy::assign_op_pattern, clippy::needless_range_loop)]

use core::cell::Cell;
use paralens::prelude::*;

// ---- 1. Effects in a loop body are taped, never run again in the reverse ----

thread_local! {
    static FLIPS: Cell<usize> = const { Cell::new(0) };
}

/// A coin that comes up 1 at its first throw and 0 after, and counts its throws: an effect.
/// Generic, to be called with a turbofish.
#[allow(clippy::extra_unused_type_parameters)]
fn coin<T>() -> bool {
    FLIPS.with(|c| {
        let n = c.get();
        c.set(n + 1);
        n == 0
    })
}

#[allow(non_snake_case)]
fn COIN() -> bool {
    coin::<()>()
}

struct Urn;
impl Urn {
    fn draw<T>(&self) -> f64 {
        if coin::<T>() { 1.0 } else { 0.0 }
    }
}
static RNG: Urn = Urn;

fn flips() -> usize {
    FLIPS.with(Cell::get)
}

fn reset() {
    FLIPS.with(|c| c.set(0));
}

#[lens]
fn masked_turbofish_method(x: SVector<f64, 2>) -> f64 {
    let mut s = 0.0;
    for i in 0..2 {
        let m = RNG.draw::<f64>();
        s = s + m * x[i] * x[i];
    }
    s
}

#[lens]
fn masked_turbofish_call(x: SVector<f64, 2>) -> f64 {
    let mut s = 0.0;
    for i in 0..2 {
        let m = if coin::<f64>() { 1.0 } else { 0.0 };
        s = s + m * x[i] * x[i];
    }
    s
}

#[lens]
fn masked_upper_case_call(x: SVector<f64, 2>) -> f64 {
    let mut s = 0.0;
    for i in 0..2 {
        let m = if COIN() { 1.0 } else { 0.0 };
        s = s + m * x[i] * x[i];
    }
    s
}

#[lens]
fn masked_in_condition(x: SVector<f64, 2>) -> f64 {
    let mut s = 0.0;
    for i in 0..2 {
        if coin::<f64>() {
            s = s + x[i] * x[i];
        }
    }
    s
}

#[lens]
fn masked_upper_case_in_condition(x: SVector<f64, 2>) -> f64 {
    let mut s = 0.0;
    for i in 0..2 {
        if COIN() {
            s = s + x[i] * x[i];
        }
    }
    s
}

#[test]
fn effects_in_a_loop_run_once_and_the_reverse_sees_their_results() {
    type F = fn(SVector<f64, 2>, f64) -> SVector<f64, 2>;
    let table: [(&str, F); 5] = [
        ("turbofish method", masked_turbofish_method_rev),
        ("turbofish call", masked_turbofish_call_rev),
        ("upper-case call", masked_upper_case_call_rev),
        ("turbofish call in a condition", masked_in_condition_rev),
        (
            "upper-case call in a condition",
            masked_upper_case_in_condition_rev,
        ),
    ];
    let x = SVector::<f64, 2>::new(0.5, 1.0);
    for (name, rev) in table {
        reset();
        // The mask is 1, 0: f = x0^2, whose gradient is [2 x0, 0] = [1, 0]; run again in
        // the reverse, the mask would be 0, 0.
        let d = rev(x, 1.0);
        assert_eq!(d, SVector::<f64, 2>::new(1.0, 0.0), "{name}");
        assert_eq!(flips(), 2, "{name}: the effect ran {} times", flips());
    }
}

// ---- 2. A stateful sub-model called in a `para!` loop keeps its pullback ----

/// `y = m w x` with a mask `m` that is 1 at the first call and 0 after: a dropout of one
/// unit, whose state (the calls so far) changes at every forward run.
#[derive(Debug, Default)]
pub struct Dropout {
    calls: Cell<usize>,
}

impl Dropout {
    fn mask(&self) -> f64 {
        let n = self.calls.get();
        self.calls.set(n + 1);
        if n == 0 { 1.0 } else { 0.0 }
    }
}

impl Init for Dropout {
    type Param = f64;
    fn init_with<R: rand::Rng + ?Sized>(&self, _: &mut R) -> f64 {
        1.0
    }
}

impl Para<f64> for Dropout {
    type Param = f64;
    type Out = f64;
    fn vjp(&self, w: &f64, x: f64) -> (f64, impl FnOnce(f64, &mut f64) -> f64) {
        let (m, w) = (self.mask(), *w);
        (m * w * x, move |dy, dw: &mut f64| {
            *dw += m * x * dy;
            m * w * dy
        })
    }
}

para! {
    /// `sum_i drop(x_i)`: the first entry kept, the second dropped.
    #[derive(Debug, Default)]
    pub struct Dropped {
        drop: Dropout,
    }
    fn forward(&self, x: SVector<f64, 2>) -> f64 {
        let mut f = 0.0;
        for i in 0..2 {
            f = f + self.drop(x[i] * x[i]);
        }
        f
    }
}

#[test]
fn a_stateful_sub_model_in_a_para_loop_runs_once() {
    let x = SVector::<f64, 2>::new(0.5, 1.0);
    let w = 2.0;
    let p = DroppedParams { drop: w };
    // f = w x0^2: df/dw = x0^2 = 0.25, df/dx = [2 w x0, 0] = [2, 0].
    let model = Dropped::default();
    let (dp, dx) = model.changes(&p, x, 1.0);
    assert_eq!(
        model.drop.calls.get(),
        2,
        "changes: the sub-model ran again"
    );
    assert_eq!(dp.drop, 0.25, "changes: dw");
    assert_eq!(dx, SVector::<f64, 2>::new(2.0, 0.0), "changes: dx");

    let model = Dropped::default();
    let mut dp = DroppedParams { drop: 0.0 };
    let (y, pull) = model.vjp_params(&p, x);
    pull(1.0, &mut dp);
    assert_eq!(y, 0.5);
    assert_eq!(
        model.drop.calls.get(),
        2,
        "vjp_params: the sub-model ran again"
    );
    assert_eq!(dp.drop, 0.25, "vjp_params: dw");
}

// ---- 3. A call reaches the value and the reverse of one function ----

mod shadowed {
    use paralens::prelude::*;

    /// A plain helper named like the prelude's `relu`: it shadows it (the glob import), and
    /// the prelude's `relu_vjp` must not be taken for its reverse.
    pub fn relu(x: f64) -> f64 {
        x.clamp(0.0, 6.0)
    }

    #[lens]
    pub fn twice_relu6(x: f64) -> f64 {
        2.0 * relu(x)
    }
}

mod mine {
    /// A plain `tanh` of the user's, imported by name beside the prelude's glob.
    pub fn tanh(x: f64) -> f64 {
        x / (1.0 + x.abs())
    }
}

mod imported {
    use super::mine::tanh;
    use paralens::prelude::*;

    #[lens]
    pub fn soft(x: f64) -> f64 {
        tanh(x) * 3.0
    }
}

mod lensed {
    use paralens::prelude::*;

    /// A `#[lens]` function named like the prelude's: its own reverse is used.
    #[lens(name = Relu6)]
    pub fn relu(x: f64) -> f64 {
        x.clamp(0.0, 6.0)
    }

    #[lens]
    pub fn twice_relu6(x: f64) -> f64 {
        2.0 * relu(x)
    }

    #[lens]
    pub fn mapped(v: SVector<f64, 2>) -> f64 {
        v.map(relu).sum()
    }
}

paralens::custom_reverse! {
    /// A reverse written by hand with no `_rev`: `map` applies its vjp's pullback.
    fn clip1(x: f64) -> f64 {
        x.clamp(-1.0, 1.0)
    }
    fn clip1_vjp(x: f64) -> (f64, impl FnOnce(f64) -> f64) {
        (clip1(x), move |d| if x.abs() < 1.0 { d } else { 0.0 })
    }
}

#[lens]
fn clipped_sum(v: SVector<f64, 3>) -> f64 {
    v.map(clip1).sum() + clip1(v[0]) * 2.0
}

#[test]
fn a_custom_reverse_without_rev_maps() {
    let v = SVector::<f64, 3>::new(0.5, 2.0, -0.25);
    assert_eq!(clipped_sum(v), 0.5 + 1.0 - 0.25 + 1.0);
    assert_eq!(
        clipped_sum_rev(v, 1.0),
        SVector::<f64, 3>::new(3.0, 0.0, 1.0)
    );
}

#[test]
fn a_plain_function_shadowing_a_lens_function_is_refused() {
    // The function as written is the user's: relu6(7) = 6.
    assert_eq!(shadowed::twice_relu6(7.0), 12.0);
    let refused = std::panic::catch_unwind(|| shadowed::twice_relu6_vjp(7.0).0);
    let message = refused.expect_err("the prelude's reverse was taken for relu6's");
    let message = message.downcast_ref::<String>().expect("a message");
    assert!(message.contains("is not a `#[lens]` function"), "{message}");
    assert!(std::panic::catch_unwind(|| shadowed::twice_relu6_rev(7.0, 1.0)).is_err());
}

#[test]
fn a_plain_function_imported_by_name_is_refused() {
    assert_eq!(imported::soft(1.0), 1.5);
    assert!(std::panic::catch_unwind(|| imported::soft_rev(1.0, 1.0)).is_err());
}

#[test]
fn a_lens_function_shadowing_the_prelude_has_its_own_reverse() {
    // relu6 at 7 is flat: value 12, change 0 (the prelude's relu gave 14 and 2).
    assert_eq!(lensed::twice_relu6(7.0), 12.0);
    let (y, pb) = lensed::twice_relu6_vjp(7.0);
    assert_eq!((y, pb(1.0)), (12.0, 0.0));
    assert_eq!(lensed::twice_relu6_rev(3.0, 1.0), 2.0);
    let v = SVector::<f64, 2>::new(7.0, 3.0);
    assert_eq!(lensed::mapped(v), 9.0);
    assert_eq!(lensed::mapped_rev(v, 1.0), SVector::<f64, 2>::new(0.0, 1.0));
}

// ---- 4. `powf` at a zero exponent ----

#[lens]
fn to_the_zero(x: f64) -> f64 {
    x.powf(0.0)
}

#[lens]
fn to_the_power(x: f64, a: f64) -> f64 {
    x.powf(a)
}

#[test]
fn powf_at_a_zero_exponent_has_a_zero_change() {
    // x^0 = 1 everywhere, 0^0 included: the change is 0, not 0 * 0^-1 = NaN.
    for x in [0.0, 2.0, -3.0] {
        assert_eq!(to_the_zero(x), x.powf(0.0));
        assert_eq!(to_the_zero_rev(x, 1.0), 0.0, "at {x}");
    }
    let (y, (dx, da)) = (to_the_power(0.0, 0.0), to_the_power_rev(0.0, 0.0, 1.0));
    assert_eq!(y, 1.0);
    assert_eq!((dx, da), (0.0, 0.0));
    // Elsewhere the rule is unchanged: d/dx x^2 = 2x, d/da 2^a = 2^a ln 2.
    assert_eq!(to_the_power_rev(3.0, 2.0, 1.0).0, 6.0);
    let da = to_the_power_rev(2.0, 1.5, 1.0).1;
    assert!((da - 2f64.powf(1.5) * 2f64.ln()).abs() < 1e-12);
    // a = 1 at x = 0: x^1 = x, change 1.
    assert_eq!(to_the_power_rev(0.0, 1.0, 1.0).0, 1.0);
}

// ---- 5. `max` and `min` with a NaN operand are Rust's ----

#[lens]
fn larger(x: f64, y: f64) -> f64 {
    x.max(y)
}

#[lens]
fn smaller(x: f64, y: f64) -> f64 {
    x.min(y)
}

#[test]
fn max_and_min_ignore_a_nan_operand_as_rust_does() {
    let nan = f64::NAN;
    for (x, y) in [(1.0, nan), (nan, 1.0), (2.0, -1.0), (-1.0, 2.0), (3.0, 3.0)] {
        let (m, n) = (x.max(y), x.min(y));
        assert_eq!(larger(x, y).to_bits(), m.to_bits(), "max({x}, {y})");
        assert_eq!(smaller(x, y).to_bits(), n.to_bits(), "min({x}, {y})");
        let (dx, dy) = larger_rev(x, y, 1.0);
        // The change goes to the operand whose value is the result (`x` on a tie).
        let to_x = if x.is_nan() {
            false
        } else {
            y.is_nan() || x >= y
        };
        assert_eq!(
            (dx, dy),
            if to_x { (1.0, 0.0) } else { (0.0, 1.0) },
            "max({x}, {y})"
        );
        let (dx, dy) = smaller_rev(x, y, 1.0);
        let to_x = if x.is_nan() {
            false
        } else {
            y.is_nan() || x <= y
        };
        assert_eq!(
            (dx, dy),
            if to_x { (1.0, 0.0) } else { (0.0, 1.0) },
            "min({x}, {y})"
        );
    }
    // Both NaN: NaN, the change to `x`.
    assert!(larger(nan, nan).is_nan());
    assert_eq!(larger_rev(nan, nan, 1.0), (1.0, 0.0));
}

// ---- Documented constructs that did not compile ----

/// `#[nodiff]` arrays of data (`[bool; N]`, `[usize; N]`): their lens type's "no change" is
/// an array of no changes (it was `bool: Tangent` not satisfied).
#[lens]
fn masked(x: SVector<f64, 3>, #[nodiff] mask: [bool; 3]) -> f64 {
    let mut s = 0.0;
    for i in 0..3 {
        if mask[i] {
            s = s + x[i] * x[i];
        }
    }
    s
}

#[lens]
fn picked(x: SVector<f64, 3>, #[nodiff] at: [usize; 2]) -> f64 {
    x[at[0]] * x[at[1]]
}

#[test]
fn nodiff_arrays_of_data() {
    let x = SVector::<f64, 3>::new(1.0, 2.0, 3.0);
    let mask = [true, false, true];
    assert_eq!(masked(x, mask), 10.0);
    assert_eq!(
        masked_rev(x, mask, 1.0),
        SVector::<f64, 3>::new(2.0, 0.0, 6.0)
    );
    let (y, pb) = Masked.apply_vjp((x, mask));
    assert_eq!(
        (y, pb(1.0)),
        (10.0, (SVector::<f64, 3>::new(2.0, 0.0, 6.0), [false; 3]))
    );
    assert_eq!(
        picked_rev(x, [0, 2], 1.0),
        SVector::<f64, 3>::new(3.0, 0.0, 1.0)
    );
    let (_, pb) = Picked.apply_vjp((x, [1, 1]));
    assert_eq!(pb(1.0), (SVector::<f64, 3>::new(0.0, 4.0, 0.0), [0, 0]));
    // A `#[nodiff]` value with a `Tangent` still gets its zero.
    let (_, pb) = Scaled.apply_vjp((x, 2.0));
    assert_eq!(pb(1.0), (SVector::<f64, 3>::repeat(2.0), 0.0));
}

#[lens]
fn scaled(x: SVector<f64, 3>, #[nodiff] k: f64) -> f64 {
    x.sum() * k
}

/// A heap matrix given away (`w * x.clone()`) and read by entry afterwards: the move now
/// clones, as a second read by value did (it was E0382 at `#[lens]`).
#[lens]
fn given_away(w: HeapMatrix<f64, 2, 3>, x: HeapMatrix<f64, 3, 1>) -> f64 {
    let y = w * x.clone();
    y[(0, 0)] + x[(1, 0)] * y[(1, 0)]
}

#[test]
fn a_heap_matrix_read_by_entry_after_it_is_given_away() {
    use paralens::check_gradient;
    let w = HeapMatrix::<f64, 2, 3>::from_fn(|i, j| 0.3 * i as f64 - 0.2 * j as f64 + 0.1);
    let x = HeapMatrix::<f64, 3, 1>::from_fn(|i, _| 0.5 - 0.4 * i as f64);
    let f = |(w, x): (HeapMatrix<f64, 2, 3>, HeapMatrix<f64, 3, 1>)| given_away(w, x);
    let r = |(w, x): (HeapMatrix<f64, 2, 3>, HeapMatrix<f64, 3, 1>), d| given_away_rev(w, x, d);
    let check = check_gradient(f, r, (w, x), 1e-6);
    assert!(check.passes(1e-7), "{check}");
}
