//! Optimizers against update sequences computed by hand, through the learner, on
//! `f(p) = p^2` (gradient `2p`) from `p0 = 1`.
//!
//! The model is the identity on its parameter and the loss is MSE against 0, so the
//! composite `model ; loss ; learning rate` is exactly `f(p) = p^2`.

use nalgebra::SVector;
use paralens::Flat;
use paralens::optim::{AdaGrad, Adam, AdamW, Momentum, Nesterov, Optimizer, RmsProp, Sgd};
use paralens::{Learner, Mse, Para};

/// `(p, ()) -> p`: a model whose output is its parameter.
struct Param;

impl Para<()> for Param {
    type Param = f64;
    type Out = f64;
    fn vjp(&self, p: &f64, _x: ()) -> (f64, impl FnOnce(f64, &mut f64)) {
        (*p, |d, dp: &mut f64| *dp += d)
    }
}

/// Runs three steps and returns the parameters after each.
fn three_steps<O: Optimizer<f64, Scalar = f64>>(opt: O) -> [f64; 3] {
    let mut learner = Learner::new(Param, 1.0, Mse, opt);
    core::array::from_fn(|_| {
        learner.step(&(), &0.0);
        *learner.params()
    })
}

fn close(got: [f64; 3], want: [f64; 3]) {
    for (g, w) in got.iter().zip(want) {
        assert!((g - w).abs() < 1e-12, "got {got:?}, want {want:?}");
    }
}

#[test]
fn sgd() {
    // p <- p - 0.1 * 2p = 0.8 p
    close(three_steps(Sgd::new(0.1)), [0.8, 0.64, 0.512]);
}

#[test]
fn momentum() {
    // v1 = -0.2, p1 = 0.8; v2 = 0.9 v1 - 0.1*1.6 = -0.34, p2 = 0.46;
    // v3 = 0.9 v2 - 0.1*0.92 = -0.398, p3 = 0.062
    close(three_steps(Momentum::new(0.1, 0.9)), [0.8, 0.46, 0.062]);
}

#[test]
fn nesterov_reads_the_look_ahead() {
    // step 1: look-ahead 1, g = 2, v1 = -0.2, p1 = 0.8
    // step 2: look-ahead 0.8 - 0.18 = 0.62, g = 1.24, v2 = -0.18 - 0.124 = -0.304, p2 = 0.496
    // step 3: look-ahead 0.496 - 0.2736 = 0.2224, g = 0.4448, v3 = -0.31808, p3 = 0.17792
    close(three_steps(Nesterov::new(0.1, 0.9)), [0.8, 0.496, 0.17792]);
}

#[test]
fn adagrad() {
    // G += g^2; p -= 0.1 g / sqrt(G)
    let mut p = 1.0_f64;
    let mut g2 = 0.0;
    let want: [f64; 3] = core::array::from_fn(|_| {
        let g = 2.0 * p;
        g2 += g * g;
        p -= 0.1 * g / (g2.sqrt() + 1e-10);
        p
    });
    assert!((want[0] - 0.9).abs() < 1e-9); // the first step has length lr (up to eps)
    close(three_steps(AdaGrad::new(0.1)), want);
}

#[test]
fn rmsprop() {
    // s = 0.9 s + 0.1 g^2; p -= 0.01 g / (sqrt(s) + 1e-8)
    let mut p = 1.0_f64;
    let mut s = 0.0;
    let want: [f64; 3] = core::array::from_fn(|_| {
        let g = 2.0 * p;
        s = 0.9 * s + 0.1 * g * g;
        p -= 0.01 * g / (s.sqrt() + 1e-8);
        p
    });
    close(three_steps(RmsProp::new(0.01)), want);
}

/// Textbook Adam (Kingma and Ba, Algorithm 1), with explicit bias correction.
fn adam_by_hand(lr: f64, weight_decay: f64) -> [f64; 3] {
    let (b1, b2, eps) = (0.9_f64, 0.999_f64, 1e-8);
    let (mut p, mut m, mut v) = (1.0_f64, 0.0, 0.0);
    let mut t = 0;
    core::array::from_fn(|_| {
        t += 1;
        let g = 2.0 * p;
        p -= lr * weight_decay * p;
        m = b1 * m + (1.0 - b1) * g;
        v = b2 * v + (1.0 - b2) * g * g;
        let m_hat = m / (1.0 - b1.powi(t));
        let v_hat = v / (1.0 - b2.powi(t));
        p -= lr * m_hat / (v_hat.sqrt() + eps);
        p
    })
}

#[test]
fn adam() {
    let want = adam_by_hand(0.1, 0.0);
    assert!((want[0] - 0.9).abs() < 1e-9);
    let got = three_steps(Adam::new(0.1));
    for (g, w) in got.iter().zip(want) {
        // eps enters folded into the bias correction: equal up to ~eps.
        assert!((g - w).abs() < 1e-9, "got {got:?}, want {want:?}");
    }
}

