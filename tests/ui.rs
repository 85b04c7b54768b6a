//! Compile-fail tests: compositions that do not fit are rejected with readable messages,
//! grouped by the surface they test: `tests/ui/lens/` (`#[lens]`), `para/` (`para!`),
//! `derive/` (`#[derive(Tangent)]`), `compose/` (`then`, `par`, learners, layers).
//! Regenerate the expected output with `TRYBUILD=overwrite cargo test --test ui` and review
//! the diff of `tests/ui/*/*.stderr`.
//!
//! The first run builds the dependencies a second time, under `target/tests/trybuild`:
//! trybuild compiles its test project with its own flags (`--cfg trybuild`, in its
//! `rustflags.rs`), so nothing of the workspace's own build is reused. Later runs reuse that
//! build.

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.pass("tests/ui_pass/*.rs");
    t.compile_fail("tests/ui/*/*.rs");
}
