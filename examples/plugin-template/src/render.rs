//! Draws the hello device's screen: a background colour with a marker at
//! each recent tap, encoded as PNG. The image is always exactly the
//! viewport's size, as the protocol requires.

use image::codecs::png::{CompressionType, FilterType, PngEncoder};
use image::{ExtendedColorType, ImageEncoder, Rgb, RgbImage};

/// Half the side of a tap marker, in pixels.
const MARKER_RADIUS: u32 = 6;
const MARKER: Rgb<u8> = Rgb([20, 20, 20]);

/// Renders the screen.
pub fn render(width: u32, height: u32, background: [u8; 3], taps: &[(u32, u32)]) -> RgbImage {
    let mut img = RgbImage::from_pixel(width, height, Rgb(background));
    for &(x, y) in taps {
        let (x0, y0) = (
            x.saturating_sub(MARKER_RADIUS),
            y.saturating_sub(MARKER_RADIUS),
        );
        let (x1, y1) = (
            (x + MARKER_RADIUS).min(width - 1),
            (y + MARKER_RADIUS).min(height - 1),
        );
        for yy in y0..=y1 {
            for xx in x0..=x1 {
                img.put_pixel(xx, yy, MARKER);
            }
        }
    }
    img
}

/// Encodes pixels as PNG.
pub fn encode_png(img: &RgbImage) -> Result<Vec<u8>, image::ImageError> {
    let mut out = Vec::new();
    PngEncoder::new_with_quality(&mut out, CompressionType::Fast, FilterType::Sub).write_image(
        img.as_raw(),
        img.width(),
        img.height(),
        ExtendedColorType::Rgb8,
    )?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_png_has_the_requested_size_and_shows_taps() {
        let plain = encode_png(&render(40, 30, [255, 255, 255], &[])).expect("png");
        let tapped = encode_png(&render(40, 30, [255, 255, 255], &[(39, 29)])).expect("png");
        assert_ne!(plain, tapped);
        let decoded = image::load_from_memory(&tapped).expect("decodes");
        assert_eq!((decoded.width(), decoded.height()), (40, 30));
        assert_eq!(decoded.to_rgb8().get_pixel(39, 29), &MARKER);
    }
}
