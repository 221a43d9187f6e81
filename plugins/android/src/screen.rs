//! The screen: `wm size`/`wm density` parsing, the raw `screencap`
//! framebuffer format, and PNG encoding on the host.
//!
//! Raw `screencap` output is a little-endian header — width, height,
//! pixel format, and since Android 12 a colour-space word (12 or 16
//! bytes) — followed by the pixels, row by row, without padding.

use image::ImageEncoder;
use image::codecs::png::{CompressionType, FilterType, PngEncoder};

/// Physical size and density of the default display, as `wm` reports
/// them (overrides win).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Display {
    /// Width in pixels, in the natural orientation (portrait for phones).
    pub(crate) width: u32,
    /// Height in pixels, in the natural orientation.
    pub(crate) height: u32,
    /// Dots per inch; 160 is scale 1.
    pub(crate) density: u32,
}

impl Display {
    /// Pixels per density-independent pixel.
    pub(crate) fn scale_factor(&self) -> f64 {
        f64::from(self.density.max(1)) / 160.0
    }

    /// The size in the given rotation (0-3, quarter turns).
    pub(crate) fn rotated(&self, rotation: u32) -> (u32, u32) {
        if rotation % 2 == 1 {
            (self.height, self.width)
        } else {
            (self.width, self.height)
        }
    }
}

fn find_value<'a>(text: &'a str, label: &str) -> Option<&'a str> {
    text.lines()
        .find_map(|l| l.trim().strip_prefix(label))
        .map(str::trim)
}

/// `WxH` from `wm size` output (`Override size` wins over `Physical
/// size`).
pub(crate) fn parse_wm_size(text: &str) -> Option<(u32, u32)> {
    let v = find_value(text, "Override size:").or_else(|| find_value(text, "Physical size:"))?;
    let (w, h) = v.split_once('x')?;
    let (w, h) = (w.trim().parse().ok()?, h.trim().parse().ok()?);
    (w > 0 && h > 0).then_some((w, h))
}

/// The density from `wm density` output (`Override density` wins).
pub(crate) fn parse_wm_density(text: &str) -> Option<u32> {
    let v =
        find_value(text, "Override density:").or_else(|| find_value(text, "Physical density:"))?;
    v.parse().ok().filter(|d| *d > 0)
}

/// A raw framebuffer that cannot be decoded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RawError {
    /// Fewer bytes (the count) than the 12-byte header.
    #[error("the framebuffer is {0} bytes, shorter than its header")]
    Short(usize),
    /// The header names an Android `PixelFormat` (the number) other than
    /// RGBA/RGBX/BGRA 8888, RGB 888 or RGB 565.
    #[error("unsupported pixel format {0}")]
    Format(u32),
    /// The pixel data does not match the header's dimensions.
    #[error("{len} bytes do not hold a {width}x{height} image with a 12- or 16-byte header")]
    Size {
        /// Bytes received, header included.
        len: usize,
        /// Width the header claims, in pixels.
        width: u32,
        /// Height the header claims, in pixels.
        height: u32,
    },
}

/// A decoded framebuffer: RGBA pixels.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame {
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// `width * height` pixels, row by row, 4 bytes each (R, G, B, A).
    pub rgba: Vec<u8>,
}

/// Android `PixelFormat` values `screencap` writes.
const RGBA_8888: u32 = 1;
const RGBX_8888: u32 = 2;
const RGB_888: u32 = 3;
const RGB_565: u32 = 4;
const BGRA_8888: u32 = 5;

fn word(b: &[u8], i: usize) -> u32 {
    u32::from_le_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]])
}

/// Decodes raw `screencap` output.
pub fn decode_raw(data: &[u8]) -> Result<Frame, RawError> {
    if data.len() < 12 {
        return Err(RawError::Short(data.len()));
    }
    let (width, height, format) = (word(data, 0), word(data, 4), word(data, 8));
    let bpp = match format {
        RGBA_8888 | RGBX_8888 | BGRA_8888 => 4,
        RGB_888 => 3,
        RGB_565 => 2,
        other => return Err(RawError::Format(other)),
    };
    let pixels = (width as usize)
        .checked_mul(height as usize)
        .and_then(|n| n.checked_mul(bpp))
        .ok_or(RawError::Size {
            len: data.len(),
            width,
            height,
        })?;
    let header = [16usize, 12]
        .into_iter()
        .find(|h| data.len() == h + pixels)
        .ok_or(RawError::Size {
            len: data.len(),
            width,
            height,
        })?;
    let px = &data[header..];
    let rgba = match format {
        RGBA_8888 => px.to_vec(),
        RGBX_8888 => {
            let mut v = px.to_vec();
            v.chunks_exact_mut(4).for_each(|p| p[3] = 255);
            v
        }
        BGRA_8888 => {
            let mut v = px.to_vec();
            v.chunks_exact_mut(4).for_each(|p| p.swap(0, 2));
            v
        }
        RGB_888 => px
            .chunks_exact(3)
            .flat_map(|p| [p[0], p[1], p[2], 255])
            .collect(),
        _ => px
            .chunks_exact(2)
            .flat_map(|p| {
                let v = u16::from_le_bytes([p[0], p[1]]);
                let (r, g, b) = ((v >> 11) & 0x1f, (v >> 5) & 0x3f, v & 0x1f);
                [
                    ((r << 3) | (r >> 2)) as u8,
                    ((g << 2) | (g >> 4)) as u8,
                    ((b << 3) | (b >> 2)) as u8,
                    255,
                ]
            })
            .collect(),
    };
    Ok(Frame {
        width,
        height,
        rgba,
    })
}

