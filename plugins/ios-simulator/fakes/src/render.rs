//! Renders flat rectangles into a real (indexed-colour) PNG, for the fake
//! screenshots of both fakes.

/// A filled rectangle in pixels with a palette index.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Fill {
    /// Left edge, in pixels.
    pub(crate) x: u32,
    /// Top edge, in pixels.
    pub(crate) y: u32,
    /// Width in pixels (clipped to the picture).
    pub(crate) width: u32,
    /// Height in pixels (clipped to the picture).
    pub(crate) height: u32,
    /// Index into [`PALETTE`].
    pub(crate) color: u8,
}

/// The palette every fake picture uses.
pub(crate) const PALETTE: [[u8; 3]; 8] = [
    [0xf2, 0xf2, 0xf7], // 0 background
    [0xff, 0xff, 0xff], // 1 field
    [0x00, 0x7a, 0xff], // 2 button
    [0x1c, 0x1c, 0x1e], // 3 text
    [0xc7, 0xc7, 0xcc], // 4 disabled / border
    [0x34, 0xc7, 0x59], // 5 switch on
    [0xff, 0x3b, 0x30], // 6 error
    [0x5a, 0xc8, 0xfa], // 7 icon
];

/// Encodes `fills` (later ones on top) over the background as a PNG of
/// `width` x `height` pixels.
pub(crate) fn png(width: u32, height: u32, fills: &[Fill]) -> Vec<u8> {
    let (w, h) = (width.max(1) as usize, height.max(1) as usize);
    let mut pixels = vec![0u8; w * h];
    for f in fills {
        let x0 = (f.x as usize).min(w);
        let x1 = (f.x as usize).saturating_add(f.width as usize).min(w);
        let y0 = (f.y as usize).min(h);
        let y1 = (f.y as usize).saturating_add(f.height as usize).min(h);
        for row in y0..y1 {
            pixels[row * w + x0..row * w + x1].fill(f.color);
        }
    }
    let mut out = Vec::new();
    {
        let mut encoder = png::Encoder::new(&mut out, w as u32, h as u32);
        encoder.set_color(png::ColorType::Indexed);
        encoder.set_depth(png::BitDepth::Eight);
        encoder.set_palette(PALETTE.concat());
        encoder.set_compression(png::Compression::Fast);
        encoder.set_filter(png::Filter::NoFilter);
        // Writing into a Vec cannot fail; an encoder error leaves an empty
        // (invalid) PNG, which the driver reports as such.
        if let Ok(mut writer) = encoder.write_header() {
            let _ = writer.write_image_data(&pixels);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_real_png_of_the_asked_size() {
        let bytes = png(
            20,
            10,
            &[Fill {
                x: 2,
                y: 2,
                width: 100,
                height: 3,
                color: 2,
            }],
        );
        let decoder = png::Decoder::new(std::io::Cursor::new(bytes));
        let reader = decoder.read_info().expect("decodes");
        let info = reader.info();
        assert_eq!((info.width, info.height), (20, 10));
    }
}
