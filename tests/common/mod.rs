//! Locating the project's shared data folder (MNIST and Fashion-MNIST are not copied into
//! the repository).

use std::path::PathBuf;

/// The shared `data` folder: `$PARALENS_DATA` if set, else `shared/data` beside the
/// checkout (where the project's machines and CI put it). `None` when neither holds
/// `mnist/`; the tests that need it then say so and stop.
pub fn shared_data() -> Option<PathBuf> {
    let here = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let candidates = [
        std::env::var_os("PARALENS_DATA").map(PathBuf::from),
        Some(here.join("../shared/data")),
        Some(here.join("shared/data")),
    ];
    let found = candidates
        .into_iter()
        .flatten()
        .find(|d| d.join("mnist").is_dir());
    if found.is_none() {
        // Straight to the standard error stream, not through `eprintln!`, which the test
        // harness captures (and shows only for failing tests): the skip must be seen.
        use std::io::Write;
        let _ = writeln!(
            std::io::stderr(),
            "SKIPPED (no MNIST data): set PARALENS_DATA to the folder holding mnist/ (looked beside the checkout)"
        );
    }
    found
}
