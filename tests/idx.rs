//! The IDX reader: malformed files are clear errors (the real MNIST files: `tests/data.rs`).

use flate2::Compression;
use flate2::write::GzEncoder;
use paralens::data::{load_mnist, parse_idx_images, parse_idx_labels};
use std::io::Write;
use std::path::{Path, PathBuf};

fn images(count: u32, rows: u32, cols: u32, pixels: &[u8]) -> Vec<u8> {
    let mut f = vec![0, 0, 8, 3];
    for v in [count, rows, cols] {
        f.extend(v.to_be_bytes());
    }
    f.extend_from_slice(pixels);
    f
}

fn labels(ls: &[u8]) -> Vec<u8> {
    let mut f = vec![0, 0, 8, 1];
    f.extend((ls.len() as u32).to_be_bytes());
    f.extend_from_slice(ls);
    f
}

#[test]
fn malformed_files_are_clear_errors() {
    let e = parse_idx_images(&labels(&[1, 2]), "x").unwrap_err();
    assert!(
        e.to_string()
            .contains("wrong magic number 0x00000801: expected 0x00000803"),
        "{e}"
    );
    let e = parse_idx_images(&images(2, 2, 2, &[0; 7]), "x").unwrap_err();
    assert_eq!(
        e.to_string(),
        "x: truncated: the header announces 8 data bytes, the file has 7"
    );
    let e = parse_idx_images(&images(1, 1, 1, &[0; 2]), "x").unwrap_err();
    assert!(e.to_string().contains("too long"), "{e}");
    let e = parse_idx_labels(&[0, 0, 8], "x").unwrap_err();
    assert!(e.to_string().contains("truncated: 3 bytes"), "{e}");
    let e = parse_idx_images(&[0, 0, 8, 3, 0, 0], "x").unwrap_err();
    assert_eq!(
        e.to_string(),
        "x: truncated: 6 bytes, shorter than the 16-byte IDX header"
    );
    let ok = parse_idx_images(&images(2, 1, 3, &[1, 2, 3, 4, 5, 6]), "x").unwrap();
    assert_eq!(ok.image(1), [4, 5, 6]);
}

fn write(dir: &Path, name: &str, bytes: &[u8], gzip: bool) {
    if gzip {
        let mut enc = GzEncoder::new(Vec::new(), Compression::fast());
        enc.write_all(bytes).unwrap();
        std::fs::write(dir.join(format!("{name}.gz")), enc.finish().unwrap()).unwrap();
    } else {
        std::fs::write(dir.join(name), bytes).unwrap();
    }
}

fn temp_dir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("paralens-idx-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn folders_in_the_mnist_layout_gzip_or_plain() {
    let d = temp_dir("ok");
    let pixels = |n: usize| (0..n * 784).map(|i| (i % 251) as u8).collect::<Vec<u8>>();
    write(
        &d,
        "train-images-idx3-ubyte",
        &images(2, 28, 28, &pixels(2)),
        true,
    );
    write(&d, "train-labels-idx1-ubyte", &labels(&[3, 9]), false);
    write(
        &d,
        "t10k-images-idx3-ubyte",
        &images(1, 28, 28, &pixels(1)),
        true,
    );
    write(&d, "t10k-labels-idx1-ubyte", &labels(&[0]), true);
    let m = load_mnist(&d).unwrap();
    assert_eq!(
        (m.train_images.count, m.train_labels, m.test_labels),
        (2, vec![3, 9], vec![0])
    );
    assert_eq!(m.train_images.image(1), &pixels(2)[784..]);

    // Images of another size: a model of 784 pixels would cut them or run short.
    write(
        &d,
        "t10k-images-idx3-ubyte",
        &images(1, 27, 27, &[5; 729]),
        false,
    );
    std::fs::remove_file(d.join("t10k-images-idx3-ubyte.gz")).unwrap();
    let e = load_mnist(&d).unwrap_err();
    assert!(
        e.to_string().contains(
            "t10k-images-idx3-ubyte: the images are 27x27; MNIST and Fashion-MNIST images are 28x28"
        ),
        "{e}"
    );
    write(
        &d,
        "t10k-images-idx3-ubyte",
        &images(1, 28, 28, &pixels(1)),
        false,
    );

    // A label that is not a digit, and a count mismatch.
    write(&d, "t10k-labels-idx1-ubyte", &labels(&[10]), true);
    let e = load_mnist(&d).unwrap_err();
    assert!(
        e.to_string()
            .contains("label 10 of example 0 is not a digit"),
        "{e}"
    );
    write(&d, "t10k-labels-idx1-ubyte", &labels(&[1, 2]), true);
    let e = load_mnist(&d).unwrap_err();
    assert!(e.to_string().contains("2 labels for 1 images"), "{e}");

    // A folder that is not there, or a file given for the folder.
    let e = load_mnist(&d.join("nowhere")).unwrap_err();
    assert!(
        e.to_string().contains(
            "nowhere: does not exist; give the folder holding train-images-idx3-ubyte.gz"
        ),
        "{e}"
    );
    let e = load_mnist(&d.join("train-labels-idx1-ubyte")).unwrap_err();
    assert!(e.to_string().contains("is not a folder"), "{e}");

    // A missing file names what is expected.
    let empty = temp_dir("empty");
    let e = load_mnist(&empty).unwrap_err();
    assert!(
        e.to_string().contains("no `train-images-idx3-ubyte.gz`"),
        "{e}"
    );
    assert!(e.to_string().contains("t10k-labels-idx1-ubyte.gz"), "{e}");
    // A corrupt gzip stream.
    std::fs::write(
        empty.join("train-images-idx3-ubyte.gz"),
        [0x1f, 0x8b, 1, 2, 3],
    )
    .unwrap();
    for n in [
        "train-labels-idx1-ubyte",
        "t10k-images-idx3-ubyte",
        "t10k-labels-idx1-ubyte",
    ] {
        std::fs::write(empty.join(n), [0]).unwrap();
    }
    let e = load_mnist(&empty).unwrap_err();
    assert!(e.to_string().contains("corrupt gzip stream"), "{e}");
}

// A file of two concatenated gzip members is one valid gzip file (as `gzip -d` reads it); the
// reader stopped after the first member and reported the file as truncated.
#[test]
fn a_gzip_file_of_several_members_reads_whole() {
    let bytes = images(2, 28, 28, &[9; 2 * 784]);
    let (a, b) = bytes.split_at(900);
    let mut file = Vec::new();
    for part in [a, b] {
        let mut enc = GzEncoder::new(Vec::new(), Compression::fast());
        enc.write_all(part).unwrap();
        file.extend(enc.finish().unwrap());
    }
    let raw = paralens::data::gunzip(&file, "two.gz").unwrap();
    assert_eq!(raw, bytes);
    // Zero padding after the last member is read as gzip reads it: ignored.
    let mut padded = file.clone();
    padded.extend_from_slice(&[0; 16]);
    assert_eq!(paralens::data::gunzip(&padded, "padded.gz").unwrap(), bytes);
    // Other bytes after the last member: an error, not ignored.
    file.extend_from_slice(b"junk");
    let e = paralens::data::gunzip(&file, "junk.gz").unwrap_err();
    assert!(
        e.to_string().contains(
            "4 bytes after the last gzip member that are neither a member nor zero padding"
        ),
        "{e}"
    );
}
