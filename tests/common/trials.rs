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
#[allow(dead_code)]
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
#[allow(dead_code)]
pub fn run(trials: Vec<Trial>) -> ExitCode {
    libtest_mimic::run(&Arguments::from_args(), trials).exit_code()
}

/// A failure with `message`, for tests that return one.
#[allow(dead_code)]
pub fn fail(message: impl Into<String>) -> Failed {
    message.into().into()
}

/// Runs `tests` one after another on the main thread, named as given. For the tests that
/// count allocations process-wide: under a harness with threads, the start of the next test
/// (a thread spawned, a line printed) would be counted in the measured test's window.
#[allow(dead_code)]
pub fn run_one_at_a_time(tests: &[(&'static str, fn())]) -> ExitCode {
    let mut args = Arguments::from_args();
    args.test_threads = Some(1);
    let trials = tests
        .iter()
        .map(|&(name, test)| {
            Trial::test(name, move || {
                test();
                Ok(())
            })
        })
        .collect();
    libtest_mimic::run(&args, trials).exit_code()
}

/// `f` run with the panic message `expected` kept off standard error (the test catches that
/// panic on purpose); any other panic is reported as usual. Only for tests run one at a time:
/// the panic hook is process-wide.
#[allow(dead_code)]
pub fn expecting_panic<R>(expected: &'static str, f: impl FnOnce() -> R) -> R {
    let report = std::sync::Arc::new(std::panic::take_hook());
    let others = std::sync::Arc::clone(&report);
    std::panic::set_hook(Box::new(move |info| {
        let payload = info.payload();
        let msg = payload
            .downcast_ref::<&str>()
            .copied()
            .or_else(|| payload.downcast_ref::<String>().map(String::as_str));
        if msg != Some(expected) {
            others(info);
        }
    }));
    let out = f();
    let _ = std::panic::take_hook();
    match std::sync::Arc::try_unwrap(report) {
        Ok(hook) => std::panic::set_hook(hook),
        Err(_) => unreachable!("the hook holding the other reference was just dropped"),
    }
    out
}
