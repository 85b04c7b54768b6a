//! 8x8 images written as one grayscale PNG (the examples that draw digits share it).

use paralens::prelude::*;
use std::path::Path;

/// How the images are laid out: `cols` to a row, each pixel drawn as a `scale` x `scale`
/// block, `gap` pixels of gray between and around them.
#[derive(Clone, Copy, Debug)]
pub struct Grid {
    /// Images per row.
    pub cols: usize,
    /// Screen pixels per image pixel, across and down.
    pub scale: usize,
    /// Gray pixels between images and at the border.
    pub gap: usize,
}

/// Writes `images` (row-major 8x8, one `SVector` each) to `path` as a grayscale PNG laid out
/// by `grid`; `level` maps an image and one of its values to a brightness in `0..=1` (clamped
/// after it).
///
/// # Errors
/// The file cannot be created or written.
pub fn write_digits(
    path: &Path,
    images: &[SVector<f32, 64>],
    grid: Grid,
    level: impl Fn(&SVector<f32, 64>, f32) -> f32,
) -> std::io::Result<()> {
    let Grid { cols, scale, gap } = grid;
    let cols = cols.max(1);
    let tile = 8 * scale + gap;
    let rows = images.len().div_ceil(cols);
    let (w, h) = (cols * tile + gap, rows * tile + gap);
    let mut pixels = vec![96u8; w * h];
    for (k, img) in images.iter().enumerate() {
        let (r, c) = (k / cols, k % cols);
        for y in 0..8 * scale {
            for x in 0..8 * scale {
                let v = level(img, img[(y / scale) * 8 + x / scale]).clamp(0.0, 1.0);
                pixels[(gap + r * tile + y) * w + gap + c * tile + x] = (v * 255.0).round() as u8;
            }
        }
    }
    let file = std::io::BufWriter::new(std::fs::File::create(path)?);
    let mut encoder = png::Encoder::new(file, w as u32, h as u32);
    encoder.set_color(png::ColorType::Grayscale);
    encoder.set_depth(png::BitDepth::Eight);
    let mut writer = encoder.write_header().map_err(std::io::Error::other)?;
    writer
        .write_image_data(&pixels)
        .map_err(std::io::Error::other)?;
    Ok(())
}
