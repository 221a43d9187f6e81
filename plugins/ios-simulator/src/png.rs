//! Reads the pixel size of a PNG from its header, without decoding it.

const SIGNATURE: [u8; 8] = [0x89, b'P', b'N', b'G', b'\r', b'\n', 0x1a, b'\n'];

/// Width and height from the IHDR chunk, or `None` when `bytes` is not a PNG.
pub(crate) fn dimensions(bytes: &[u8]) -> Option<(u32, u32)> {
    if bytes.len() < 24 || bytes[..8] != SIGNATURE || &bytes[12..16] != b"IHDR" {
        return None;
    }
    let word = |at: usize| {
        let mut b = [0u8; 4];
        b.copy_from_slice(&bytes[at..at + 4]);
        u32::from_be_bytes(b)
    };
    let (w, h) = (word(16), word(20));
    (w > 0 && h > 0).then_some((w, h))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_header() {
        let mut png = SIGNATURE.to_vec();
        png.extend_from_slice(&13u32.to_be_bytes());
        png.extend_from_slice(b"IHDR");
        png.extend_from_slice(&750u32.to_be_bytes());
        png.extend_from_slice(&1334u32.to_be_bytes());
        assert_eq!(dimensions(&png), Some((750, 1334)));
        assert_eq!(dimensions(b"not a png at all, clearly"), None);
        assert_eq!(dimensions(&png[..20]), None);
    }
}
