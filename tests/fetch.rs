//! `scripts/fetch-data.sh`: its verification of MNIST and Fashion-MNIST against the published
//! SHA-256 sums, on local files (no network here). The shared copies passing it is a test of
//! `tests/data.rs`.

use std::path::Path;
use std::process::Command;

fn verify(dir: &Path) -> (bool, String) {
    let out = Command::new("bash")
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/scripts/fetch-data.sh"
        ))
        .arg("--verify")
        .arg(dir)
        .output()
        .expect("bash runs");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn an_altered_or_missing_file_fails_verification_naming_it() {
    let dir = std::env::temp_dir().join(format!("paralens-fetch-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("mnist")).unwrap();
    // A truncated download: the right name, other bytes.
    std::fs::write(
        dir.join("mnist/train-images-idx3-ubyte.gz"),
        [0x1f, 0x8b, 8],
    )
    .unwrap();
    let (ok, err) = verify(&dir);
    std::fs::remove_dir_all(&dir).unwrap();
    assert!(!ok, "an altered folder passed: {err}");
    assert!(
        err.contains("wrong SHA-256") && err.contains("mnist/train-images-idx3-ubyte.gz"),
        "{err}"
    );
    assert!(
        err.contains("missing") && err.contains("fashion-mnist/t10k-labels-idx1-ubyte.gz"),
        "{err}"
    );
}

#[test]
fn a_call_without_a_folder_is_a_usage_error() {
    let out = Command::new("bash")
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/scripts/fetch-data.sh"
        ))
        .output()
        .expect("bash runs");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("usage"));
}
