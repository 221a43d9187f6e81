//! The layout of one message of the worker channel (a `SOCK_SEQPACKET`
//! socket, so one message is one frame, whole): a `u8` kind, a `u8`
//! number of parts, then per part a `u8` place and two little-endian
//! `u64`s, then the bytes of the parts placed inline, in order. Part 0 is
//! the JSON header; the others are raw bytes (a PNG, a UI snapshot). A part
//! is placed inline, in the shared arena (offset and length), or in a
//! sealed memory file passed with the message (descriptor index and
//! length). This module only lays messages out and checks them; it never
//! interprets a header and does no I/O.

use std::io;

/// The largest message either side sends or accepts.
pub(super) const MAX_MESSAGE: usize = 64 << 10;
/// The largest part (a screenshot: a PNG of an 8K screen fits many times)
/// either side accepts. A worker runs plugin code, so every bound here is
/// checked on what it announces, before the host allocates anything.
pub(super) const MAX_PART: usize = 64 << 20;
/// The largest header (part 0): the JSON of a reply. Results larger than a
/// protocol frame are refused later (`response_frame_too_large`, recorded
/// as the Action's outcome); this bound only limits what the host reads.
pub(super) const MAX_HEADER: usize = 8 << 20;
/// The most bytes one frame carries, all parts together: a header, one
/// screenshot and one UI snapshot (768 KiB at most), with room to spare.
pub(super) const MAX_FRAME: usize = MAX_HEADER + MAX_PART + (1 << 20);
/// The most parts one frame carries (header included).
pub(super) const MAX_PARTS: usize = 8;
/// Bytes of one part's place.
const PLACE_BYTES: usize = 17;

/// What a frame carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub(super) enum Kind {
    /// Worker → host, first frame: the library's manifest, or why it was
    /// refused.
    Opened = 6,
    /// Host → worker: the plugin's settings (and the arena's descriptor).
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
            6 => Self::Opened,
            _ => return None,
        })
    }
}

/// Where one part's bytes are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Place {
    /// In the message, after the places.
    Inline { len: usize },
    /// In the shared arena.
    Arena { offset: usize, len: usize },
    /// In the sealed memory file passed as descriptor `index`.
    File { index: usize, len: usize },
}

impl Place {
    /// The part's length.
    pub(super) fn len(&self) -> usize {
        match *self {
            Self::Inline { len } | Self::Arena { len, .. } | Self::File { len, .. } => len,
        }
    }
}

/// One frame as received: every part's bytes in this process's memory.
#[derive(Debug)]
pub(super) struct Frame {
    pub kind: Kind,
    /// The JSON header.
    pub header: Vec<u8>,
    /// Byte parts after the header, in order.
    pub parts: Vec<Vec<u8>>,
    /// Descriptors that came with the frame and are not parts (the arena,
    /// with `Init`).
    pub fds: Vec<std::os::fd::OwnedFd>,
}

