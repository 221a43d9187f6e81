//! How UI snapshot bytes are kept in the event store. A snapshot is JSON
//! with long runs of repeated keys, so LZ4 stores it in about a twelfth of
//! the space (and of the log writes and checkpoint copies) for a tenth of
//! a millisecond per 250 KB. Readers always get the exact bytes whose
//! digest the Observation names; this module never changes them.

/// The codec name stored beside compressed bytes (`NULL`: stored as is).
pub(crate) const LZ4: &str = "lz4";

/// Snapshots smaller than this are stored as is: compressing them saves
/// less than it costs.
const MIN_COMPRESSED: usize = 4 * 1024;

/// A stored snapshot that cannot be turned back into its bytes.
#[derive(Debug, thiserror::Error)]
pub enum CodecError {
    /// The stored codec name is not one this build knows (a newer host
    /// wrote it).
    #[error("unknown snapshot codec {0:?}")]
    Unknown(String),
    /// The bytes do not decompress: the stored snapshot is damaged.
    #[error("the compressed snapshot is corrupt: {0}")]
    Corrupt(#[from] lz4_flex::block::DecompressError),
}

/// The compressed form of `bytes`, when compressing pays.
pub fn compress(bytes: &[u8]) -> Option<Vec<u8>> {
    if bytes.len() < MIN_COMPRESSED {
        return None;
    }
    let packed = lz4_flex::compress_prepend_size(bytes);
    (packed.len() < bytes.len() * 3 / 4).then_some(packed)
}

/// The original bytes of a snapshot stored with `codec`.
pub fn decompress(stored: Vec<u8>, codec: Option<&str>) -> Result<Vec<u8>, CodecError> {
    match codec {
        None => Ok(stored),
        Some(LZ4) => Ok(lz4_flex::decompress_size_prepended(&stored)?),
        Some(other) => Err(CodecError::Unknown(other.to_owned())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_skips_what_does_not_pay() {
        let json = br#"{"stableNodeId":"row","role":"staticText","text":"Item"}"#.repeat(200);
        let packed = compress(&json).expect("repetitive JSON compresses");
        assert!(packed.len() * 4 < json.len());
        assert_eq!(decompress(packed, Some(LZ4)).expect("decompress"), json);
        assert_eq!(compress(b"{}"), None);
        // xorshift64: bytes without the repeats LZ4 feeds on.
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        let noise: Vec<u8> = (0..8192)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                (state >> 32) as u8
            })
            .collect();
        assert_eq!(compress(&noise), None);
        assert!(decompress(vec![1, 2, 3], Some(LZ4)).is_err());
        assert!(decompress(vec![], Some("zip")).is_err());
    }
}
