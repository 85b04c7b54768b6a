//! The 8x8 handwritten digits, shipped with the crate (see `lens-core/data/README.md`).

use super::DataError;
use flate2::read::GzDecoder;
use std::io::Read;

/// The shipped file: gzip of 1797 CSV rows of 64 pixel counts (0..16) and a label.
pub const DIGITS_CSV_GZ: &[u8] = include_bytes!("../../data/digits.csv.gz");

/// The digits: 8x8 images (row-major pixel counts 0..16) and labels 0..9.
#[derive(Clone, Debug, PartialEq)]
pub struct Digits {
    /// The images, 64 values each.
    pub images: Vec<[f64; 64]>,
    /// The labels.
    pub labels: Vec<usize>,
}

/// The shipped digits.
///
/// ```
/// let d = paralens::data::digits();
/// assert_eq!(d.images.len(), 1797);
/// assert_eq!(d.labels[..3], [0, 1, 2]);
/// ```
#[must_use]
pub fn digits() -> Digits {
    let mut text = String::new();
    GzDecoder::new(DIGITS_CSV_GZ)
        .read_to_string(&mut text)
        .expect("the shipped digits.csv.gz is valid gzip (checked by tests)");
    parse_digits(&text).expect("the shipped digits.csv.gz is valid (checked by tests)")
}

/// Parses the digits CSV: rows of 65 comma-separated integers, 64 pixels in `0..=16` and a
/// label in `0..=9`.
///
/// # Errors
/// A row with the wrong number of fields, a value that is not an integer or out of range,
/// with its line number; or no rows.
pub fn parse_digits(text: &str) -> Result<Digits, DataError> {
    const SRC: &str = "digits.csv";
    let mut d = Digits {
        images: Vec::new(),
        labels: Vec::new(),
    };
    for (i, line) in text.lines().enumerate() {
        let n = i + 1;
        if line.trim().is_empty() {
            continue;
        }
        let fields: Vec<&str> = line.split(',').map(str::trim).collect();
        if fields.len() != 65 {
            return Err(DataError::at(
                SRC,
                n,
                format!("expected 65 comma-separated values, found {}", fields.len()),
            ));
        }
        let num = |f: &str, max: u32| -> Result<u32, DataError> {
            f.parse::<u32>().ok().filter(|&v| v <= max).ok_or_else(|| {
                DataError::at(SRC, n, format!("`{f}` is not an integer in 0..={max}"))
            })
        };
        let mut img = [0.0; 64];
        for (slot, f) in img.iter_mut().zip(&fields[..64]) {
            *slot = f64::from(num(f, 16)?);
        }
        d.images.push(img);
        d.labels.push(num(fields[64], 9)? as usize);
    }
    if d.labels.is_empty() {
        return Err(DataError::whole(SRC, "no rows"));
    }
    Ok(d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shipped_file_has_the_published_counts() {
        let d = digits();
        let mut counts = [0; 10];
        for &l in &d.labels {
            counts[l] += 1;
        }
        assert_eq!(counts, [178, 182, 177, 183, 181, 182, 181, 179, 174, 180]);
        assert!(
            d.images
                .iter()
                .flatten()
                .all(|&v| (0.0..=16.0).contains(&v))
        );
    }

    #[test]
    fn malformed_rows_are_reported_with_their_line() {
        let row = |v: &str| format!("{}{v}\n", "0,".repeat(64));
        let e = parse_digits(&format!("{}{}", row("3"), row("12"))).unwrap_err();
        assert_eq!(
            e.to_string(),
            "digits.csv, line 2: `12` is not an integer in 0..=9"
        );
        let e = parse_digits("1,2,3\n").unwrap_err();
        assert!(e.to_string().contains("expected 65"), "{e}");
        let e = parse_digits(&format!("17,{}", row("1").split_at(2).1)).unwrap_err();
        assert!(
            e.to_string().contains("`17` is not an integer in 0..=16"),
            "{e}"
        );
        assert!(parse_digits("").is_err());
    }
}
