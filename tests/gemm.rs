//! The allocation-free matrix product against a naive triple loop, for every kernel this CPU
//! runs, both precisions, every orientation and block edge.

use paralens::Real;
use paralens::gemm::{Kernel, View, ViewMut, gemm, gemm_with};

fn naive<T: Real>(a: &[T], b: &[T], m: usize, n: usize, k: usize) -> Vec<T> {
    let mut c = vec![T::zero(); m * n];
    for j in 0..n {
        for i in 0..m {
            let mut s = T::zero();
            for p in 0..k {
                s += a[i + p * m] * b[p + j * k];
            }
            c[i + j * m] = s;
        }
    }
    c
}

fn values<T: Real>(len: usize, seed: usize) -> Vec<T> {
    (0..len)
        .map(|i| T::cst((((i * 7919 + seed * 104_729) % 2003) as f64 - 1001.0) / 997.0))
        .collect()
}

/// Shapes crossing every blocking edge: kernel tiles (8, 16, 32 rows; 6, 12, 16 columns), the
/// row block (96) and the depth block (256), and degenerate ones.
const SHAPES: [(usize, usize, usize); 14] = [
    (1, 1, 1),
    (2, 3, 4),
    (16, 16, 16),
    (17, 13, 5),
    (31, 7, 33),
    (33, 25, 3),
    (96, 12, 256),
    (97, 17, 257),
    (128, 32, 300),
    (5, 200, 9),
    (16, 300, 25),
    (200, 5, 40),
    (3, 3, 600),
    (64, 1, 64),
];

fn check<T: Real>(tol: f64) {
    for &(m, n, k) in &SHAPES {
        let (a, b) = (values::<T>(m * k, 1), values::<T>(k * n, 2));
        let want = naive(&a, &b, m, n, k);
        let start = values::<T>(m * n, 3);
        for kernel in [Kernel::Avx512, Kernel::Avx2Fma, Kernel::Portable] {
            if !kernel.available() {
                continue;
            }
            // Both operands in both layouts: a column-major A is read in place and a
            // row-major one packed through the transposing pack, and the same for Bt.
            let a_rows: Vec<T> = (0..m * k).map(|x| a[(x % k) * m + x / k]).collect();
            let bt_cols: Vec<T> = (0..n * k).map(|x| b[(x % n) * k + x / n]).collect();
            for layout in 0..4 {
                let av = if layout & 1 == 0 {
                    View::col_major(&a, m, k)
                } else {
                    View::col_major(&a_rows, k, m).t()
                };
                let bt = if layout & 2 == 0 {
                    View::col_major(&b, k, n).t()
                } else {
                    View::col_major(&bt_cols, n, k)
                };
                // C starts non-zero: gemm adds.
                let mut c = start.clone();
                let mut cv = ViewMut::col_major(&mut c, m, n);
                gemm_with(kernel, &av, &bt, &mut cv).expect("available");
                for i in 0..m * n {
                    let err = (c[i] - start[i] - want[i]).to_f64().abs();
                    let scale = 1.0 + want[i].to_f64().abs();
                    assert!(
                        err <= tol * scale * (k as f64).sqrt(),
                        "{m}x{n}x{k} entry {i}: {:?} vs {:?} (kernel {kernel:?}, layout {layout})",
                        c[i] - start[i],
                        want[i],
                    );
                }
            }
        }
    }
}

#[test]
fn gemm_matches_the_triple_loop_in_f64() {
    check::<f64>(1e-13);
}

#[test]
fn gemm_matches_the_triple_loop_in_f32() {
    check::<f32>(1e-5);
}

#[test]
fn the_best_kernel_is_available_and_unavailable_ones_are_refused() {
    assert!(Kernel::best().available() && Kernel::Portable.available());
    let (a, b, mut c) = ([1.0f64], [2.0f64], [0.0f64]);
    let (av, bv) = (View::col_major(&a, 1, 1), View::col_major(&b, 1, 1));
    for k in [Kernel::Avx512, Kernel::Avx2Fma] {
        let r = gemm_with(k, &av, &bv, &mut ViewMut::col_major(&mut c, 1, 1));
        assert_eq!(r.is_ok(), k.available());
    }
    assert!(c.iter().all(|&x| x == 0.0 || x == 2.0 || x == 4.0));
    if Kernel::best() == Kernel::Avx512 {
        assert!(
            Kernel::Avx2Fma.available(),
            "AVX-512F CPUs have AVX2 and FMA"
        );
    }
}

#[test]
fn transposed_and_strided_operands_read_the_right_entries() {
    // A^T given as a row-major view, B as its own transpose's transpose.
    let (m, n, k) = (19, 23, 29);
    let a = values::<f64>(m * k, 4);
    let b = values::<f64>(k * n, 5);
    let want = naive(&a, &b, m, n, k);
    // The same A stored transposed (k x m column-major) and viewed back.
    let mut at = vec![0.0; m * k];
    for i in 0..m {
        for p in 0..k {
            at[p + i * k] = a[i + p * m];
        }
    }
    let mut c = vec![0.0; m * n];
    gemm(
        &View::col_major(&at, k, m).t(),
        &View::strided(&b, n, k, k, 1),
        &mut ViewMut::col_major(&mut c, m, n),
    );
    for (x, y) in c.iter().zip(&want) {
        assert!((x - y).abs() < 1e-12);
    }
}

#[test]
#[should_panic(expected = "gemm: A is 2x3, Bt is 2x4")]
fn mismatched_shapes_are_refused_with_the_shapes() {
    let (a, b) = ([0.0f64; 6], [0.0f64; 8]);
    let mut c = [0.0f64; 4];
    gemm(
        &View::col_major(&a, 2, 3),
        &View::col_major(&b, 2, 4),
        &mut ViewMut::col_major(&mut c, 2, 2),
    );
}

#[test]
#[should_panic(expected = "reaches entry")]
fn a_view_past_its_slice_is_refused() {
    let a = [0.0f64; 5];
    let _ = View::col_major(&a, 2, 3);
}

/// The peak probe's chains each run `x <- x / 2 + 1 / 2` from 0, so after `r` rounds each lane
/// holds `1 - 2^-r`: the sum checks that every chain ran every round.
#[test]
fn the_peak_probe_runs_every_chain() {
    let Some(one) = paralens::gemm::fma_peak_probe(1) else {
        return; // no AVX-512 on this CPU: nothing to check
    };
    assert_eq!(one, 16.0 * 24.0 * 0.5);
    let three = paralens::gemm::fma_peak_probe(3).expect("AVX-512 was found above");
    assert_eq!(three, 16.0 * 24.0 * 0.875);
    assert_eq!(paralens::gemm::fma_peak_probe(0), Some(0.0));
}

#[test]
fn a_forced_kernel_holds_inside_the_call_only_and_is_put_back_after_a_panic() {
    use paralens::gemm::with_kernel;
    assert_eq!(Kernel::current(), Kernel::best());
    for k in Kernel::ALL {
        let inside = with_kernel(k, Kernel::current);
        assert_eq!(inside, k.available().then_some(k), "{k:?}");
        // Nested: the inner choice holds inside, the outer one comes back.
        let nested = with_kernel(k, || {
            let inner = with_kernel(Kernel::Portable, Kernel::current);
            (inner, Kernel::current())
        });
        assert_eq!(nested, k.available().then_some((Some(Kernel::Portable), k)));
    }
    let caught = std::panic::catch_unwind(|| {
        with_kernel(Kernel::Portable, || panic!("inside a forced kernel"));
    });
    assert!(caught.is_err());
    assert_eq!(Kernel::current(), Kernel::best());
}
