//! The data and checkpoint readers fuzzed with property tests: arbitrary bytes, valid files
//! truncated, with flipped bits or overwritten bytes, and headers that claim huge sizes. No
//! input makes a reader panic, and none makes it allocate more than the input justifies (a
//! header claiming 10^12 elements is refused before anything that size is allocated): a
//! global allocator records the largest single allocation of each parse.

use flate2::{Compression, write::GzEncoder};
use paralens::checkpoint::{from_bytes, to_bytes};
use paralens::data::{
    DIGITS_CSV_GZ, IRIS_CSV, MAX_DEFLATE_RATIO, gunzip, parse_digits, parse_idx_images,
    parse_idx_labels, parse_iris,
};
use paralens::prelude::*;
use proptest::prelude::*;
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::io::{Read, Write};

struct Largest;

thread_local! {
    static LARGEST: Cell<usize> = const { Cell::new(0) };
}

// SAFETY: every call is forwarded unchanged to the system allocator; the only addition is a
// thread-local maximum (a const-initialised `Cell`, which never allocates).
unsafe impl GlobalAlloc for Largest {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LARGEST.with(|c| c.set(c.get().max(layout.size())));
        // SAFETY: same contract as ours, forwarded.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from `System.alloc` with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        LARGEST.with(|c| c.set(c.get().max(new_size)));
        // SAFETY: forwarded with the caller's guarantees.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Largest = Largest;

/// Runs `parse` on `input` and checks its largest allocation is within a bound linear in
/// the input (a parsed value may hold a few times the input: floats from text digits).
fn bounded(input_len: usize, parse: impl FnOnce()) {
    LARGEST.with(|c| c.set(0));
    parse();
    let largest = LARGEST.with(Cell::get);
    let bound = 64 * input_len + 64 * 1024;
    assert!(
        largest <= bound,
        "a {input_len}-byte input allocated {largest} bytes at once"
    );
}

fn idx_images(count: u32, rows: u32, cols: u32, pixels: &[u8]) -> Vec<u8> {
    let mut f = vec![0, 0, 8, 3];
    for v in [count, rows, cols] {
        f.extend(v.to_be_bytes());
    }
    f.extend_from_slice(pixels);
    f
}

fn idx_labels(ls: &[u8]) -> Vec<u8> {
    let mut f = vec![0, 0, 8, 1];
    f.extend((ls.len() as u32).to_be_bytes());
    f.extend_from_slice(ls);
    f
}

/// A valid file's bytes changed by one of: truncation, bit flips, overwritten bytes.
fn mutate(mut bytes: Vec<u8>, how: u8, at: usize, bits: u8) -> Vec<u8> {
    if bytes.is_empty() {
        return bytes;
    }
    let i = at % bytes.len();
    match how % 3 {
        0 => bytes.truncate(i),
        1 => bytes[i] ^= bits | 1,
        _ => bytes[i] = bits,
    }
    bytes
}

fn checkpoint_bytes() -> Vec<u8> {
    let model = Dense::<3, 4>::new().then(Relu).then(Dense::<4, 2>::new());
    to_bytes(&model.init(0)).unwrap()
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut z = GzEncoder::new(Vec::new(), Compression::best());
    z.write_all(bytes).unwrap();
    z.finish().unwrap()
}

/// The first 30 rows of the shipped digits CSV (it has no header line) (the whole file is 1,797 rows: too
/// slow to parse thousands of times in a debug build, and its rows are all alike).
fn digits_head() -> String {
    let mut text = String::new();
    flate2::read::GzDecoder::new(DIGITS_CSV_GZ)
        .read_to_string(&mut text)
        .unwrap();
    text.lines().take(30).map(|l| format!("{l}\n")).collect()
}

/// Cases per property (recorded in `docs/BENCHMARKS.md`).
const CASES: u32 = 2000;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(CASES))]

    #[test]
    fn idx_readers_take_any_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
        bounded(bytes.len(), || {
            let _ = parse_idx_images(&bytes, "fuzz");
            let _ = parse_idx_labels(&bytes, "fuzz");
        });
    }

    #[test]
    fn idx_readers_take_mutated_files(how in any::<u8>(), at in any::<usize>(), bits in any::<u8>()) {
        let images = mutate(idx_images(2, 3, 2, &[7; 12]), how, at, bits);
        let labels = mutate(idx_labels(&[1, 2, 3]), how, at, bits);
        bounded(images.len().max(labels.len()), || {
            let _ = parse_idx_images(&images, "fuzz");
            let _ = parse_idx_labels(&labels, "fuzz");
        });
    }

    #[test]
    fn idx_headers_claiming_huge_sizes_are_refused_before_allocating(
        count in any::<u32>(), rows in any::<u32>(), cols in any::<u32>(), pixels in 0usize..64,
    ) {
        let f = idx_images(count, rows, cols, &vec![0; pixels]);
        let mut ok = false;
        bounded(f.len(), || ok = parse_idx_images(&f, "fuzz").is_ok());
        let claimed = u128::from(count) * u128::from(rows) * u128::from(cols);
        prop_assert_eq!(ok, claimed == pixels as u128);
    }

    #[test]
    fn text_readers_take_any_text(text in "[0-9,.\\-a-z\\n ]{0,400}") {
        bounded(text.len(), || {
            let _ = parse_digits(&text);
            let _ = parse_iris(&text);
        });
    }

    #[test]
    fn text_readers_take_mutated_files(how in any::<u8>(), at in any::<usize>(), bits in any::<u8>()) {
        // Mutated as bytes (a flipped bit may break UTF-8: the reader then sees the
        // replacement character, as it would from a lossy conversion).
        let iris = mutate(IRIS_CSV.as_bytes().to_vec(), how, at, bits);
        let iris = String::from_utf8_lossy(&iris);
        let digits = mutate(digits_head().into_bytes(), how, at, bits);
        let digits = String::from_utf8_lossy(&digits);
        bounded(iris.len().max(digits.len()), || {
            let _ = parse_iris(&iris);
            let _ = parse_digits(&digits);
        });
    }

    #[test]
    fn gzip_reader_takes_mutated_streams(how in any::<u8>(), at in any::<usize>(), bits in any::<u8>()) {
        let stream = mutate(gzip(&idx_labels(&[1, 2, 3, 4, 5])), how, at, bits);
        bounded(stream.len(), || {
            if let Ok(bytes) = gunzip(&stream, "fuzz") {
                let _ = parse_idx_labels(&bytes, "fuzz");
            }
        });
    }

    #[test]
    fn checkpoint_reader_takes_mutated_files(how in any::<u8>(), at in any::<usize>(), bits in any::<u8>()) {
        let bytes = mutate(checkpoint_bytes(), how, at, bits);
        let model = Dense::<3, 4>::new().then(Relu).then(Dense::<4, 2>::new());
        let mut p = model.init(1);
        let before = p.clone();
        bounded(bytes.len(), || {
            if from_bytes(&bytes, &mut p).is_err() {
                assert_eq!(p, before, "a refused load changed the parameters");
            }
        });
    }

    #[test]
    fn checkpoint_reader_takes_any_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
        let model = Dense::<3, 4>::new();
        let mut p = model.init(1);
        bounded(bytes.len(), || {
            let _ = from_bytes(&bytes, &mut p);
        });
    }
}

