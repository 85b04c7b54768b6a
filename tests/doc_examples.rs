//! Every example of the documentation is written as a user of the `paralens` crate writes it:
//! its code names `paralens::...` (and `paralens::nalgebra`, `paralens::circuits`), never the
//! crates behind the facade, which a crate depending on `paralens` alone cannot name (E0433).
//! The examples are compiled and run as doc tests; this keeps them written so.

use std::path::Path;

/// The lines of code blocks in the doc comments of `source` that name a crate behind the
/// facade, as `(line number, line)`.
fn behind_the_facade(source: &str) -> Vec<(usize, String)> {
    let mut found = Vec::new();
    let mut in_code = false;
    for (n, line) in source.lines().enumerate() {
        let t = line.trim_start();
        let Some(doc) = t.strip_prefix("///").or_else(|| t.strip_prefix("//!")) else {
            continue;
        };
        let doc = doc.trim_start();
        if doc.starts_with("```") {
            in_code = !in_code;
            continue;
        }
        if in_code && names_a_hidden_crate(doc) {
            found.push((n + 1, line.to_string()));
        }
    }
    found
}

fn names_a_hidden_crate(code: &str) -> bool {
    [
        "lens_core::",
        "lens_circuits::",
        "lens_macros::",
        "nalgebra::",
    ]
    .iter()
    .any(|c| {
        code.match_indices(c).any(|(at, _)| {
            let before = &code[..at];
            !before.ends_with("paralens::")
                && !before.ends_with(|ch: char| ch.is_alphanumeric() || ch == '_')
        })
    })
}

fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn the_examples_name_the_facade_only() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    for dir in [
        "src",
        "lens-core/src",
        "lens-circuits/src",
        "lens-macros/src",
    ] {
        rust_files(&root.join(dir), &mut files);
    }
    let mut wrong = Vec::new();
    for file in &files {
        for (n, line) in behind_the_facade(&std::fs::read_to_string(file).unwrap()) {
            wrong.push(format!("{}:{n}: {}", file.display(), line.trim()));
        }
    }
    assert!(
        wrong.is_empty(),
        "examples naming a crate behind the facade (write `paralens::...`):\n{}",
        wrong.join("\n")
    );
    // The check finds what it is for.
    assert_eq!(
        behind_the_facade(
            "/// ```\n/// use lens_core::Dense;\n/// use paralens::nalgebra::SVector;\n/// ```\n"
        )
        .len(),
        1
    );
}
