//! Sending and receiving frames on the worker channel, and the shared
//! arena large reply parts travel through.
//!
//! * Small parts travel inside the message (two copies through the
//!   kernel, which for a few kilobytes is cheaper than anything else).
//! * A large reply part is written by the worker into the **arena**, a
//!   memory file the host creates per worker and both map
//!   (`devicerail_host_sys::shm`). The host copies the part into its own
//!   memory as soon as the reply arrives, then marks its units free in the
//!   arena's header words (one atomic `fetch_or`, no message back); the
//!   worker takes those bits back when it next allocates. The host only
//!   ever hashes and stores its private copy, so what it hashed is what it
//!   stores, whatever the worker does to the arena afterwards.
//! * A part the arena cannot take (too large, no room, or no arena: the
//!   host's own calls, inspecting workers) travels as a sealed memory file
//!   passed with the message.
//!
//! Every place a peer announces is checked (bounds, sizes, seals) before
//! anything is read; a bad one makes the frame malformed.

use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::sync::Mutex;
use std::sync::atomic::Ordering;

use devicerail_host_sys::packet::{PacketSocket, Received};
use devicerail_host_sys::shm::{self, SharedRegion};

use super::frame::{self, Frame, FrameError, Kind, MAX_MESSAGE, Place};

/// Parts up to this size travel inside the message.
pub(super) const INLINE_PART: usize = 16 << 10;
/// The arena's allocation unit.
pub(super) const UNIT: usize = 64 << 10;
/// The arena's data area (sparse: only touched pages cost memory).
pub(super) const ARENA: usize = 64 << 20;
/// Parts larger than this bypass the arena.
const ARENA_PART_MAX: usize = ARENA / 2;
/// The socket send buffer asked for (the kernel may cap it; a message is
/// at most [`MAX_MESSAGE`]).
pub(super) const SEND_BUFFER: usize = 1 << 20;

fn units(len: usize) -> usize {
    len.div_ceil(UNIT)
}

/// The arena as the host holds it: it created it, copies parts out and
/// frees them.
#[derive(Debug)]
pub(super) struct HostArena {
    region: SharedRegion,
}

impl HostArena {
    /// A new arena for one worker.
    pub(super) fn create() -> io::Result<Self> {
        Ok(Self {
            region: SharedRegion::create("devicerail-arena", ARENA)?,
        })
    }

    /// Its memory file, for the worker.
    pub(super) fn fd(&self) -> std::os::fd::BorrowedFd<'_> {
        self.region.fd()
    }

    /// Copies the part at `offset` out of the arena and frees its units.
    fn take(&self, offset: usize, len: usize) -> Result<Vec<u8>, FrameError> {
        if !offset.is_multiple_of(UNIT) {
            return Err(FrameError::Malformed("a misaligned arena part"));
        }
        let bytes = self
            .region
            .read(offset, len)
            .map_err(|_| FrameError::Malformed("an arena part out of bounds"))?;
        let first = offset / UNIT;
        for unit in first..first + units(len) {
            if let Some(word) = self.region.word(unit / 64) {
                word.fetch_or(1 << (unit % 64), Ordering::AcqRel);
            }
        }
        Ok(bytes)
    }
}

/// The arena as a worker holds it: it allocates units and writes parts.
#[derive(Debug)]
pub(super) struct WorkerArena {
    region: SharedRegion,
    /// Units in use, one bit each.
    used: Mutex<Vec<u64>>,
    units: usize,
}

