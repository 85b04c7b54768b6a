//! Locating the project's shared data folder (MNIST and Fashion-MNIST are not copied into
//! the repository).

use std::path::PathBuf;

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