/// Why a frame could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum FrameError {
    /// The peer closed the channel.
    #[error("the channel is closed")]
    Closed,
    /// Reading or writing the socket failed (a read timeout included).
    #[error("channel I/O failed: {0}")]
    Io(#[from] io::Error),
    /// The bytes are not a frame (bad kind, bad lengths, out of order).
    #[error("malformed frame: {0}")]
    Malformed(&'static str),
    /// A part, or all parts together, larger than the channel accepts.
    #[error("{what} of {len} bytes exceeds the limit of {limit} bytes")]
    TooLarge {
        /// Which bound (`a part`, `the header`, `a frame`).
        what: &'static str,
        /// The announced length.
        len: usize,
        /// The bound.
        limit: usize,
    },
}

impl FrameError {
    /// Whether this is a non-blocking call that would have waited.
    pub fn would_block(&self) -> bool {
        matches!(self, Self::Io(e) if e.kind() == io::ErrorKind::WouldBlock)
    }
}

/// The prefix of a message: kind, count and places.
pub(super) fn prefix(kind: Kind, places: &[Place]) -> Result<Vec<u8>, FrameError> {
    if places.is_empty() || places.len() > MAX_PARTS {
        return Err(FrameError::Malformed("bad part count"));
    }
    let mut out = Vec::with_capacity(2 + PLACE_BYTES * places.len());
    out.push(kind as u8);
    out.push(places.len() as u8);
    check_sizes(places)?;
    for p in places {
        let (tag, a, b) = match *p {
            Place::Inline { len } => (0u8, len, 0),
            Place::Arena { offset, len } => (1, offset, len),
            Place::File { index, len } => (2, index, len),
        };
        out.push(tag);
        out.extend_from_slice(&(a as u64).to_le_bytes());
        out.extend_from_slice(&(b as u64).to_le_bytes());
    }
    Ok(out)
}

/// Checks announced sizes against the bounds: the header (first place)
/// within [`MAX_HEADER`], every other part within [`MAX_PART`], all
/// together within [`MAX_FRAME`].
pub(super) fn check_sizes(places: &[Place]) -> Result<(), FrameError> {
    let mut total = 0usize;
    for (i, p) in places.iter().enumerate() {
        let (what, limit) = if i == 0 {
            ("the header", MAX_HEADER)
        } else {
            ("a part", MAX_PART)
        };
        if p.len() > limit {
            return Err(FrameError::TooLarge {
                what,
                len: p.len(),
                limit,
            });
        }
        total = total.saturating_add(p.len());
    }
    if total > MAX_FRAME {
        return Err(FrameError::TooLarge {
            what: "a frame",
            len: total,
            limit: MAX_FRAME,
        });
    }
    Ok(())
}

fn u64_at(b: &[u8], at: usize) -> usize {
    let mut w = [0u8; 8];
    w.copy_from_slice(&b[at..at + 8]);
    usize::try_from(u64::from_le_bytes(w)).unwrap_or(usize::MAX)
}

/// A message's kind, its places and the inline bytes (checked: every
/// inline part fits exactly, no part exceeds [`MAX_PART`]).
pub(super) fn parse(msg: &[u8]) -> Result<(Kind, Vec<Place>, &[u8]), FrameError> {
    if msg.len() < 2 {
        return Err(FrameError::Malformed(
            "shorter than its kind and part count",
        ));
    }
    let kind = Kind::from_u8(msg[0]).ok_or(FrameError::Malformed("unknown kind"))?;
    let count = msg[1] as usize;
    if count == 0 || count > MAX_PARTS || msg.len() < 2 + PLACE_BYTES * count {
        return Err(FrameError::Malformed("bad part count"));
    }
    let mut places = Vec::with_capacity(count);
    for i in 0..count {
        let at = 2 + PLACE_BYTES * i;
        let (a, b) = (u64_at(msg, at + 1), u64_at(msg, at + 9));
        let place = match msg[at] {
            0 => Place::Inline { len: a },
            1 => Place::Arena { offset: a, len: b },
            2 => Place::File { index: a, len: b },
            _ => return Err(FrameError::Malformed("unknown part place")),
        };
        places.push(place);
    }
    check_sizes(&places)?;
    let inline = &msg[2 + PLACE_BYTES * count..];
    let want = places
        .iter()
        .filter_map(|p| match p {
            Place::Inline { len } => Some(*len),
            _ => None,
        })
        .try_fold(0usize, usize::checked_add);
    if want != Some(inline.len()) {
        return Err(FrameError::Malformed(
            "inline parts do not add up to the message",
        ));
    }
    Ok((kind, places, inline))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn announced_sizes_are_bounded_before_anything_is_read() {
        let file = |len| Place::File { index: 0, len };
        let header = Place::Inline { len: 2 };
        let msg = |places: &[Place]| {
            let mut m = Vec::new();
            m.push(Kind::Reply as u8);
            m.push(places.len() as u8);
            for p in places {
                let (tag, a, b) = match *p {
                    Place::Inline { len } => (0u8, len, 0),
                    Place::Arena { offset, len } => (1, offset, len),
                    Place::File { index, len } => (2, index, len),
                };
                m.push(tag);
                m.extend_from_slice(&(a as u64).to_le_bytes());
                m.extend_from_slice(&(b as u64).to_le_bytes());
            }
            m.extend_from_slice(b"{}");
            m
        };
        let refused = |places: &[Place]| match parse(&msg(places)) {
            Err(FrameError::TooLarge { what, .. }) => Some(what),
            _ => None,
        };
        assert!(parse(&msg(&[header, file(MAX_PART)])).is_ok());
        assert_eq!(refused(&[header, file(MAX_PART + 1)]), Some("a part"));
        let parts = [
            header,
            file(MAX_PART / 2),
            file(MAX_PART / 2),
            file(MAX_PART / 2),
        ];
        assert_eq!(refused(&parts), Some("a frame"));
        let big_header = [Place::File {
            index: 0,
            len: MAX_HEADER + 1,
        }];
        assert_eq!(refused(&big_header), Some("the header"));
        // Senders are held to the same bounds.
        assert!(prefix(Kind::Reply, &[header, file(MAX_PART + 1)]).is_err());
    }

    #[test]
    fn places_round_trip() {
        let places = [
            Place::Inline { len: 3 },
            Place::Arena {
                offset: 65536,
                len: 40_000,
            },
            Place::File { index: 0, len: 7 },
            Place::Inline { len: 2 },
        ];
        let mut msg = prefix(Kind::Reply, &places).expect("prefix");
        msg.extend_from_slice(b"{}!ok");
        let (kind, back, inline) = parse(&msg).expect("parse");
        assert_eq!(
            (kind, back.as_slice(), inline),
            (Kind::Reply, &places[..], &b"{}!ok"[..])
        );
    }

    #[test]
    fn malformed_messages_are_refused() {
        let mut msg = prefix(Kind::Call, &[Place::Inline { len: 2 }]).expect("prefix");
        msg.extend_from_slice(b"{}");
        assert!(parse(&msg).is_ok());
        assert!(matches!(
            parse(&msg[..msg.len() - 1]),
            Err(FrameError::Malformed(_))
        ));
        let mut bad = msg.clone();
        bad[0] = 99;
        assert!(matches!(
            parse(&bad),
            Err(FrameError::Malformed("unknown kind"))
        ));
        let mut bad = msg.clone();
        bad[1] = 200;
        assert!(matches!(parse(&bad), Err(FrameError::Malformed(_))));
        let mut bad = msg.clone();
        bad[2] = 7;
        assert!(matches!(parse(&bad), Err(FrameError::Malformed(_))));
        let mut huge = prefix(Kind::Call, &[Place::Inline { len: 0 }]).expect("prefix");
        huge[3..11].copy_from_slice(&u64::MAX.to_le_bytes());
        assert!(matches!(parse(&huge), Err(FrameError::TooLarge { .. })));
        assert!(parse(&[5]).is_err());
        assert!(prefix(Kind::Call, &[]).is_err());
    }
}