impl WorkerArena {
    /// Maps the arena the host passed (`fd`).
    pub(super) fn map(fd: OwnedFd) -> io::Result<Self> {
        let region = SharedRegion::map(fd)?;
        let units = region.data_len() / UNIT;
        if units == 0 || units.div_ceil(64) > shm::WORDS {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "the arena has an unusable size",
            ));
        }
        Ok(Self {
            region,
            used: Mutex::new(vec![0; units.div_ceil(64)]),
            units,
        })
    }

    /// Writes `bytes` into free units (the lowest that fit, so the touched
    /// memory stays near the peak in flight); `None` when there is no
    /// room.
    fn place(&self, bytes: &[u8]) -> Option<usize> {
        let n = units(bytes.len()).max(1);
        if bytes.len() > ARENA_PART_MAX || n > self.units {
            return None;
        }
        let mut used = self.used.lock().unwrap_or_else(|p| p.into_inner());
        // Units the host freed since the last allocation.
        for (w, bits) in used.iter_mut().enumerate() {
            if let Some(word) = self.region.word(w) {
                *bits &= !word.swap(0, Ordering::AcqRel);
            }
        }
        let is_used = |used: &[u64], u: usize| used[u / 64] & (1 << (u % 64)) != 0;
        let mut start = 0;
        while start + n <= self.units {
            match (start..start + n).find(|&u| is_used(&used, u)) {
                Some(busy) => start = busy + 1,
                None => {
                    for u in start..start + n {
                        used[u / 64] |= 1 << (u % 64);
                    }
                    drop(used);
                    let offset = start * UNIT;
                    if self.region.write(offset, bytes).is_err() {
                        self.release(offset, bytes.len());
                        return None;
                    }
                    return Some(offset);
                }
            }
        }
        None
    }

    /// Gives back units this worker allocated but never handed over.
    fn release(&self, offset: usize, len: usize) {
        let mut used = self.used.lock().unwrap_or_else(|p| p.into_inner());
        let first = offset / UNIT;
        for u in first..first + units(len).max(1) {
            used[u / 64] &= !(1 << (u % 64));
        }
    }
}

/// A frame laid out and ready to send (retrying a send that would block
/// costs nothing more).
#[derive(Debug)]
pub(super) struct Outgoing<'a> {
    prefix: Vec<u8>,
    inline: Vec<&'a [u8]>,
    fds: Vec<OwnedFd>,
}

