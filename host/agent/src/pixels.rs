//! A small perceptual digest of a screenshot: its SHA-256 plus a 64×40
//! grid of average luma, so two screenshots can be compared without
//! keeping either: identical bytes, a blinking caret (a few cells), or a
//! real change (many cells).
//!
//! Pure: decodes the bytes it is given, nothing else.

use sha2::{Digest, Sha256};

/// Grid columns.
pub const GRID_W: usize = 64;
/// Grid rows.
pub const GRID_H: usize = 40;
/// A cell whose luma moved by more than this changed.
pub const CELL_DELTA: u8 = 8;
/// Screenshots differing in at most this share of cells are the same
/// screen (a caret, an antialiasing wobble).
pub const EQUIVALENT_SHARE: f64 = 0.005;

/// What a screenshot looks like, coarsely.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PixelDigest {
    /// Lower-case hex SHA-256 of the encoded bytes.
    pub sha256: String,
    /// Average luma per cell, row by row.
    pub grid: Vec<u8>,
}

/// Why a screenshot could not be digested.
#[derive(Debug, thiserror::Error)]
#[error("the screenshot cannot be decoded: {0}")]
pub struct PixelError(#[from] image::ImageError);

/// How two screenshots differ.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PixelChange {
    /// Byte-identical.
    pub identical: bool,
    /// Cells whose luma moved by more than [`CELL_DELTA`].
    pub changed_cells: u32,
    /// Cells in the grid.
    pub total_cells: u32,
    /// Mean absolute luma difference over all cells.
    pub mean_delta: f32,
}

impl PixelChange {
    /// No difference at all.
    pub fn none() -> Self {
        Self {
            identical: true,
            changed_cells: 0,
            total_cells: (GRID_W * GRID_H) as u32,
            mean_delta: 0.0,
        }
    }

    /// Share of changed cells (0–1).
    pub fn share(&self) -> f64 {
        if self.total_cells == 0 {
            0.0
        } else {
            f64::from(self.changed_cells) / f64::from(self.total_cells)
        }
    }

    /// Whether the two screenshots show the same screen.
    pub fn equivalent(&self) -> bool {
        self.identical || self.share() <= EQUIVALENT_SHARE
    }

    /// Whether more than `share` (0–1) of the screen changed.
    pub fn beyond(&self, share: f64) -> bool {
        !self.identical && self.share() > share
    }
}

impl PixelDigest {
    /// Digests encoded image bytes (PNG or JPEG).
    pub fn from_image(bytes: &[u8]) -> Result<Self, PixelError> {
        let sha256 = hex(&Sha256::digest(bytes));
        let img = image::load_from_memory(bytes)?.to_luma8();
        let (w, h) = (img.width() as usize, img.height() as usize);
        let mut sum = vec![0u64; GRID_W * GRID_H];
        let mut count = vec![0u64; GRID_W * GRID_H];
        if w > 0 && h > 0 {
            let raw = img.as_raw();
            for y in 0..h {
                let gy = y * GRID_H / h;
                let row = &raw[y * w..(y + 1) * w];
                for (x, &l) in row.iter().enumerate() {
                    let cell = gy * GRID_W + x * GRID_W / w;
                    sum[cell] += u64::from(l);
                    count[cell] += 1;
                }
            }
        }
        let grid = sum
            .iter()
            .zip(&count)
            .map(|(&s, &c)| s.checked_div(c).unwrap_or(0) as u8)
            .collect();
        Ok(Self { sha256, grid })
    }

    /// How `other` differs from this one.
    pub fn compare(&self, other: &PixelDigest) -> PixelChange {
        if self.sha256 == other.sha256 {
            return PixelChange::none();
        }
        let mut changed = 0u32;
        let mut total_delta = 0u64;
        for (a, b) in self.grid.iter().zip(&other.grid) {
            let d = a.abs_diff(*b);
            total_delta += u64::from(d);
            if d > CELL_DELTA {
                changed += 1;
            }
        }
        let cells = self.grid.len().max(1) as u32;
        PixelChange {
            identical: false,
            changed_cells: changed,
            total_cells: cells,
            mean_delta: total_delta as f32 / cells as f32,
        }
    }
}

fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write;
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        let _ = write!(out, "{b:02x}");
    }
    out
}

/// Pixel digests kept by a [`PixelCache`].
pub const DIGESTS_KEPT: usize = 256;

/// Pixel digests by screenshot sha256, the most recent
/// [`DIGESTS_KEPT`]: an unchanged screen is decoded once.
#[derive(Debug, Default)]
pub struct PixelCache {
    map: std::collections::HashMap<String, PixelDigest>,
    order: std::collections::VecDeque<String>,
}

impl PixelCache {
    /// The digest of screenshot `sha`, when kept.
    pub fn get(&self, sha: &str) -> Option<PixelDigest> {
        self.map.get(sha).cloned()
    }

    /// Keeps `d`, forgetting the oldest beyond [`DIGESTS_KEPT`].
    pub fn put(&mut self, d: PixelDigest) {
        if self.map.contains_key(&d.sha256) {
            return;
        }
        self.order.push_back(d.sha256.clone());
        self.map.insert(d.sha256.clone(), d);
        while self.order.len() > DIGESTS_KEPT {
            if let Some(old) = self.order.pop_front() {
                self.map.remove(&old);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use image::{ImageFormat, Rgb, RgbImage};
    use std::io::Cursor;

    fn png(img: &RgbImage) -> Vec<u8> {
        let mut out = Cursor::new(Vec::new());
        img.write_to(&mut out, ImageFormat::Png).expect("png");
        out.into_inner()
    }

    #[test]
    fn identical_caret_and_real_changes() {
        let base = RgbImage::from_pixel(640, 400, Rgb([240, 240, 240]));
        let a = PixelDigest::from_image(&png(&base)).expect("digest");
        assert!(a.compare(&a).identical);
        // A caret: one 2x20 px line, inside a single cell.
        let mut caret = base.clone();
        for y in 100..120 {
            for x in 300..302 {
                caret.put_pixel(x, y, Rgb([0, 0, 0]));
            }
        }
        let b = PixelDigest::from_image(&png(&caret)).expect("digest");
        let c = a.compare(&b);
        assert!(!c.identical && c.equivalent(), "{c:?}");
        // A dialog covering a quarter of the screen.
        let mut dialog = base.clone();
        for y in 100..300 {
            for x in 160..480 {
                dialog.put_pixel(x, y, Rgb([30, 60, 200]));
            }
        }
        let d = PixelDigest::from_image(&png(&dialog)).expect("digest");
        let c = a.compare(&d);
        assert!(!c.equivalent() && c.beyond(0.02), "{c:?}");
        assert!(PixelDigest::from_image(b"junk").is_err());
    }
}
