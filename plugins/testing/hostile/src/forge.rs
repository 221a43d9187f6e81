//! Forged replies written straight onto the worker's channel: what plugin
//! code running in a worker could send the host if it bypassed the
//! worker's own encoding. The host must treat every byte of it as
//! untrusted input: check it, refuse it, and stay up.
//!
//! This module knows the channel's layout only to forge it (one message:
//! a kind byte, a part count, 17 bytes per part saying where its bytes
//! are, then the inline bytes; part 0 is the JSON header), and the rings'
//! (a memory file the host passed: a header page of 64-bit words, then the
//! call ring and the reply ring of 256 KiB each; a record is a 32-bit length
//! and a message) only to scribble over it. It is test support; nothing
//! real ever writes the channel or the rings but the worker.

use std::io;
use std::mem::MaybeUninit;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};

use rustix::fs::{MemfdFlags, SealFlags};
use rustix::net::{SendAncillaryBuffer, SendAncillaryMessage, SendFlags};
use serde_json::{Value, json};

/// The worker's channel descriptor (the host hands it over as 3).
const CHANNEL_FD: i32 = 3;
/// A reply frame's kind.
const REPLY: u8 = 5;
/// Forged replies go to call ids from this one down to 1: the waiting call
/// gets the one with its id, the host drops the rest as unknown.
const HIGHEST_ID: u64 = 4096;

/// What to forge.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Case {
    /// A UI tree whose node ids repeat (valid JSON, invalid tree).
    Structure,
    /// A UI tree with a node id far over the protocol's bound (valid
    /// JSON, not the protocol's types).
    Bounds,
    /// An observation's JSON over what any observation may take (a UI
    /// snapshot's bound and a frame's; a sparse sealed memory file: the
    /// host must refuse it without parsing it).
    Oversized,
    /// One part of 200 MiB (a sparse sealed memory file: it costs the
    /// worker nothing and the host everything if it reads it).
    Part,
    /// Three parts of 40 MiB each: every one within a part's bound, all
    /// together over a frame's.
    Total,
    /// The reply ring's tail moved far past anything written, and the
    /// host's doorbell rung; the observation never returns.
    RingTail,
    /// A record in the reply ring claiming 4 GiB; the observation never
    /// returns.
    RingLength,
    /// The call ring's head moved far past the host's tail (the host finds
    /// it when it sends its next call); the observation answers normally.
    RingHead,
}

impl Case {
    /// The case named `name`.
    pub fn named(name: &str) -> Option<Self> {
        Some(match name {
            "structure" => Self::Structure,
            "bounds" => Self::Bounds,
            "oversized" => Self::Oversized,
            "part" => Self::Part,
            "total" => Self::Total,
            "ringTail" => Self::RingTail,
            "ringLength" => Self::RingLength,
            "ringHead" => Self::RingHead,
            _ => return None,
        })
    }
}

/// One part of a forged frame.
enum Part {
    Inline(Vec<u8>),
    /// A sealed memory file of this size (sparse: never written).
    File(u64),
}

fn context() -> Value {
    json!({ "contextKind": "native", "contextId": "forged", "documentEpoch": "1" })
}

/// A driver's observation JSON with a UI tree of nodes `ids` (all roots),
/// as a worker forwards it.
fn observation(ids: &[&str]) -> Vec<u8> {
    let nodes: Vec<Value> = ids
        .iter()
        .map(|id| json!({ "stableNodeId": id, "role": "text" }))
        .collect();
    let roots: Vec<&str> = ids.to_vec();
    json!({
        "viewport": { "width": 64, "height": 64, "scaleFactor": 1.0 },
        "metadata": {},
        "uiTree": {
            "context": context(),
            "rootStableNodeIds": roots,
            "nodes": nodes,
        },
    })
    .to_string()
    .into_bytes()
}

/// A sealed, sparse memory file of `len` bytes.
fn sparse_file(len: u64) -> io::Result<OwnedFd> {
    let fd = rustix::fs::memfd_create(
        "forged-part",
        MemfdFlags::CLOEXEC | MemfdFlags::ALLOW_SEALING,
    )?;
    rustix::fs::ftruncate(&fd, len)?;
    rustix::fs::fcntl_add_seals(
        &fd,
        SealFlags::WRITE | SealFlags::SHRINK | SealFlags::GROW | SealFlags::SEAL,
    )?;
    Ok(fd)
}

/// Sends one frame of `parts` (part 0 the header) on the channel.
fn send(channel: BorrowedFd<'_>, parts: &[Part]) -> io::Result<()> {
    let mut prefix = vec![REPLY, parts.len() as u8];
    let mut inline = Vec::new();
    let mut files = Vec::new();
    for p in parts {
        let (tag, a, b) = match p {
            Part::Inline(bytes) => {
                inline.extend_from_slice(bytes);
                (0u8, bytes.len() as u64, 0)
            }
            Part::File(len) => {
                files.push(sparse_file(*len)?);
                (2, files.len() as u64 - 1, *len)
            }
        };
        prefix.push(tag);
        prefix.extend_from_slice(&a.to_le_bytes());
        prefix.extend_from_slice(&b.to_le_bytes());
    }
    let fds: Vec<BorrowedFd<'_>> = files.iter().map(AsFd::as_fd).collect();
    let mut space = [MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(4))];
    let mut control = SendAncillaryBuffer::new(&mut space);
    if !fds.is_empty() && !control.push(SendAncillaryMessage::ScmRights(&fds)) {
        return Err(io::Error::other("too many descriptors"));
    }
    let iov = [io::IoSlice::new(&prefix), io::IoSlice::new(&inline)];
    rustix::net::sendmsg(channel, &iov, &mut control, SendFlags::NOSIGNAL)?;
    Ok(())
}

