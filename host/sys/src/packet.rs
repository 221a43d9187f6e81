//! Unix `SOCK_SEQPACKET` sockets: one `sendmsg` is one message, delivered
//! whole or not at all (never half a frame, so a non-blocking send needs no
//! buffer of its own), any number of threads may block in `recvmsg` on one
//! socket and each message wakes exactly one of them, and descriptors
//! (`SCM_RIGHTS`) travel with a message. Everything here goes through
//! rustix's safe wrappers; the `unsafe` left takes ownership of an
//! inherited descriptor number and registers a socket with Tokio's
//! reactor, each argued where it stands.

use std::io;
use std::mem::MaybeUninit;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};
use std::time::Duration;

use rustix::event::{PollFd, PollFlags, Timespec};
use rustix::io::FdFlags;
use rustix::net::{
    AddressFamily, RecvAncillaryBuffer, RecvAncillaryMessage, RecvFlags, ReturnFlags,
    SendAncillaryBuffer, SendAncillaryMessage, SendFlags, SocketFlags, SocketType,
};

/// The most descriptors one message carries.
pub const MAX_FDS: usize = 4;

/// One end of a `SOCK_SEQPACKET` Unix socket pair.
#[derive(Debug)]
pub struct PacketSocket(OwnedFd);

/// What one `recv` got.
#[derive(Debug)]
pub struct Received {
    /// Bytes of the message in the buffer.
    pub len: usize,
    /// Descriptors that came with it (close-on-exec).
    pub fds: Vec<OwnedFd>,
}

/// A connected pair (close-on-exec), both ends blocking.
pub fn pair() -> io::Result<(PacketSocket, PacketSocket)> {
    let (a, b) = rustix::net::socketpair(
        AddressFamily::UNIX,
        SocketType::SEQPACKET,
        SocketFlags::CLOEXEC,
        None,
    )?;
    Ok((PacketSocket(a), PacketSocket(b)))
}

fn timespec(d: Duration) -> Timespec {
    Timespec {
        tv_sec: i64::try_from(d.as_secs()).unwrap_or(i64::MAX),
        tv_nsec: i64::from(d.subsec_nanos()),
    }
}

impl PacketSocket {
    /// Takes ownership of descriptor `fd`, inherited from the parent as
    /// this process's channel: checks it is an open `SOCK_SEQPACKET`
    /// socket, marks it close-on-exec (so processes this one starts do not
    /// inherit it) and wraps it.
    ///
    /// Call it once per inherited number: the parent handed the descriptor
    /// over, and nothing else in this process may own it.
    pub fn inherit(fd: RawFd) -> io::Result<Self> {
        if fd < 0 {
            return Err(io::Error::from(io::ErrorKind::InvalidInput));
        }
        // SAFETY: the borrow lives only for the checks below; for a number
        // that is not open the kernel answers EBADF and nothing is touched.
        let borrowed = unsafe { BorrowedFd::borrow_raw(fd) };
        if rustix::net::sockopt::socket_type(borrowed).ok() != Some(SocketType::SEQPACKET) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("descriptor {fd} is not an open packet socket"),
            ));
        }
        rustix::io::fcntl_setfd(borrowed, FdFlags::CLOEXEC)?;
        // SAFETY: `fd` is open (checked), was inherited from the parent for
        // this purpose, and the caller promises nothing else owns it.
        Ok(Self(unsafe { OwnedFd::from_raw_fd(fd) }))
    }

    /// Makes every call on this socket non-blocking (`O_NONBLOCK`): sends
    /// and receives that would wait fail with `WouldBlock` instead.
    pub fn set_nonblocking(&self, nonblocking: bool) -> io::Result<()> {
        rustix::io::ioctl_fionbio(&self.0, nonblocking)?;
        Ok(())
    }

    /// Asks for a send buffer of `bytes` (the kernel may cap it) and
    /// returns what it granted. A message must fit the buffer to be sent.
    pub fn set_send_buffer(&self, bytes: usize) -> io::Result<usize> {
        rustix::net::sockopt::set_socket_send_buffer_size(&self.0, bytes)?;
        Ok(rustix::net::sockopt::socket_send_buffer_size(&self.0)?)
    }

    /// Sends one message made of `iov` with `fds`. On a non-blocking
    /// socket a full buffer is `WouldBlock` and nothing was sent.
    pub fn send(&self, iov: &[&[u8]], fds: &[BorrowedFd<'_>]) -> io::Result<()> {
        let slices: Vec<io::IoSlice<'_>> = iov.iter().map(|b| io::IoSlice::new(b)).collect();
        let total: usize = iov.iter().map(|b| b.len()).sum();
        let mut space = [MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(MAX_FDS))];
        let mut control = SendAncillaryBuffer::new(&mut space);
        if fds.len() > MAX_FDS
            || (!fds.is_empty() && !control.push(SendAncillaryMessage::ScmRights(fds)))
        {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "too many descriptors for one message",
            ));
        }
        loop {
            match rustix::net::sendmsg(&self.0, &slices, &mut control, SendFlags::NOSIGNAL) {
                // A packet socket sends a message whole or not at all.
                Ok(n) if n == total => return Ok(()),
                Ok(_) => {
                    return Err(io::Error::new(
                        io::ErrorKind::WriteZero,
                        "the message was cut",
                    ));
                }
                Err(rustix::io::Errno::INTR) => continue,
                Err(e) => return Err(e.into()),
            }
        }
    }

    /// Receives one message into `buf` (its length is the largest message
    /// accepted). A message that did not fit, or descriptors beyond
    /// [`MAX_FDS`], are an error (`InvalidData`); the end of the stream is
    /// `UnexpectedEof`. On a non-blocking socket an empty queue is
    /// `WouldBlock`.
    pub fn recv(&self, buf: &mut [u8]) -> io::Result<Received> {
        let mut space = [MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(MAX_FDS))];
        let mut control = RecvAncillaryBuffer::new(&mut space);
        let got = loop {
            let mut iov = [io::IoSliceMut::new(buf)];
            match rustix::net::recvmsg(&self.0, &mut iov, &mut control, RecvFlags::CMSG_CLOEXEC) {
                Ok(m) => break m,
                Err(rustix::io::Errno::INTR) => continue,
                Err(e) => return Err(e.into()),
            }
        };
        let mut fds = Vec::new();
        for msg in control.drain() {
            if let RecvAncillaryMessage::ScmRights(rights) = msg {
                fds.extend(rights);
            }
        }
        if got
            .flags
            .intersects(ReturnFlags::TRUNC | ReturnFlags::CTRUNC)
        {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "a message larger than the receive buffer",
            ));
        }
        if got.bytes == 0 && fds.is_empty() {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
        Ok(Received {
            len: got.bytes,
            fds,
        })
    }

    /// Waits until the socket is readable (`readable`) or writable, at most
    /// `timeout` (`None`: forever). Returns whether it is ready.
    pub fn wait(&self, readable: bool, timeout: Option<Duration>) -> io::Result<bool> {
        let flags = if readable {
            PollFlags::IN
        } else {
            PollFlags::OUT
        };
        let mut fds = [PollFd::new(&self.0, flags)];
        let timeout = timeout.map(timespec);
        loop {
            match rustix::event::poll(&mut fds, timeout.as_ref()) {
                Ok(n) => return Ok(n > 0),
                Err(rustix::io::Errno::INTR) => continue,
                Err(e) => return Err(e.into()),
            }
        }
    }

    /// Stops both directions (the peer's receives end); idempotent.
    pub fn shutdown(&self) {
        let _ = rustix::net::shutdown(&self.0, rustix::net::Shutdown::Both);
    }
}

