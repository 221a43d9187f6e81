//! Screenshots for `observe`: decoded, downscaled so the long side is at
//! most a bound, and re-encoded as JPEG (default) or PNG, so an agent's
//! context gets a bounded image.
//!
//! Pure: bytes in, bytes out. It never reads files, never upscales, and
//! never returns an image whose long side exceeds the bound.

use std::io::Cursor;

use image::ImageFormat;
use image::imageops::FilterType;

/// Long side of an observed image by default, in pixels.
pub(crate) const DEFAULT_MAX_SIDE: u32 = 1280;
/// Smallest and largest long side a caller may ask for.
pub(crate) const MIN_SIDE: u32 = 64;
pub(crate) const MAX_SIDE: u32 = 4096;
/// JPEG quality (1–100).
const JPEG_QUALITY: u8 = 80;

/// The encoding asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Format {
    #[default]
    Jpeg,
    Png,
}

impl Format {
    pub(crate) fn mime_type(self) -> &'static str {
        match self {
            Format::Jpeg => "image/jpeg",
            Format::Png => "image/png",
        }
    }
}

/// An encoded, bounded screenshot.
#[derive(Debug, Clone)]
pub(crate) struct Encoded {
    pub bytes: Vec<u8>,
    pub format: Format,
    pub width: u32,
    pub height: u32,
    pub source_width: u32,
    pub source_height: u32,
}

/// Why a screenshot could not be prepared.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ImageError {
    #[error("the screenshot cannot be decoded: {0}")]
    Decode(image::ImageError),
    #[error("the screenshot cannot be encoded: {0}")]
    Encode(image::ImageError),
}

/// The size `(w, h)` scaled so its long side is at most `max_side`
/// (aspect kept, never upscaled, never zero).
pub(crate) fn bounded_size(w: u32, h: u32, max_side: u32) -> (u32, u32) {
    let long = w.max(h);
    if long <= max_side || long == 0 {
        return (w.max(1), h.max(1));
    }
    let scale = f64::from(max_side) / f64::from(long);
    let fit = |v: u32| ((f64::from(v) * scale).round() as u32).clamp(1, max_side);
    (fit(w), fit(h))
}

/// Decodes `bytes` (PNG or JPEG), bounds the long side by `max_side`
/// (clamped to [`MIN_SIDE`]..=[`MAX_SIDE`]) and encodes as `format`.
pub(crate) fn prepare(bytes: &[u8], format: Format, max_side: u32) -> Result<Encoded, ImageError> {
    let max_side = max_side.clamp(MIN_SIDE, MAX_SIDE);
    let img = image::load_from_memory(bytes).map_err(ImageError::Decode)?;
    let (sw, sh) = (img.width(), img.height());
    let (w, h) = bounded_size(sw, sh, max_side);
    let img = if (w, h) == (sw, sh) {
        img
    } else {
        img.resize_exact(w, h, FilterType::Triangle)
    };
    let mut out = Cursor::new(Vec::new());
    match format {
        Format::Jpeg => {
            let rgb = img.to_rgb8();
            let encoder =
                image::codecs::jpeg::JpegEncoder::new_with_quality(&mut out, JPEG_QUALITY);
            rgb.write_with_encoder(encoder)
                .map_err(ImageError::Encode)?;
        }
        Format::Png => img
            .write_to(&mut out, ImageFormat::Png)
            .map_err(ImageError::Encode)?,
    }
    Ok(Encoded {
        bytes: out.into_inner(),
        format,
        width: w,
        height: h,
        source_width: sw,
        source_height: sh,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn png(w: u32, h: u32) -> Vec<u8> {
        let img = image::RgbImage::from_fn(w, h, |x, y| {
            image::Rgb([(x % 256) as u8, (y % 256) as u8, 90])
        });
        let mut out = Cursor::new(Vec::new());
        img.write_to(&mut out, ImageFormat::Png).expect("encode");
        out.into_inner()
    }

    #[test]
    fn sizes_are_bounded_keep_aspect_and_never_grow() {
        assert_eq!(bounded_size(720, 1280, 1280), (720, 1280));
        assert_eq!(bounded_size(1440, 2560, 1280), (720, 1280));
        assert_eq!(bounded_size(2560, 1600, 1280), (1280, 800));
        assert_eq!(bounded_size(100, 50, 1280), (100, 50));
        assert_eq!(bounded_size(10_000, 1, 64), (64, 1));
    }

    #[test]
    fn a_large_png_becomes_a_bounded_jpeg() {
        let e = prepare(&png(1440, 2560), Format::Jpeg, DEFAULT_MAX_SIDE).expect("prepare");
        assert_eq!((e.width, e.height), (720, 1280));
        assert_eq!((e.source_width, e.source_height), (1440, 2560));
        let back = image::load_from_memory_with_format(&e.bytes, ImageFormat::Jpeg).expect("jpeg");
        assert_eq!((back.width(), back.height()), (720, 1280));
    }

    #[test]
    fn png_on_request_and_a_smaller_bound() {
        let e = prepare(&png(800, 600), Format::Png, 400).expect("prepare");
        let back = image::load_from_memory_with_format(&e.bytes, ImageFormat::Png).expect("png");
        assert_eq!((back.width(), back.height()), (400, 300));
        assert_eq!(e.format.mime_type(), "image/png");
    }

    #[test]
    fn garbage_is_a_decode_error() {
        assert!(matches!(
            prepare(b"not an image", Format::Jpeg, 1280),
            Err(ImageError::Decode(_))
        ));
    }
}
