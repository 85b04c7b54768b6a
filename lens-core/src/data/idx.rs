//! IDX files (the MNIST format), plain or gzip-compressed.
//!
//! An IDX file is a big-endian header (magic `0x0000_08_DD`: unsigned bytes, `DD`
//! dimensions), one `u32` size per dimension, then the data. Images have 3 dimensions
//! (count, rows, columns), labels 1.

use super::DataError;
use flate2::bufread::GzDecoder;
use std::io::Read;
use std::path::{Path, PathBuf};

/// Images from an IDX file: `count` images of `rows x cols` bytes, row by row.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Images {
    /// The number of images.
    pub count: usize,
    /// Rows per image.
    pub rows: usize,
    /// Columns per image.
    pub cols: usize,
    /// All pixels, image after image, row by row (0 = background, 255 = full ink).
    pub pixels: Vec<u8>,
}

impl Images {
    /// The pixels of image `i`.
    ///
    /// # Panics
    /// If `i >= count`.
    #[must_use]
    pub fn image(&self, i: usize) -> &[u8] {
        let n = self.rows * self.cols;
        &self.pixels[i * n..(i + 1) * n]
    }
}

/// Reads a whole IDX file, decompressing it if it starts with the gzip magic.
///
/// Decompression never produces more than the input can justify: the stream must start
/// with an IDX header, which is read first; a header announcing more than deflate (at most
/// [`MAX_DEFLATE_RATIO`] to 1) could expand the compressed bytes to is refused before any
/// data is read, and decompression stops one byte past the size the header announces. A
/// gzip bomb is an error, not an allocation of its size.
///
/// # Errors
/// The file cannot be read, its gzip stream is corrupt or does not hold an IDX file, or it
/// decompresses to more than its header announces.
pub fn read_maybe_gzip(path: &Path) -> Result<Vec<u8>, DataError> {
    let src = path.display().to_string();
    let raw =
        std::fs::read(path).map_err(|e| DataError::whole(&src, format!("cannot read: {e}")))?;
    if raw.starts_with(&[0x1f, 0x8b]) {
        gunzip(&raw, &src)
    } else {
        Ok(raw)
    }
}

/// The most that deflate can expand its input (1032 to 1, for long runs of one byte): no
/// valid gzip stream decompresses to more than this many times its size.
pub const MAX_DEFLATE_RATIO: u64 = 1032;

/// The data of every member of a gzip file, as gzip reads it: a file of several concatenated
/// members is one valid file (one `GzDecoder` stopped after the first member and reported
/// the rest as truncated), and zero bytes after the last member are padding. Other bytes after
/// it are an error (`MultiGzDecoder` took zero padding for a corrupt member header).
struct Members<'a> {
    member: Option<GzDecoder<&'a [u8]>>,
}

impl<'a> Members<'a> {
    fn new(raw: &'a [u8]) -> Self {
        Self {
            member: Some(GzDecoder::new(raw)),
        }
    }
}

impl Read for Members<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        while let Some(member) = &mut self.member {
            let n = member.read(buf)?;
            if n > 0 || buf.is_empty() {
                return Ok(n);
            }
            // This member is done: what follows is another member, padding or garbage.
            let rest = self.member.take().map_or(&[][..], GzDecoder::into_inner);
            if rest.starts_with(&[0x1f, 0x8b]) {
                self.member = Some(GzDecoder::new(rest));
            } else if rest.iter().any(|&b| b != 0) {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::InvalidData,
                    format!(
                        "{} bytes after the last gzip member that are neither a member nor zero padding",
                        rest.len()
                    ),
                ));
            }
        }
        Ok(0)
    }
}

