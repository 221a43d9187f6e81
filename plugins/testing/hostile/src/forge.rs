//! Forged replies written straight onto the worker's channel: what plugin
//! code running in a worker could send the host if it bypassed the
//! worker's own encoding. The host must treat every byte of it as
//! untrusted input: check it, refuse it, and stay up.
//!
//! This module knows the channel's layout only to forge it (one message:
//! a kind byte, a part count, 17 bytes per part saying where its bytes
//! are, then the inline bytes; part 0 is the JSON header). It is test
//! support; nothing real ever writes the channel but the worker.

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

/// Writes the forged replies of `case` for an observation, with `png` as
/// its screenshot.
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
                return send(channel, &parts);
            }
            Case::Total => {
                let parts = [
                    Part::Inline(header(id)),
                    Part::File(40 << 20),
                    Part::File(40 << 20),
                    Part::File(40 << 20),
                ];
                return send(channel, &parts);
            }
        };
        let parts = [Part::Inline(header(id)), json, Part::Inline(png.to_vec())];
        send(channel, &parts)?;
    }
    Ok(())
}
