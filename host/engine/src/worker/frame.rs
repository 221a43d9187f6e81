//! The framing of the worker channel: one frame is a little-endian `u32`
//! length of the rest, a `u8` kind, a little-endian `u32` length of the
//! JSON header, the header, then raw bytes (a PNG) up to the end. This
//! module only moves frames; it never interprets a header.

use std::io::{self, Read, Write};

/// The largest frame either side accepts (a screenshot plus its header).
pub(super) const MAX_FRAME: usize = 256 << 20;

/// What a frame carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub(super) enum Kind {
    /// Host → worker, first frame: the plugin's settings.
    Init = 1,
    /// Worker → host: the driver is constructed, or why not.
    Ready = 2,
    /// Host → worker: one driver call.
    Call = 3,
    /// Host → worker: set one call's cancellation flag.
    Cancel = 4,
    /// Worker → host: the result of one call.
    Reply = 5,
}

impl Kind {
    fn from_u8(b: u8) -> Option<Self> {
        Some(match b {
            1 => Self::Init,
            2 => Self::Ready,
            3 => Self::Call,
            4 => Self::Cancel,
            5 => Self::Reply,
            _ => return None,
        })
    }
}

/// One frame as read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Frame {
    pub kind: Kind,
    /// The JSON header.
    pub header: Vec<u8>,
    /// Raw bytes after the header (empty: none).
    pub bytes: Vec<u8>,
}

/// Why a frame could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum FrameError {
    /// The peer closed the channel between frames.
    #[error("the channel is closed")]
    Closed,
    /// Reading or writing the socket failed (a read timeout included).
    #[error("channel I/O failed: {0}")]
    Io(#[from] io::Error),
    /// The bytes are not a frame (bad kind, bad lengths, out of order).
    #[error("malformed frame: {0}")]
    Malformed(&'static str),
    /// The frame's announced length is over [`MAX_FRAME`]: nothing is
    /// allocated for it.
    #[error("a frame of {0} bytes exceeds the limit of {MAX_FRAME} bytes")]
    TooLarge(usize),
}

/// Writes one frame (two writes at most: prefix and header, then bytes).
/// Callers serialize writers themselves.
pub(super) fn write_frame(
    w: &mut impl Write,
    kind: Kind,
    header: &[u8],
    bytes: &[u8],
) -> Result<(), FrameError> {
    let rest = 1 + 4 + header.len() + bytes.len();
    if rest > MAX_FRAME {
        return Err(FrameError::TooLarge(rest));
    }
    let len = u32::try_from(rest).map_err(|_| FrameError::TooLarge(rest))?;
    let header_len = u32::try_from(header.len()).map_err(|_| FrameError::TooLarge(rest))?;
    let mut head = Vec::with_capacity(9 + header.len());
    head.extend_from_slice(&len.to_le_bytes());
    head.push(kind as u8);
    head.extend_from_slice(&header_len.to_le_bytes());
    head.extend_from_slice(header);
    w.write_all(&head)?;
    if !bytes.is_empty() {
        w.write_all(bytes)?;
    }
    w.flush()?;
    Ok(())
}

/// Reads one frame; [`FrameError::Closed`] on a clean end between frames.
pub(super) fn read_frame(r: &mut impl Read) -> Result<Frame, FrameError> {
    let mut len = [0u8; 4];
    match r.read_exact(&mut len) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Err(FrameError::Closed),
        Err(e) => return Err(e.into()),
    }
    let rest = u32::from_le_bytes(len) as usize;
    if rest > MAX_FRAME {
        return Err(FrameError::TooLarge(rest));
    }
    if rest < 5 {
        return Err(FrameError::Malformed(
            "shorter than its kind and header length",
        ));
    }
    let mut prefix = [0u8; 5];
    r.read_exact(&mut prefix)?;
    let kind = Kind::from_u8(prefix[0]).ok_or(FrameError::Malformed("unknown kind"))?;
    let header_len = u32::from_le_bytes([prefix[1], prefix[2], prefix[3], prefix[4]]) as usize;
    let body = rest - 5;
    if header_len > body {
        return Err(FrameError::Malformed("header longer than the frame"));
    }
    let mut header = vec![0u8; header_len];
    r.read_exact(&mut header)?;
    let mut bytes = vec![0u8; body - header_len];
    r.read_exact(&mut bytes)?;
    Ok(Frame {
        kind,
        header,
        bytes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_round_trip_back_to_back() {
        let mut buf = Vec::new();
        write_frame(&mut buf, Kind::Call, br#"{"id":1}"#, &[]).expect("write");
        write_frame(&mut buf, Kind::Reply, br#"{"id":1}"#, b"\x89PNG").expect("write");
        let mut r = buf.as_slice();
        let a = read_frame(&mut r).expect("first");
        assert_eq!(
            (a.kind, a.header.as_slice(), a.bytes.len()),
            (Kind::Call, &br#"{"id":1}"#[..], 0)
        );
        let b = read_frame(&mut r).expect("second");
        assert_eq!((b.kind, b.bytes.as_slice()), (Kind::Reply, &b"\x89PNG"[..]));
        assert!(matches!(read_frame(&mut r), Err(FrameError::Closed)));
    }

    #[test]
    fn malformed_and_truncated_frames_are_refused() {
        let mut buf = Vec::new();
        write_frame(&mut buf, Kind::Cancel, b"{}", &[]).expect("write");
        let mut bad = buf.clone();
        bad[4] = 99;
        assert!(matches!(
            read_frame(&mut bad.as_slice()),
            Err(FrameError::Malformed("unknown kind"))
        ));
        let mut long_header = buf.clone();
        long_header[5] = 200;
        assert!(matches!(
            read_frame(&mut long_header.as_slice()),
            Err(FrameError::Malformed(_))
        ));
        let cut = &buf[..buf.len() - 1];
        assert!(matches!(read_frame(&mut &cut[..]), Err(FrameError::Io(_))));
        let huge = (u32::MAX).to_le_bytes();
        assert!(matches!(
            read_frame(&mut &huge[..]),
            Err(FrameError::TooLarge(_))
        ));
    }
}