/// An observation reply's header for call `id`: the observation's JSON
/// and then a PNG follow.
fn header(id: u64) -> Vec<u8> {
    json!({ "id": id, "outcome": { "ok": { "png": true } } })
        .to_string()
        .into_bytes()
}

/// Header words of the rings' memory file (byte offsets).
const CALL_TAIL: u64 = 0;
const CALL_HEAD: u64 = 8 * 8;
const REPLY_TAIL: u64 = 32 * 8;
/// Where the reply ring's bytes start, and its size.
const REPLIES_AT: u64 = 4096 + RING;
const RING: u64 = 256 << 10;

/// The descriptor number of this process whose link reads `name`.
fn descriptor(name: &str) -> io::Result<i32> {
    for entry in std::fs::read_dir("/proc/self/fd")?.flatten() {
        if let Ok(target) = std::fs::read_link(entry.path())
            && target.to_string_lossy().contains(name)
            && let Ok(n) = entry.file_name().to_string_lossy().parse()
        {
            return Ok(n);
        }
    }
    Err(io::Error::new(
        io::ErrorKind::NotFound,
        format!("no descriptor for {name}"),
    ))
}

fn word(file: &std::fs::File, at: u64) -> io::Result<u64> {
    use std::os::unix::fs::FileExt;
    let mut b = [0u8; 8];
    file.read_exact_at(&mut b, at)?;
    Ok(u64::from_le_bytes(b))
}

fn set_word(file: &std::fs::File, at: u64, value: u64) -> io::Result<()> {
    use std::os::unix::fs::FileExt;
    file.write_all_at(&value.to_le_bytes(), at)
}

/// Scribbles over the rings the host passed this worker (through the
/// memory file's descriptor: its pages are the ones both map), then, for a
/// broken reply ring, rings the host's doorbell and waits to be killed.
fn scribble(case: Case) -> io::Result<()> {
    use std::os::unix::fs::FileExt;
    let rings = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(format!("/proc/self/fd/{}", descriptor("devicerail-rings")?))?;
    match case {
        Case::RingHead => {
            let tail = word(&rings, CALL_TAIL)?;
            return set_word(&rings, CALL_HEAD, tail.wrapping_add(1 << 40));
        }
        Case::RingTail => set_word(&rings, REPLY_TAIL, u64::MAX / 2)?,
        _ => {
            let tail = word(&rings, REPLY_TAIL)?;
            for (i, b) in u32::MAX.to_le_bytes().iter().enumerate() {
                let at = REPLIES_AT + (tail + i as u64) % RING;
                rings.write_all_at(&[*b], at)?;
            }
            set_word(&rings, REPLY_TAIL, tail + 8)?;
        }
    }
    let bell = descriptor("[eventfd]")?;
    // SAFETY: the descriptor was just found open in this process (the
    // host's doorbell); it is only borrowed for one write.
    let bell = unsafe { BorrowedFd::borrow_raw(bell) };
    rustix::io::write(bell, &1u64.to_ne_bytes())?;
    wait_to_be_killed()
}

/// Writes the forged replies of `case` for an observation, with `png` as
/// its screenshot (or scribbles over the rings, for the ring cases).
pub fn forge(case: Case, png: &[u8]) -> io::Result<()> {
    // SAFETY: descriptor 3 is the worker's channel for the whole life of
    // the process; it is only borrowed for these sends.
    let channel = unsafe { BorrowedFd::borrow_raw(CHANNEL_FD) };
    let long = "x".repeat(5_000);
    for id in (1..=HIGHEST_ID).rev() {
        let json = match case {
            Case::Structure => Part::Inline(observation(&["a", "a"])),
            Case::Bounds => Part::Inline(observation(&["a", &long])),
            Case::Oversized => Part::File(4 << 20),
            Case::Part => {
                let parts = [Part::Inline(header(id)), Part::File(200 << 20)];
                send(channel, &parts)?;
                return wait_to_be_killed();
            }
            Case::RingTail | Case::RingLength | Case::RingHead => return scribble(case),
            Case::Total => {
                let parts = [
                    Part::Inline(header(id)),
                    Part::File(40 << 20),
                    Part::File(40 << 20),
                    Part::File(40 << 20),
                ];
                send(channel, &parts)?;
                return wait_to_be_killed();
            }
        };
        let parts = [Part::Inline(header(id)), json, Part::Inline(png.to_vec())];
        send(channel, &parts)?;
    }
    // The worker's real reply may take the reply ring, which the host can
    // read before the socket: it is only sent once the host has read every
    // forged frame, so the forged one reaches the waiting call first.
    wait_until_read(channel)
}

/// Waits until the host has read everything sent on `channel` (the
/// socket's send queue is empty).
fn wait_until_read(channel: BorrowedFd<'_>) -> io::Result<()> {
    let until = std::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        let mut queued: libc::c_int = 0;
        // SAFETY: SIOCOUTQ (Linux gives it TIOCOUTQ's number) writes one
        // int, into `queued`, for the open socket `channel`.
        let r = unsafe {
            libc::ioctl(
                std::os::fd::AsRawFd::as_raw_fd(&channel),
                libc::TIOCOUTQ,
                &mut queued,
            )
        };
        if r != 0 {
            return Err(io::Error::last_os_error());
        }
        if queued == 0 {
            return Ok(());
        }
        if std::time::Instant::now() > until {
            return Err(io::Error::other("the host did not read the forged frames"));
        }
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
}

/// The host kills a worker that sent a frame it refuses; the call that
/// sent it waits for that instead of answering.
fn wait_to_be_killed() -> io::Result<()> {
    std::thread::sleep(std::time::Duration::from_secs(30));
    Err(io::Error::other("the host did not kill the worker"))
}