/// Registers `socket` with the reactor of the Tokio runtime this thread is
/// in (panics outside one, as Tokio does), for waiting on readiness
/// without a thread.
pub fn register(socket: PacketSocket) -> io::Result<tokio::io::unix::AsyncFd<PacketSocket>> {
    // SAFETY: a `PacketSocket` owns its descriptor for its whole life and
    // `as_raw_fd` always returns that same descriptor; it is closed only
    // when the socket is dropped, which the `AsyncFd` does after
    // deregistering it.
    unsafe { tokio::io::unix::AsyncFd::register(socket) }.map_err(io::Error::from)
}

impl AsFd for PacketSocket {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.0.as_fd()
    }
}

impl AsRawFd for PacketSocket {
    fn as_raw_fd(&self) -> RawFd {
        self.0.as_raw_fd()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_arrive_whole_with_their_descriptors() {
        let (a, b) = pair().expect("pair");
        let (x, _y) = pair().expect("another pair");
        a.send(&[b"he", b"llo"], &[x.as_fd()]).expect("send");
        a.send(&[b"!"], &[]).expect("send");
        let mut buf = [0u8; 16];
        let got = b.recv(&mut buf).expect("recv");
        assert_eq!(&buf[..got.len], b"hello");
        assert_eq!(got.fds.len(), 1);
        let got = b.recv(&mut buf).expect("recv");
        assert_eq!((&buf[..got.len], got.fds.len()), (&b"!"[..], 0));
        b.set_nonblocking(true).expect("nonblocking");
        assert_eq!(
            b.recv(&mut buf).expect_err("empty").kind(),
            io::ErrorKind::WouldBlock
        );
        assert!(!b.wait(true, Some(Duration::from_millis(1))).expect("poll"));
        drop(a);
        assert_eq!(
            b.recv(&mut buf).expect_err("closed").kind(),
            io::ErrorKind::UnexpectedEof
        );
    }

    #[test]
    fn a_message_larger_than_the_buffer_is_refused() {
        let (a, b) = pair().expect("pair");
        a.send(&[&[7u8; 64]], &[]).expect("send");
        let mut small = [0u8; 8];
        assert_eq!(
            b.recv(&mut small).expect_err("truncated").kind(),
            io::ErrorKind::InvalidData
        );
    }
}