#[test]
fn a_header_claiming_a_trillion_pixels_is_refused_at_once() {
    // 10^4 x 10^4 x 10^4 = 10^12 pixels claimed, 16 bytes given.
    let f = idx_images(10_000, 10_000, 10_000, &[0; 16]);
    bounded(f.len(), || {
        let e = parse_idx_images(&f, "huge").unwrap_err();
        assert!(!e.to_string().is_empty());
    });
}

#[test]
fn mutated_text_files_still_parse_when_untouched() {
    // The mutation helper's baselines are valid: the properties above start from real files.
    assert_eq!(parse_iris(IRIS_CSV).unwrap().labels.len(), 150);
    assert_eq!(parse_digits(&digits_head()).unwrap().labels.len(), 30);
}

#[test]
fn a_gzip_bomb_is_refused_without_allocating_its_size() {
    // An IDX label file announcing 3 labels, then 50 MB of zeros: 50 KB compressed.
    let mut idx = idx_labels(&[1, 2, 3]);
    idx.resize(idx.len() + 50_000_000, 0);
    let bomb = gzip(&idx);
    bounded(bomb.len(), || {
        let e = gunzip(&bomb, "bomb.gz").unwrap_err().to_string();
        assert!(e.contains("more than its header announces"), "{e}");
    });
    // A bomb that is not an IDX file is refused at its first bytes.
    let mut other = vec![0, 0, 9, 1];
    other.resize(50_000_000, 0);
    let other = gzip(&other);
    bounded(other.len(), || {
        let e = gunzip(&other, "other.gz").unwrap_err().to_string();
        assert!(e.contains("does not hold an IDX file"), "{e}");
    });
    // The same file without the excess is read.
    let fine = gzip(&idx_labels(&[1, 2, 3]));
    assert_eq!(
        parse_idx_labels(&gunzip(&fine, "fine.gz").unwrap(), "fine").unwrap(),
        [1, 2, 3]
    );
}

#[test]
fn a_gzipped_header_claiming_more_than_deflate_can_hold_is_refused_at_once() {
    // 10^4 x 10^4 x 10^4 images claimed in a 60-byte stream.
    let z = gzip(&idx_images(10_000, 10_000, 10_000, &[0; 16]));
    assert!((z.len() as u64) * MAX_DEFLATE_RATIO < 1_000_000_000_000);
    bounded(z.len(), || {
        let e = gunzip(&z, "huge.gz").unwrap_err().to_string();
        assert!(e.contains("announces more data than"), "{e}");
    });
}

#[test]
fn a_checkpoint_claiming_a_trillion_entries_is_refused_before_allocating() {
    // A safetensors header whose one tensor claims 10^6 x 10^6 floats, with 16 data bytes.
    let header = br#"{"l1.w":{"dtype":"F32","shape":[1000000,1000000],"data_offsets":[0,16]}}"#;
    let mut f = (header.len() as u64).to_le_bytes().to_vec();
    f.extend_from_slice(header);
    f.extend_from_slice(&[0; 16]);
    let model = Dense::<3, 4>::new();
    let mut p = model.init(1);
    let before = p.clone();
    bounded(f.len(), || {
        let e = from_bytes(&f, &mut p).unwrap_err();
        assert!(!e.to_string().is_empty());
    });
    assert_eq!(p, before);
}