#[test]
fn adamw_decays_weights_decoupled() {
    let want = adam_by_hand(0.1, 0.5);
    let got = three_steps(AdamW::new(0.1, 0.5));
    for (g, w) in got.iter().zip(want) {
        assert!((g - w).abs() < 1e-9, "got {got:?}, want {want:?}");
    }
    assert!(got[2] < three_steps(Adam::new(0.1))[2]);
}

/// Long parameter slices take a copy of an optimizer's update loop compiled for AVX-512 or
/// AVX2 (whichever the CPU has); it must give exactly what the plain loop gives. Each entry
/// of a 300-long vector (the wide loop) is checked against the same entry updated alone (a
/// slice of one, the plain loop), bit for bit, over steps whose changes reach Adam's
/// flushed-to-zero range, by `update` and by `update_and_clear` in turn (which must also
/// leave every change at zero).
fn wide_update_equals_the_plain_one<O>(opt: O)
where
    O: Optimizer<nalgebra::SVector<f32, 300>, Scalar = f32>
        + Optimizer<nalgebra::SVector<f32, 1>, Scalar = f32>,
{
    use nalgebra::SVector;
    const N: usize = 300;
    let mut p = SVector::<f32, N>::from_fn(|i, _| (i as f32 * 0.37).sin());
    let mut s = Optimizer::<SVector<f32, N>>::init_state(&opt, &p);
    let mut single: Vec<_> = (0..N)
        .map(|i| {
            let q = SVector::<f32, 1>::new(p[i]);
            let st = Optimizer::<SVector<f32, 1>>::init_state(&opt, &q);
            (q, st)
        })
        .collect();
    for step in 0..5 {
        let scale = [1.0, 1e-3, 1e-19, 0.5, 1e-30][step];
        let dp = SVector::<f32, N>::from_fn(|i, _| scale * ((i * 7 + step) as f32 * 0.11).cos());
        let clear = step % 2 == 1;
        if clear {
            let mut d = dp;
            opt.update_and_clear(&mut s, &mut p, &mut d);
            assert!(
                d.iter().all(|&v| v == 0.0),
                "changes left after update_and_clear"
            );
        } else {
            opt.update(&mut s, &mut p, &dp);
        }
        for (i, (q, st)) in single.iter_mut().enumerate() {
            let mut d = SVector::<f32, 1>::new(dp[i]);
            if clear {
                opt.update_and_clear(st, q, &mut d);
                assert_eq!(d[0], 0.0);
            } else {
                opt.update(st, q, &d);
            }
            assert_eq!(p[i].to_bits(), q[0].to_bits(), "entry {i}, step {step}");
        }
    }
}

#[test]
fn wide_updates_equal_the_plain_ones_bit_for_bit() {
    use paralens::gemm::{Kernel, with_kernel};
    // Each instruction set's copy, forced in turn (those this CPU lacks are skipped).
    let mut ran = 0;
    for kernel in Kernel::ALL {
        let done = with_kernel(kernel, || {
            wide_update_equals_the_plain_one(Adam::new(1e-2f32));
            wide_update_equals_the_plain_one(RmsProp::new(1e-2f32));
            wide_update_equals_the_plain_one(AdaGrad::new(1e-1f32));
            wide_update_equals_the_plain_one(Momentum::new(1e-2f32, 0.9));
        });
        ran += usize::from(done.is_some());
    }
    assert!(ran > usize::from(Kernel::Avx2Fma.available()));
}

/// Parameters in short slices (the Iris model's 64, 16, 48 and 3) are updated in one call of
/// an AVX2 copy where the CPU has it (`optim::avx2_whole`; under the AVX2 and the AVX-512
/// kernel alike), in the baseline copy under the portable kernel: the same values bit for bit, by `update` and `update_and_clear` in turn,
/// over steps whose changes reach Adam's flushed-to-zero range.
fn short_slices_update_alike<O>(opt: O, kernel: paralens::gemm::Kernel) -> bool
where
    O: Optimizer<Short, Scalar = f32>,
{
    use paralens::gemm::{Kernel, with_kernel};
    let run = |kernel: Kernel| {
        with_kernel(kernel, || {
            let mut p: Short = (
                SVector::from_fn(|i, _| (i as f32 * 0.37).sin()),
                SVector::from_fn(|i, _| (i as f32 * 0.53).cos()),
                SVector::from_fn(|i, _| (i as f32 * 0.71).sin()),
                SVector::from_fn(|i, _| i as f32 - 1.0),
            );
            let mut s = opt.init_state(&p);
            for step in 0..6 {
                let scale = [1.0, 1e-3, 1e-19, 0.5, 1e-30, 2.0][step];
                let g = |i: usize| scale * ((i * 7 + step) as f32 * 0.11).cos();
                let mut dp: Short = (
                    SVector::from_fn(|i, _| g(i)),
                    SVector::from_fn(|i, _| g(i + 64)),
                    SVector::from_fn(|i, _| g(i + 80)),
                    SVector::from_fn(|i, _| g(i + 128)),
                );
                if step % 2 == 1 {
                    opt.update_and_clear(&mut s, &mut p, &mut dp);
                    assert!(
                        dp.slices().flatten().all(|&v| v == 0.0),
                        "{kernel:?}: changes left after update_and_clear"
                    );
                } else {
                    opt.update(&mut s, &mut p, &dp);
                }
            }
            p.slices()
                .flatten()
                .map(|v| v.to_bits())
                .collect::<Vec<u32>>()
        })
    };
    let Some(got) = run(kernel) else {
        return false;
    };
    let want = run(Kernel::Portable).expect("the portable kernel runs everywhere");
    assert_eq!(got, want, "{kernel:?} differs from the baseline");
    true
}