/// Decompresses a gzipped IDX file within the bounds of [`read_maybe_gzip`].
///
/// ```
/// use flate2::{Compression, write::GzEncoder};
/// use std::io::Write;
/// // An IDX label file announcing 3 labels, followed by a million more bytes.
/// let mut idx = vec![0, 0, 8, 1, 0, 0, 0, 3, 1, 2, 3];
/// idx.resize(idx.len() + 1_000_000, 0);
/// let mut z = GzEncoder::new(Vec::new(), Compression::best());
/// z.write_all(&idx).unwrap();
/// let err = paralens::data::gunzip(&z.finish().unwrap(), "bomb.gz").unwrap_err();
/// assert!(err.to_string().contains("more than its header announces"), "{err}");
/// ```
///
/// # Errors
/// A corrupt stream, content that does not start with an IDX header, a header announcing
/// more than the input can hold, or more data than the header announces.
pub fn gunzip(raw: &[u8], src: &str) -> Result<Vec<u8>, DataError> {
    let corrupt = |e: std::io::Error| DataError::whole(src, format!("corrupt gzip stream: {e}"));
    let bound = (raw.len() as u64).saturating_mul(MAX_DEFLATE_RATIO);
    let mut dec = Members::new(raw);
    let mut out = Vec::new();
    // The IDX header first (magic `00 00 08 DD`, then `DD` sizes): it says how much follows.
    (&mut dec).take(4).read_to_end(&mut out).map_err(corrupt)?;
    if out.len() < 4 || out[..3] != [0, 0, 8] {
        return Err(DataError::whole(
            src,
            format!(
                "the gzip stream does not hold an IDX file: it starts with {out:02x?}, not 00 00 08 (unsigned bytes)"
            ),
        ));
    }
    let dims = usize::from(out[3]);
    (&mut dec)
        .take(4 * dims as u64)
        .read_to_end(&mut out)
        .map_err(corrupt)?;
    if out.len() < 4 + 4 * dims {
        // A header cut short: the parser says so, with the sizes it expected.
        return Ok(out);
    }
    let claimed = (0..dims).try_fold(1u64, |n, d| {
        let o = 4 + 4 * d;
        n.checked_mul(u64::from(u32::from_be_bytes([
            out[o],
            out[o + 1],
            out[o + 2],
            out[o + 3],
        ])))
    });
    let limit = match claimed.and_then(|n| n.checked_add(4 + 4 * dims as u64)) {
        Some(total) if total <= bound => total,
        _ => {
            return Err(DataError::whole(
                src,
                format!(
                    "the IDX header announces more data than {} compressed bytes can hold",
                    raw.len()
                ),
            ));
        }
    };
    let room = (limit + 1).saturating_sub(out.len() as u64);
    (&mut dec)
        .take(room)
        .read_to_end(&mut out)
        .map_err(corrupt)?;
    if out.len() as u64 > limit {
        return Err(DataError::whole(
            src,
            format!(
                "too long: the stream holds more than its header announces ({} data bytes)",
                limit - (4 + 4 * dims as u64)
            ),
        ));
    }
    Ok(out)
}

fn header(bytes: &[u8], source: &str, dims: u8) -> Result<Vec<usize>, DataError> {
    let need = 4 + 4 * dims as usize;
    let short = |need: usize| {
        DataError::whole(
            source,
            format!(
                "truncated: {} bytes, shorter than the {need}-byte IDX header",
                bytes.len()
            ),
        )
    };
    if bytes.len() < 4 {
        return Err(short(need));
    }
    let magic = u32::from_be_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]);
    let want = 0x0800 | u32::from(dims);
    if magic != want {
        return Err(DataError::whole(
            source,
            format!(
                "wrong magic number {magic:#010x}: expected {want:#010x} (unsigned bytes, {dims} dimension{})",
                if dims == 1 { "" } else { "s" }
            ),
        ));
    }
    if bytes.len() < need {
        return Err(short(need));
    }
    Ok((0..dims as usize)
        .map(|d| {
            let o = 4 + 4 * d;
            u32::from_be_bytes([bytes[o], bytes[o + 1], bytes[o + 2], bytes[o + 3]]) as usize
        })
        .collect())
}

fn body<'a>(bytes: &'a [u8], source: &str, dims: usize, len: usize) -> Result<&'a [u8], DataError> {
    let data = &bytes[4 + 4 * dims..];
    if data.len() != len {
        let what = if data.len() < len {
            "truncated"
        } else {
            "too long"
        };
        return Err(DataError::whole(
            source,
            format!(
                "{what}: the header announces {len} data bytes, the file has {}",
                data.len()
            ),
        ));
    }
    Ok(data)
}

/// Parses an IDX image file (3 dimensions).
///
/// ```
/// let mut f = vec![0, 0, 8, 3, 0, 0, 0, 2, 0, 0, 0, 1, 0, 0, 0, 2];
/// f.extend([1, 2, 3, 4]);
/// let im = paralens::data::parse_idx_images(&f, "test").unwrap();
/// assert_eq!((im.count, im.rows, im.cols), (2, 1, 2));
/// assert_eq!(im.image(1), [3, 4]);
/// ```
///
/// # Errors
/// A wrong magic number, a truncated or overlong file.
pub fn parse_idx_images(bytes: &[u8], source: &str) -> Result<Images, DataError> {
    let h = header(bytes, source, 3)?;
    let (count, rows, cols) = (h[0], h[1], h[2]);
    let len = count
        .checked_mul(rows)
        .and_then(|n| n.checked_mul(cols))
        .ok_or_else(|| DataError::whole(source, "the header's sizes overflow"))?;
    let pixels = body(bytes, source, 3, len)?.to_vec();
    Ok(Images {
        count,
        rows,
        cols,
        pixels,
    })
}

