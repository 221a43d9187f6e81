//! Renders the mock UI to a PNG: flat boxes per element and a blocky
//! pseudo-glyph per character, so every visible change alters the image.

use image::codecs::png::{CompressionType, FilterType, PngEncoder};
use image::{ExtendedColorType, ImageEncoder, Rgb, RgbImage};

use crate::model::{AppState, Field, HEIGHT, Kind, WIDTH};

const BACKGROUND: Rgb<u8> = Rgb([246, 247, 250]);
const INPUT: Rgb<u8> = Rgb([255, 255, 255]);
const INPUT_FOCUSED: Rgb<u8> = Rgb([232, 241, 255]);
const BORDER: Rgb<u8> = Rgb([150, 156, 170]);
const BUTTON: Rgb<u8> = Rgb([37, 99, 235]);
const BUTTON_DISABLED: Rgb<u8> = Rgb([190, 196, 208]);
const INK: Rgb<u8> = Rgb([30, 34, 44]);
const INK_ON_BUTTON: Rgb<u8> = Rgb([255, 255, 255]);

const LINK: Rgb<u8> = Rgb([20, 80, 200]);
const DIALOG: Rgb<u8> = Rgb([225, 230, 240]);

/// A rectangle in screen pixels; y may be off screen (scrolled content).
type Rect = (i64, i64, u32, u32);

fn fill(img: &mut RgbImage, (x, y, w, h): Rect, color: Rgb<u8>) {
    let clamp = |v: i64, max: u32| v.clamp(0, i64::from(max)) as u32;
    let (x0, y0) = (clamp(x, img.width()), clamp(y, img.height()));
    let x1 = clamp(x + i64::from(w), img.width());
    let y1 = clamp(y + i64::from(h), img.height());
    for yy in y0..y1 {
        for xx in x0..x1 {
            img.put_pixel(xx, yy, color);
        }
    }
}

fn frame(img: &mut RgbImage, (x, y, w, h): Rect, color: Rgb<u8>) {
    fill(img, (x, y, w, 3), color);
    fill(img, (x, y + i64::from(h) - 3, w, 3), color);
    fill(img, (x, y, 3, h), color);
    fill(img, (x + i64::from(w) - 3, y, 3, h), color);
}

/// Draws `text` as 3x5 pseudo-glyphs (each cell 4 px) starting at (x, y),
/// on one line of at most `max_w` pixels.
fn glyphs(img: &mut RgbImage, text: &str, x: i64, y: i64, max_w: u32, color: Rgb<u8>) {
    const CELL: i64 = 4;
    let mut cx = x;
    for ch in text.chars() {
        if cx + 3 * CELL > x + i64::from(max_w) {
            break;
        }
        if ch != ' ' {
            // A stable 15-bit pattern per character, never blank.
            let bits = (u32::from(ch).wrapping_mul(2_654_435_761) >> 7) & 0x7fff | 0x2000;
            for row in 0..5 {
                for col in 0..3 {
                    if bits & (1 << (row * 3 + col)) != 0 {
                        fill(
                            img,
                            (cx + col * CELL, y + row * CELL, CELL as u32, CELL as u32),
                            color,
                        );
                    }
                }
            }
        }
        cx += 4 * CELL;
    }
}

/// Draws `text` wrapped into lines of the rect's width.
fn block(img: &mut RgbImage, text: &str, (x, y, w, h): Rect, color: Rgb<u8>) {
    let chars: Vec<char> = text.chars().collect();
    let per_line = (w as usize / 16).max(1);
    let line_h = i64::from(crate::screens::LINE_HEIGHT);
    for (k, line) in chars.chunks(per_line).enumerate() {
        let ly = y + 8 + line_h * k as i64;
        if ly + line_h > y + i64::from(h).max(line_h) {
            break;
        }
        let s: String = line.iter().collect();
        glyphs(img, &s, x, ly, w, color);
    }
}

/// Renders the current state as RGB pixels.
pub(crate) fn render(state: &AppState) -> RgbImage {
    let mut img = RgbImage::from_pixel(WIDTH, HEIGHT, BACKGROUND);
    for e in state.elements() {
        let (x, y, w, h) = e.rect;
        if y >= i64::from(HEIGHT) || y + i64::from(h) <= 0 {
            continue; // off screen (below the fold, scrolled away)
        }
        match e.kind {
            Kind::Root if e.role == "dialog" => {
                fill(&mut img, e.rect, DIALOG);
                frame(&mut img, e.rect, BORDER);
            }
            Kind::Root => {}
            Kind::Label => {
                block(&mut img, e.text.as_deref().unwrap_or(""), e.rect, INK);
            }
            Kind::Link(_) => {
                let name = e.name.as_deref().unwrap_or("");
                glyphs(&mut img, name, x, y + 10, w, LINK);
                fill(
                    &mut img,
                    (x, y + 32, (name.chars().count() as u32 * 16).min(w), 2),
                    LINK,
                );
            }
            Kind::Input(field) => {
                let focused = state.focus == Some(field);
                fill(
                    &mut img,
                    e.rect,
                    if focused { INPUT_FOCUSED } else { INPUT },
                );
                frame(&mut img, e.rect, if focused { BUTTON } else { BORDER });
                let shown = match field {
                    Field::Password => "*".repeat(state.password.chars().count()),
                    Field::Username | Field::EditName => e.value.clone().unwrap_or_default(),
                };
                let shown = if shown.is_empty() {
                    e.name.clone().unwrap_or_default()
                } else {
                    shown
                };
                glyphs(
                    &mut img,
                    &shown,
                    x + 20,
                    y + i64::from(h) / 2 - 10,
                    w - 40,
                    INK,
                );
            }
            Kind::Button(_) => {
                fill(
                    &mut img,
                    e.rect,
                    if e.enabled { BUTTON } else { BUTTON_DISABLED },
                );
                glyphs(
                    &mut img,
                    e.name.as_deref().unwrap_or(""),
                    x + 24,
                    y + i64::from(h) / 2 - 10,
                    w.saturating_sub(48),
                    INK_ON_BUTTON,
                );
            }
        }
    }
    img
}

/// Encodes pixels as PNG (fast settings: the image is mostly flat).
pub(crate) fn encode_png(img: &RgbImage) -> Result<Vec<u8>, image::ImageError> {
    let mut out = Vec::with_capacity(32 * 1024);
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
    fn typing_changes_the_image() {
        let mut s = AppState::default();
        let before = encode_png(&render(&s)).expect("png");
        s.username.push('a');
        let after = encode_png(&render(&s)).expect("png");
        assert_ne!(before, after);
        let decoded = image::load_from_memory(&after).expect("decodes");
        assert_eq!((decoded.width(), decoded.height()), (WIDTH, HEIGHT));
    }
}