type Short = (
    SVector<f32, 64>,
    SVector<f32, 16>,
    SVector<f32, 48>,
    SVector<f32, 3>,
);

#[test]
fn short_slices_update_alike_under_every_kernel() {
    use paralens::gemm::Kernel;
    let mut ran = 0;
    for kernel in [Kernel::Avx512, Kernel::Avx2Fma] {
        let all = [
            short_slices_update_alike(Adam::new(1e-2f32), kernel),
            short_slices_update_alike(RmsProp::new(1e-2f32), kernel),
            short_slices_update_alike(AdaGrad::new(1e-1f32), kernel),
            short_slices_update_alike(Momentum::new(1e-2f32, 0.9), kernel),
            short_slices_update_alike(Sgd::new(1e-2f32), kernel),
        ];
        if all.contains(&true) {
            ran += 1;
        } else {
            eprintln!("skipped: this CPU has no {kernel:?}");
        }
    }
    // Every kernel this CPU has was compared (none on a CPU without AVX2: said above).
    assert_eq!(
        ran,
        usize::from(Kernel::Avx2Fma.available()) + usize::from(Kernel::Avx512.available())
    );
}

/// The learner's finiteness scan of a change, in each instruction set's copy (forced in turn;
/// those this CPU lacks are skipped): a NaN or an infinity at any place of any slice, short
/// or long, is seen, and a finite change (subnormals, the largest finite values) passes.
/// Slices all shorter than the wide copies' threshold (256) are scanned in one call of the
/// AVX2 copy where the CPU has it; with one of 300 beside them, each slice on its own (the
/// long one in the kernel's wide copy, the short ones in the baseline).
#[test]
fn the_finiteness_scan_sees_every_place_in_every_copy() {
    use paralens::gemm::{Kernel, with_kernel};
    type Short = (
        SVector<f32, 3>,
        SVector<f32, 16>,
        SVector<f32, 37>,
        SVector<f32, 64>,
    );
    type Long = (SVector<f32, 3>, SVector<f32, 300>, SVector<f32, 37>);
    let v = |i: usize| match i % 4 {
        0 => f32::MAX,
        1 => -f32::MIN_POSITIVE / 2.0,
        2 => -0.0,
        _ => 1.5,
    };
    let short = || -> Short {
        (
            SVector::from_fn(|i, _| v(i)),
            SVector::from_fn(|i, _| v(i + 1)),
            SVector::from_fn(|i, _| v(i + 2)),
            SVector::from_fn(|i, _| v(i + 3)),
        )
    };
    let long = || -> Long {
        (
            SVector::from_fn(|i, _| v(i)),
            SVector::from_fn(|i, _| v(i + 1)),
            SVector::from_fn(|i, _| v(i + 2)),
        )
    };
    let mut ran = 0;
    for kernel in Kernel::ALL {
        let done = with_kernel(kernel, || {
            sees_every_place(kernel, short());
            sees_every_place(kernel, long());
        });
        ran += usize::from(done.is_some());
    }
    assert!(ran > usize::from(Kernel::Avx2Fma.available()));
}

/// A NaN, an infinity and a negative infinity at each place of `p` (finite) are each seen.
fn sees_every_place<P: Flat<f32>>(kernel: paralens::gemm::Kernel, mut p: P) {
    assert!(p.all_finite(), "{kernel:?}: a finite change refused");
    for k in 0..p.flat_len() {
        for bad in [f32::NAN, f32::INFINITY, f32::NEG_INFINITY] {
            let slot = p.slices_mut().flatten().nth(k).unwrap();
            let kept = std::mem::replace(slot, bad);
            assert!(!p.all_finite(), "{kernel:?}: {bad} at {k} not seen");
            *p.slices_mut().flatten().nth(k).unwrap() = kept;
        }
    }
}
