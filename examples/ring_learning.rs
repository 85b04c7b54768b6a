//! Learning over a finite ring: a lookup table with values in Z_7, differentiated by
//! `#[lens]` with the ring's own arithmetic, learned by reverse derivative steps.
//!
//! The model is `f(w, x) = w0 x0 + w1 x1 + w2 x2 + w3 x3` on one-hot inputs `x`. A step on
//! `(x, y)` pulls the output change `e = f(w, x) - y` back to the parameters,
//! `R_w[f](w, x, e) = e x`, and puts `w <- w - R_w` (a learning rate of 1: in Z_p every
//! step is exact on the entry the example selects).
//!
//! ```text
//! cargo run --example ring_learning
//! ```

use clap::Parser;
use paralens::circuits::ring::Zp;
use paralens::prelude::*;

type F7 = Zp<7>;

/// A table of four Z_7 values read by a one-hot input.
#[lens]
#[allow(clippy::too_many_arguments)] // four parameters and four inputs, each its own wire
pub fn table(w0: F7, w1: F7, w2: F7, w3: F7, x0: F7, x1: F7, x2: F7, x3: F7) -> F7 {
    w0 * x0 + w1 * x1 + w2 * x2 + w3 * x3
}

/// The one-hot input of entry `k`.
#[must_use]
pub fn one_hot(k: usize) -> [F7; 4] {
    core::array::from_fn(|i| F7::new(u64::from(i == k)))
}

/// Learns `target` from zero in one pass over the four entries; returns the learned table
/// and the number of wrong outputs after each step.
#[must_use]
pub fn learn(target: [u64; 4]) -> ([F7; 4], Vec<usize>) {
    let mut w = [F7::new(0); 4];
    let mut wrong_after = Vec::new();
    for (k, &t) in target.iter().enumerate() {
        let x = one_hot(k);
        let y = table(w[0], w[1], w[2], w[3], x[0], x[1], x[2], x[3]);
        let e = y - F7::new(t);
        let (d0, d1, d2, d3, ..) = table_rev(w[0], w[1], w[2], w[3], x[0], x[1], x[2], x[3], e);
        for (wi, di) in w.iter_mut().zip([d0, d1, d2, d3]) {
            *wi = *wi - di;
        }
        let wrong = (0..4)
            .filter(|&j| {
                let x = one_hot(j);
                table(w[0], w[1], w[2], w[3], x[0], x[1], x[2], x[3]) != F7::new(target[j])
            })
            .count();
        wrong_after.push(wrong);
    }
    (w, wrong_after)
}

/// Learning over a finite ring: a lookup table with values in Z_7, differentiated by
/// `#[lens]` with the ring's own arithmetic, learned by reverse derivative steps.
// No options: the parser is there for --help and --version, and to refuse any argument.
#[derive(Parser, Debug)]
#[command(name = "ring_learning", version)]
struct Args {}

fn main() {
    Args::parse();
    let target = [3, 5, 0, 6];
    let (w, wrong) = learn(target);
    println!("target table (mod 7): {target:?}");
    for (step, n) in wrong.iter().enumerate() {
        println!("after step {}: {n} wrong entries", step + 1);
    }
    println!("learned table: {:?}", w.map(Zp::value));
}