/// Encodes a frame as PNG. Screens are opaque, so the alpha channel is
/// dropped (a quarter less to compress), with fast compression and
/// adaptive filtering.
pub fn encode_png(frame: &Frame) -> Result<Vec<u8>, image::ImageError> {
    let opaque = frame.rgba.chunks_exact(4).all(|p| p[3] == 255);
    let mut out = Vec::with_capacity(frame.rgba.len() / 8);
    let encoder =
        PngEncoder::new_with_quality(&mut out, CompressionType::Fast, FilterType::Adaptive);
    if opaque {
        let rgb: Vec<u8> = frame
            .rgba
            .chunks_exact(4)
            .flat_map(|p| [p[0], p[1], p[2]])
            .collect();
        encoder.write_image(
            &rgb,
            frame.width,
            frame.height,
            image::ExtendedColorType::Rgb8,
        )?;
    } else {
        encoder.write_image(
            &frame.rgba,
            frame.width,
            frame.height,
            image::ExtendedColorType::Rgba8,
        )?;
    }
    Ok(out)
}

/// Width and height from a PNG's IHDR, if `data` is a PNG.
pub(crate) fn png_size(data: &[u8]) -> Option<(u32, u32)> {
    const SIGNATURE: &[u8] = b"\x89PNG\r\n\x1a\n";
    if data.len() < 24 || &data[..8] != SIGNATURE || &data[12..16] != b"IHDR" {
        return None;
    }
    let be = |i: usize| u32::from_be_bytes([data[i], data[i + 1], data[i + 2], data[i + 3]]);
    Some((be(16), be(20)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wm_output() {
        assert_eq!(
            parse_wm_size("Physical size: 1080x2400\n"),
            Some((1080, 2400))
        );
        assert_eq!(
            parse_wm_size("Physical size: 1080x2400\nOverride size: 720x1600\n"),
            Some((720, 1600))
        );
        assert_eq!(parse_wm_size("garbage"), None);
        assert_eq!(
            parse_wm_density("Physical density: 420\nOverride density: 320\n"),
            Some(320)
        );
        assert_eq!(parse_wm_density("Physical density: 440\n"), Some(440));
        let d = Display {
            width: 1080,
            height: 2400,
            density: 420,
        };
        assert!((d.scale_factor() - 2.625).abs() < 1e-9);
        assert_eq!(d.rotated(1), (2400, 1080));
    }

    fn raw(w: u32, h: u32, format: u32, header: usize, px: &[u8]) -> Vec<u8> {
        let mut v = Vec::new();
        v.extend_from_slice(&w.to_le_bytes());
        v.extend_from_slice(&h.to_le_bytes());
        v.extend_from_slice(&format.to_le_bytes());
        if header == 16 {
            v.extend_from_slice(&0u32.to_le_bytes());
        }
        v.extend_from_slice(px);
        v
    }

    #[test]
    fn raw_headers_and_formats() {
        let px = [10, 20, 30, 255, 40, 50, 60, 255];
        for header in [12, 16] {
            let f = decode_raw(&raw(2, 1, RGBA_8888, header, &px)).expect("decodes");
            assert_eq!((f.width, f.height), (2, 1));
            assert_eq!(f.rgba, px);
        }
        let f = decode_raw(&raw(1, 1, BGRA_8888, 16, &[1, 2, 3, 4])).expect("bgra");
        assert_eq!(f.rgba, [3, 2, 1, 4]);
        let f = decode_raw(&raw(1, 1, RGB_565, 12, &0xf800u16.to_le_bytes())).expect("565");
        assert_eq!(f.rgba, [255, 0, 0, 255]);
        assert!(matches!(
            decode_raw(&raw(2, 2, RGBA_8888, 16, &px)),
            Err(RawError::Size { .. })
        ));
        assert!(matches!(
            decode_raw(&raw(1, 1, 99, 16, &px[..4])),
            Err(RawError::Format(99))
        ));
        assert!(matches!(decode_raw(b"short"), Err(RawError::Short(5))));
    }

    #[test]
    fn png_round_trip() {
        let frame = Frame {
            width: 3,
            height: 2,
            rgba: [1u8, 2, 3, 255].repeat(6),
        };
        let png = encode_png(&frame).expect("encodes");
        assert_eq!(png_size(&png), Some((3, 2)));
        let img = image::load_from_memory(&png).expect("decodes");
        assert_eq!((img.width(), img.height()), (3, 2));
        assert_eq!(png_size(b"not a png at all, really not"), None);
    }
}
