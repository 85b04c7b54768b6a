//! Interleaved timing of two workloads: the ratio of their times read round by round.
//!
//! Criterion times one function for seconds, then the other: on a shared 2-vCPU machine the
//! load moves in between, and ratios of workloads of tens of nanoseconds moved by 10-30%
//! between runs. Here the two alternate in short blocks (about a millisecond each, in the
//! order A B B A, so neither always goes first), and each round gives one ratio of two
//! blocks timed a millisecond apart: a change of load shifts both. The median of the rounds'
//! ratios is one process's figure; its quartiles say how much the rounds agree. Processes
//! disagree more than rounds do (where the data lands moves a ratio), so `benches/ratio.sh`
//! runs several and takes the median of their medians.

use std::time::{Duration, Instant};

/// A workload: a closure that runs its call `n` times.
pub type Workload = Box<dyn FnMut(usize)>;

/// The per-call time of each workload and the ratio `a / b`, over `rounds` rounds.
pub struct Ratio {
    /// Calls per block.
    pub calls: usize,
    /// The median per-call time of `a`, in nanoseconds.
    pub a_ns: f64,
    /// The median per-call time of `b`, in nanoseconds.
    pub b_ns: f64,
    /// The rounds' ratios `a / b` at the 25th, 50th and 75th percentiles.
    pub quartiles: [f64; 3],
}

fn time(w: &mut Workload, n: usize) -> Duration {
    let start = Instant::now();
    w(n);
    start.elapsed()
}

/// Times `a` against `b` in `rounds` interleaved rounds of blocks of about `block` each.
pub fn measure(mut a: Workload, mut b: Workload, rounds: usize, block: Duration) -> Ratio {
    // Warm up both (caches, branch predictors, the CPU's clock) for about 300 ms.
    let warm = Instant::now();
    while warm.elapsed() < Duration::from_millis(300) {
        a(1000);
        b(1000);
    }
    // Calls per block: doubled until `a`'s block takes `block`.
    let mut calls = 1;
    while time(&mut a, calls) < block && calls < 1 << 30 {
        calls *= 2;
    }
    let (mut ta, mut tb, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
    for r in 0..rounds {
        let (x, y) = if r % 2 == 0 {
            let x = time(&mut a, calls);
            (x, time(&mut b, calls))
        } else {
            let y = time(&mut b, calls);
            (time(&mut a, calls), y)
        };
        ta.push(x.as_secs_f64());
        tb.push(y.as_secs_f64());
        ratios.push(x.as_secs_f64() / y.as_secs_f64());
    }
    let per_call = 1e9 / calls as f64;
    Ratio {
        calls,
        a_ns: percentile(&mut ta, 0.5) * per_call,
        b_ns: percentile(&mut tb, 0.5) * per_call,
        quartiles: [0.25, 0.5, 0.75].map(|q| percentile(&mut ratios, q)),
    }
}

fn percentile(v: &mut [f64], q: f64) -> f64 {
    v.sort_by(f64::total_cmp);
    v[((v.len() - 1) as f64 * q).round() as usize]
}