/// Parses an IDX label file (1 dimension).
///
/// # Errors
/// A wrong magic number, a truncated or overlong file.
pub fn parse_idx_labels(bytes: &[u8], source: &str) -> Result<Vec<u8>, DataError> {
    let h = header(bytes, source, 1)?;
    Ok(body(bytes, source, 1, h[0])?.to_vec())
}

/// A data set in the MNIST layout: training and test images with their labels `0..10`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mnist {
    /// Training images.
    pub train_images: Images,
    /// Training labels.
    pub train_labels: Vec<u8>,
    /// Test images.
    pub test_images: Images,
    /// Test labels.
    pub test_labels: Vec<u8>,
}

/// The four file names of the MNIST layout (each read as `name.gz` or `name`).
pub const MNIST_FILES: [&str; 4] = [
    "train-images-idx3-ubyte",
    "train-labels-idx1-ubyte",
    "t10k-images-idx3-ubyte",
    "t10k-labels-idx1-ubyte",
];

fn find(dir: &Path, name: &str) -> Result<PathBuf, DataError> {
    for candidate in [format!("{name}.gz"), name.to_owned()] {
        let p = dir.join(&candidate);
        if p.is_file() {
            return Ok(p);
        }
    }
    Err(DataError::whole(
        &dir.display().to_string(),
        format!(
            "no `{name}.gz` (or `{name}`) here; a data folder in the MNIST layout holds {}",
            MNIST_FILES.map(|f| format!("{f}.gz")).join(", ")
        ),
    ))
}

/// The side of an MNIST or Fashion-MNIST image, in pixels.
pub const MNIST_SIDE: usize = 28;

/// Loads MNIST or Fashion-MNIST from a folder holding the four standard files.
///
/// # Errors
/// A folder that does not exist, a missing file (the message names the four expected
/// files), a malformed file, images that are not 28x28, image and label counts that differ,
/// or a label outside `0..10`.
pub fn load_mnist(dir: &Path) -> Result<Mnist, DataError> {
    if !dir.is_dir() {
        let what = if dir.exists() {
            "is not a folder"
        } else {
            "does not exist"
        };
        return Err(DataError::whole(
            &dir.display().to_string(),
            format!(
                "{what}; give the folder holding {} (`bash scripts/fetch-data.sh DIR` in the paralens repository downloads and checks them)",
                MNIST_FILES.map(|f| format!("{f}.gz")).join(", ")
            ),
        ));
    }
    let mut files = Vec::new();
    for name in MNIST_FILES {
        files.push(find(dir, name)?);
    }
    let src = |i: usize| files[i].display().to_string();
    let train_images = parse_idx_images(&read_maybe_gzip(&files[0])?, &src(0))?;
    let train_labels = parse_idx_labels(&read_maybe_gzip(&files[1])?, &src(1))?;
    let test_images = parse_idx_images(&read_maybe_gzip(&files[2])?, &src(2))?;
    let test_labels = parse_idx_labels(&read_maybe_gzip(&files[3])?, &src(3))?;
    for (images, i) in [(&train_images, 0), (&test_images, 2)] {
        // A model of MNIST takes 784 pixels: other images would be cut or run short.
        if (images.rows, images.cols) != (MNIST_SIDE, MNIST_SIDE) {
            return Err(DataError::whole(
                &src(i),
                format!(
                    "the images are {}x{}; MNIST and Fashion-MNIST images are {MNIST_SIDE}x{MNIST_SIDE}",
                    images.rows, images.cols
                ),
            ));
        }
    }
    for (images, labels, i) in [
        (&train_images, &train_labels, 1),
        (&test_images, &test_labels, 3),
    ] {
        if images.count != labels.len() {
            return Err(DataError::whole(
                &src(i),
                format!("{} labels for {} images", labels.len(), images.count),
            ));
        }
        if let Some(k) = labels.iter().position(|&l| l > 9) {
            return Err(DataError::whole(
                &src(i),
                format!("label {} of example {k} is not a digit 0..9", labels[k]),
            ));
        }
    }
    Ok(Mnist {
        train_images,
        train_labels,
        test_images,
        test_labels,
    })
}
