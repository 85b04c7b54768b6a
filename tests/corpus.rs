//! The differential-testing corpus (`tests/corpus_generated.rs`) is exactly what its seeded
//! generator (`tests/corpus/generator.rs`) produces: a change to either is seen here.
//! Regenerate with `PARALENS_REGENERATE=1 cargo test --test corpus`.

#[path = "corpus/generator.rs"]
mod generator;

/// The corpus's seed and size.
const SEED: u64 = 20_261_130;
const COUNT: usize = 300;
/// The size of issue 42's section (its own stream, after the main corpus).
const KINDS: usize = 48;
/// The number of issue 42's `para!` models (a stream of their own, after its functions).
const MODELS: usize = 24;

#[test]
fn the_committed_corpus_is_what_the_generator_produces() {
    let fresh = generator::generate(SEED, COUNT, KINDS, MODELS);
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/corpus_generated.rs");
    if std::env::var_os("PARALENS_REGENERATE").is_some() {
        std::fs::write(path, &fresh).expect("tests/ is writable");
        return;
    }
    let committed = std::fs::read_to_string(path).expect("tests/corpus_generated.rs exists");
    assert!(
        committed == fresh,
        "tests/corpus_generated.rs is not what the generator produces; regenerate it with \
         `PARALENS_REGENERATE=1 cargo test --test corpus` and commit both"
    );
}

#[test]
fn the_generator_is_seeded() {
    assert_eq!(
        generator::generate(7, 5, 4, 2),
        generator::generate(7, 5, 4, 2)
    );
    assert_ne!(
        generator::generate(7, 5, 4, 2),
        generator::generate(8, 5, 4, 2)
    );
}
