//! The tests that need the shared MNIST data run under `libtest-mimic` (their binaries have
//! `harness = false`): where the data is absent, such a test is counted as ignored, with the
//! reason naming `PARALENS_DATA`, where the built-in harness could only pass it having
//! trained nothing.

use libtest_mimic::{Arguments, Completion, Failed, Trial};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Why a test that needs the data did not run.
const NO_DATA: &str =
    "no MNIST data: set PARALENS_DATA to the folder holding mnist/ (see the README's Data)";

/// The test `name`, run on the shared data folder (`common::shared_data`), or ignored at run
/// time when there is none. A panic in `test` fails it, as in the built-in harness.
pub fn needs_data(
    name: &str,
    data: Option<PathBuf>,
    test: impl FnOnce(&Path) + Send + 'static,
) -> Trial {
    Trial::ignorable_test(name, move || match data {
        Some(dir) => {
            test(&dir);
            Ok(Completion::Completed)
        }
        None => Ok(Completion::ignored_with(NO_DATA)),
    })
}

/// Runs `trials` with the command line's arguments (`--ignored`, a filter, ...).
pub fn run(trials: Vec<Trial>) -> ExitCode {
    libtest_mimic::run(&Arguments::from_args(), trials).exit_code()
}

/// A failure with `message`, for tests that return one.
#[allow(dead_code)]
pub fn fail(message: impl Into<String>) -> Failed {
    message.into().into()
}
