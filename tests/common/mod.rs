//! What the integration tests share: the gradient check against central finite differences
//! at the step and tolerance most of them use, and locating the project's shared data folder
//! (MNIST and Fashion-MNIST are not copied into the repository).

use paralens::GradCheck;
use std::path::PathBuf;

/// The step of the central finite differences the tests take in `f64`.
#[allow(dead_code)]
pub const H: f64 = 1e-6;

/// The tolerance of a reverse derivative against them (`GradCheck::passes`).
#[allow(dead_code)]
pub const TOL: f64 = 1e-7;

/// Asserts that the gradient check `r` passes at [`TOL`], naming the function.
#[allow(dead_code)]
#[track_caller]
pub fn ok(name: &str, r: GradCheck) {
    assert!(r.passes(TOL), "{name}: {r}");
}

/// The shared `data` folder: `$PARALENS_DATA` if set, else `shared/data` beside the
/// checkout (where the project's machines and CI put it). `None` when neither holds
/// `mnist/`: the tests that need it (`tests/data.rs`, `tests/slow.rs`, `tests/slow_lstm.rs`,
/// under `trials.rs`) are then counted as ignored, naming `PARALENS_DATA`.
#[allow(dead_code)]
pub fn shared_data() -> Option<PathBuf> {
    let here = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let candidates = [
        std::env::var_os("PARALENS_DATA").map(PathBuf::from),
        Some(here.join("../shared/data")),
        Some(here.join("shared/data")),
    ];
    candidates
        .into_iter()
        .flatten()
        .find(|d| d.join("mnist").is_dir())
}