impl<'a> Outgoing<'a> {
    /// Lays out `header` and `parts`: inline while they fit the message,
    /// then into `arena` (a worker's replies), else sealed memory files.
    /// `extra` descriptors travel too, after the parts' (the arena, with
    /// `Init`).
    pub(super) fn new(
        kind: Kind,
        header: &'a [u8],
        parts: &[&'a [u8]],
        arena: Option<&WorkerArena>,
        extra: Vec<OwnedFd>,
    ) -> Result<Self, FrameError> {
        let all: Vec<&'a [u8]> = std::iter::once(header)
            .chain(parts.iter().copied())
            .collect();
        if all.len() > frame::MAX_PARTS {
            return Err(FrameError::Malformed("too many parts"));
        }
        // Room for the inline bytes once the prefix is written.
        let mut room = MAX_MESSAGE - 2 - 17 * all.len();
        let mut places = Vec::with_capacity(all.len());
        let mut inline = Vec::new();
        let mut fds = Vec::new();
        let lengths: Vec<frame::Place> = all
            .iter()
            .map(|p| frame::Place::Inline { len: p.len() })
            .collect();
        frame::check_sizes(&lengths)?;
        for (i, part) in all.iter().enumerate() {
            // The header stays inline whenever it fits at all.
            let small = part.len() <= INLINE_PART || i == 0;
            if small && part.len() <= room {
                room -= part.len();
                inline.push(*part);
                places.push(Place::Inline { len: part.len() });
                continue;
            }
            if let Some(offset) = arena.and_then(|a| a.place(part)) {
                places.push(Place::Arena {
                    offset,
                    len: part.len(),
                });
                continue;
            }
            fds.push(shm::sealed_file("devicerail-part", part)?);
            places.push(Place::File {
                index: fds.len() - 1,
                len: part.len(),
            });
        }
        if fds.len() + extra.len() > devicerail_host_sys::packet::MAX_FDS {
            return Err(FrameError::Malformed("too many descriptors"));
        }
        fds.extend(extra);
        Ok(Self {
            prefix: frame::prefix(kind, &places)?,
            inline,
            fds,
        })
    }

    /// The message's bytes in order, for a ring; `None` when descriptors
    /// travel with it (only the socket carries those).
    pub(super) fn pieces(&self) -> Option<Vec<&[u8]>> {
        if !self.fds.is_empty() {
            return None;
        }
        let mut pieces: Vec<&[u8]> = Vec::with_capacity(1 + self.inline.len());
        pieces.push(&self.prefix);
        pieces.extend(self.inline.iter().copied());
        Some(pieces)
    }

    /// Sends the frame as one message; on a non-blocking socket a full
    /// buffer is a [`FrameError::would_block`] error and nothing was sent.
    pub(super) fn send(&self, socket: &PacketSocket) -> Result<(), FrameError> {
        let mut iov: Vec<&[u8]> = Vec::with_capacity(1 + self.inline.len());
        iov.push(&self.prefix);
        iov.extend(self.inline.iter().copied());
        let fds: Vec<_> = self.fds.iter().map(|f| f.as_fd()).collect();
        socket.send(&iov, &fds).map_err(|e| match e.kind() {
            io::ErrorKind::BrokenPipe | io::ErrorKind::ConnectionReset => FrameError::Closed,
            _ => FrameError::Io(e),
        })
    }
}

/// A receive buffer for one message.
pub(super) fn buffer() -> Vec<u8> {
    vec![0u8; MAX_MESSAGE]
}

/// Receives one message into `buf` (see [`PacketSocket::recv`]); the end
/// of the channel is [`FrameError::Closed`].
pub(super) fn recv(socket: &PacketSocket, buf: &mut [u8]) -> Result<Received, FrameError> {
    socket.recv(buf).map_err(|e| match e.kind() {
        io::ErrorKind::UnexpectedEof | io::ErrorKind::ConnectionReset => FrameError::Closed,
        io::ErrorKind::InvalidData => {
            FrameError::Malformed("a message too large or with too many descriptors")
        }
        _ => FrameError::Io(e),
    })
}

/// Turns a received message into a frame: inline parts copied, arena parts
/// copied out of `arena` (and freed), file parts read.
pub(super) fn decode(
    msg: &[u8],
    received: Received,
    arena: Option<&HostArena>,
) -> Result<Frame, FrameError> {
    let (kind, places, mut inline) = frame::parse(msg)?;
    let mut fds: Vec<Option<OwnedFd>> = received.fds.into_iter().map(Some).collect();
    let mut parts = Vec::with_capacity(places.len());
    for place in places {
        parts.push(match place {
            Place::Inline { len } => {
                let (part, rest) = inline.split_at(len);
                inline = rest;
                part.to_vec()
            }
            Place::Arena { offset, len } => arena
                .ok_or(FrameError::Malformed(
                    "an arena part where there is no arena",
                ))?
                .take(offset, len)?,
            Place::File { index, len } => {
                let fd = fds
                    .get_mut(index)
                    .and_then(Option::take)
                    .ok_or(FrameError::Malformed("a file part without its descriptor"))?;
                shm::read_sealed(&fd, len)
                    .map_err(|_| FrameError::Malformed("an unusable file part"))?
            }
        });
    }
    let mut parts = parts.into_iter();
    let header = parts.next().ok_or(FrameError::Malformed("no header"))?;
    Ok(Frame {
        kind,
        header,
        parts: parts.collect(),
        fds: fds.into_iter().flatten().collect(),
    })
}

/// Turns a ring record (one message, no descriptors) into a frame, as
/// [`decode`] does a received one.
pub(super) fn decode_record(msg: &[u8], arena: Option<&HostArena>) -> Result<Frame, FrameError> {
    let received = Received {
        len: msg.len(),
        fds: Vec::new(),
    };
    decode(msg, received, arena)
}

/// A frame's JSON header.
pub(super) fn header_json<T: serde::Serialize>(header: &T) -> Result<Vec<u8>, FrameError> {
    serde_json::to_vec(header).map_err(|_| FrameError::Malformed("the header does not serialize"))
}

/// Receives one frame, waiting at most `timeout` (`None`: forever) on a
/// blocking or non-blocking socket.
pub(super) fn receive(
    socket: &PacketSocket,
    buf: &mut [u8],
    arena: Option<&HostArena>,
    timeout: Option<std::time::Duration>,
) -> Result<Frame, FrameError> {
    let until = timeout.map(|t| std::time::Instant::now() + t);
    loop {
        match recv(socket, buf) {
            Ok(r) => return decode(&buf[..r.len], r, arena),
            Err(e) if e.would_block() => {
                let left = until.map(|u| u.saturating_duration_since(std::time::Instant::now()));
                if left.is_some_and(|l| l.is_zero()) || !socket.wait(true, left)? {
                    return Err(FrameError::Io(io::ErrorKind::TimedOut.into()));
                }
            }
            Err(e) => return Err(e),
        }
    }
}

/// Sends `out`, waiting at most `timeout` for room on a non-blocking
/// socket.
pub(super) fn send_within(
    socket: &PacketSocket,
    out: &Outgoing<'_>,
    timeout: std::time::Duration,
) -> Result<(), FrameError> {
    let until = std::time::Instant::now() + timeout;
    loop {
        match out.send(socket) {
            Err(e) if e.would_block() => {
                let left = until.saturating_duration_since(std::time::Instant::now());
                if left.is_zero() || !socket.wait(false, Some(left))? {
                    return Err(FrameError::Io(io::ErrorKind::TimedOut.into()));
                }
            }
            other => return other,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pair() -> (PacketSocket, PacketSocket) {
        let (a, b) = devicerail_host_sys::packet::pair().expect("pair");
        a.set_send_buffer(SEND_BUFFER).expect("buffer");
        b.set_send_buffer(SEND_BUFFER).expect("buffer");
        (a, b)
    }

    #[test]
    fn parts_travel_inline_through_the_arena_and_as_files() {
        let (host, worker) = pair();
        let host_arena = HostArena::create().expect("arena");
        let fd = host_arena.fd().try_clone_to_owned().expect("dup");
        let worker_arena = WorkerArena::map(fd).expect("map");
        let small = vec![1u8; 100];
        let big = vec![2u8; 200_000];
        let huge = vec![3u8; ARENA_PART_MAX + 1];
        let out = Outgoing::new(
            Kind::Reply,
            b"{\"id\":1}",
            &[&small, &big, &huge],
            Some(&worker_arena),
            Vec::new(),
        )
        .expect("lay out");
        out.send(&worker).expect("send");
        let mut buf = buffer();
        let f = receive(&host, &mut buf, Some(&host_arena), None).expect("receive");
        assert_eq!(f.kind, Kind::Reply);
        assert_eq!(f.header, b"{\"id\":1}");
        assert_eq!(f.parts.len(), 3);
        assert_eq!(
            (f.parts[0] == small, f.parts[1] == big, f.parts[2] == huge),
            (true, true, true)
        );
        // The host freed the big part's units: the next one reuses them.
        assert_eq!(worker_arena.place(&big), Some(0));
    }

    #[test]
    fn bad_places_are_malformed() {
        let (host, worker) = pair();
        let arena = HostArena::create().expect("arena");
        let mut buf = buffer();
        for place in [
            Place::Arena { offset: 1, len: 10 },
            Place::Arena {
                offset: ARENA,
                len: 10,
            },
            Place::File { index: 0, len: 10 },
        ] {
            let mut msg =
                frame::prefix(Kind::Reply, &[Place::Inline { len: 2 }, place]).expect("prefix");
            msg.extend_from_slice(b"{}");
            worker.send(&[&msg], &[]).expect("send");
            assert!(matches!(
                receive(&host, &mut buf, Some(&arena), None),
                Err(FrameError::Malformed(_))
            ));
        }
        drop(worker);
        assert!(matches!(
            receive(&host, &mut buf, Some(&arena), None),
            Err(FrameError::Closed)
        ));
    }
}
