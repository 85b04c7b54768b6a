//! The GAN of `examples/gan_mixture.rs`: the composite lens's gradient against finite
//! differences, and the example's claim, at least 7 of the 8 modes covered (a release-build
//! test: the training takes minutes in a debug build).

#[allow(dead_code)]
#[path = "../examples/gan_mixture.rs"]
mod gan_mixture;

use paralens::gan::{Critic, Identity};
use paralens::prelude::*;
use paralens::{GradCheck, check_gradient};

/// The composite `(z, real) -> W` of a small f64 GAN, as a function of all its parameters
/// and the noise, checked against central differences: the critic's two uses add up, the
/// real batch gets no change.
#[test]
fn the_composite_gradient_matches_finite_differences() {
    let g = Dense::<2, 3, f64>::new()
        .then(Tanh)
        .then(Dense::<3, 2, f64>::new());
    let d = Dense::<2, 4, f64>::new()
        .then(Tanh)
        .then(Dense::<4, 1, f64>::new());
    let gan = g.par(Identity).then(Critic::new(d));
    let p = gan.init(3);
    let z = SMatrix::<f64, 2, 5>::from_fn(|i, j| ((i * 5 + j) as f64 * 0.7).sin());
    let real = SMatrix::<f64, 2, 5>::from_fn(|i, j| ((i * 5 + j) as f64 * 1.3).cos());
    let f = |(p, z): (_, SMatrix<f64, 2, 5>)| Para::forward(&gan, &p, (z, real));
    let r = |(p, z): (_, SMatrix<f64, 2, 5>), dw: f64| {
        let (_, pull) = Para::vjp(&gan, &p, (z, real));
        let mut dp = Tangent::zeros();
        let (dz, dreal) = pull(dw, &mut dp);
        assert_eq!(
            dreal,
            SMatrix::<f64, 2, 5>::zeros(),
            "the real batch is data"
        );
        (dp, dz)
    };
    let check: GradCheck = check_gradient(f, r, (p, z), 1e-6);
    assert!(check.passes(1e-7), "{check}");
}

#[test]
#[cfg_attr(
    debug_assertions,
    ignore = "trains for a minute in release; minutes in debug"
)]
fn gan_mixture_covers_the_modes() {
    let r = gan_mixture::run(12_000, 5, 7, false);
    println!("{r:?}");
    assert!(r.modes >= 7, "{} of 8 modes covered ({r:?})", r.modes);
}

/// A NaN in the real batch is refused, and nothing changes.
#[test]
fn a_non_finite_step_changes_nothing() {
    use paralens::gan::Adversarial;
    use paralens::optim::RmsProp;
    let g = Dense::<2, 4, f64>::new()
        .then(Relu)
        .then(Dense::<4, 2, f64>::new());
    let d = Dense::<2, 4, f64>::new()
        .then(Relu)
        .then(Dense::<4, 1, f64>::new());
    let mut gan = Adversarial::new(g, d, RmsProp::new(0.01), RmsProp::new(0.01), 0.1, 1);
    let z = SMatrix::<f64, 2, 3>::from_fn(|i, j| (i + j) as f64 * 0.3 - 0.4);
    let mut real = SMatrix::<f64, 2, 3>::from_element(1.0);
    gan.step(z, real).unwrap();
    let (pg, pd) = (gan.generator_params().clone(), gan.critic_params().clone());
    real[(1, 2)] = f64::NAN;
    let e = gan.step(z, real).unwrap_err();
    assert!(
        e.to_string().contains("NaN") || e.to_string().contains("finite"),
        "{e}"
    );
    assert!(gan.generator_params() == &pg && gan.critic_params() == &pd);
    // And the next finite step runs from where it was.
    real[(1, 2)] = 1.0;
    gan.step(z, real).unwrap();
}

#[allow(dead_code)]
#[path = "../examples/gan_digits.rs"]
mod gan_digits;

/// The digits GAN, shortened: its samples are digits of many kinds that the classifier is
/// fairly sure of, and the grid it writes is a PNG of 10 x 10 tiles.
#[test]
#[cfg_attr(
    debug_assertions,
    ignore = "trains for seconds in release; minutes in debug"
)]
fn gan_digits_samples_are_varied_digits() {
    let dir = std::env::temp_dir().join(format!("paralens-gan-digits-{}", std::process::id()));
    let r = gan_digits::run(1500, 0, Some(&dir));
    println!("{r:?}");
    assert!(r.entropy.0 > 2.0, "samples' class entropy {}", r.entropy.0);
    assert!(
        r.confidence.0 > 0.8,
        "samples' mean confidence {}",
        r.confidence.0
    );
    let file = std::fs::File::open(dir.join("gan_digits.png")).expect("the grid was written");
    let reader = png::Decoder::new(std::io::BufReader::new(file))
        .read_info()
        .expect("a PNG");
    let info = reader.info();
    assert_eq!((info.width, info.height), (10 * 34 + 2, 10 * 34 + 2));
    std::fs::remove_dir_all(&dir).ok();
}
