//! Waking the other side of a shared-memory ring: an [`EventDoorbell`]
//! (an `eventfd`, which a reactor can wait on next to a socket) and
//! futexes on a 32-bit word of a shared region ([`futex_wait`],
//! [`futex_wake`]), which a thread of another process can sleep on.
//!
//! The `unsafe` here registers a doorbell with Tokio's reactor, argued
//! where it stands.
//!
//! Neither carries data: a doorbell only says "look again". What a peer
//! does with one (never ring it, ring it constantly) can cost the other
//! side a wake-up, never its memory safety.

use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd, RawFd};
use std::sync::atomic::AtomicU32;
use std::time::Duration;

use rustix::event::EventfdFlags;
use rustix::thread::futex;

/// An `eventfd`, non-blocking and close-on-exec.
#[derive(Debug)]
pub struct EventDoorbell(OwnedFd);

impl EventDoorbell {
    /// A new doorbell, not rung.
    pub fn create() -> io::Result<Self> {
        let fd = rustix::event::eventfd(0, EventfdFlags::CLOEXEC | EventfdFlags::NONBLOCK)?;
        Ok(Self(fd))
    }

    /// Takes a doorbell another process passed over, made non-blocking
    /// (the host sends an `eventfd`; on any other file a ring or take
    /// fails or does nothing, harmlessly).
    pub fn adopt(fd: OwnedFd) -> io::Result<Self> {
        rustix::io::ioctl_fionbio(&fd, true)?;
        Ok(Self(fd))
    }

    /// Rings it (adds one to the counter). A full counter is rung already.
    pub fn ring(&self) -> io::Result<()> {
        match rustix::io::write(&self.0, &1u64.to_ne_bytes()) {
            Ok(_) | Err(rustix::io::Errno::AGAIN) => Ok(()),
            Err(e) => Err(e.into()),
        }
    }

    /// Takes the rings since the last call (resets the counter); `false`
    /// when it was not rung.
    pub fn take(&self) -> io::Result<bool> {
        let mut buf = [0u8; 8];
        match rustix::io::read(&self.0, &mut buf) {
            Ok(_) => Ok(true),
            Err(rustix::io::Errno::AGAIN) => Ok(false),
            Err(e) => Err(e.into()),
        }
    }
}

/// Registers `bell` with the reactor of the Tokio runtime this thread is
/// in (panics outside one, as Tokio does), to wait for a ring without a
/// thread.
pub fn register(bell: EventDoorbell) -> io::Result<tokio::io::unix::AsyncFd<EventDoorbell>> {
    // SAFETY: an `EventDoorbell` owns its descriptor for its whole life
    // and `as_raw_fd` always returns that same descriptor; it is closed
    // only when the doorbell is dropped, which the `AsyncFd` does after
    // deregistering it.
    unsafe { tokio::io::unix::AsyncFd::register(bell) }.map_err(io::Error::from)
}

impl AsFd for EventDoorbell {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.0.as_fd()
    }
}

impl AsRawFd for EventDoorbell {
    fn as_raw_fd(&self) -> RawFd {
        self.0.as_raw_fd()
    }
}

/// Sleeps while `word` holds `expected`, at most `timeout` (`None`:
/// until woken). Returns at once when it holds anything else; may return
/// spuriously. The futex is shared (the word may live in memory another
/// process maps).
pub fn futex_wait(word: &AtomicU32, expected: u32, timeout: Option<Duration>) {
    let ts = timeout.map(|d| rustix::thread::Timespec {
        tv_sec: i64::try_from(d.as_secs()).unwrap_or(i64::MAX),
        tv_nsec: i64::from(d.subsec_nanos()),
    });
    // EAGAIN (the word changed), EINTR and ETIMEDOUT all mean "look again".
    let _ = futex::wait(word, futex::Flags::empty(), expected, ts.as_ref());
}

/// Wakes at most `n` threads (of any process) sleeping on `word`.
pub fn futex_wake(word: &AtomicU32, n: u32) {
    let _ = futex::wake(word, futex::Flags::empty(), n);
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::sync::atomic::Ordering;

    #[test]
    fn an_eventfd_counts_rings_until_taken() {
        let bell = EventDoorbell::create().expect("eventfd");
        assert!(!bell.take().expect("take"));
        bell.ring().expect("ring");
        bell.ring().expect("ring");
        assert!(bell.take().expect("take"));
        assert!(!bell.take().expect("take"));
        let passed =
            EventDoorbell::adopt(bell.as_fd().try_clone_to_owned().expect("dup")).expect("adopt");
        passed.ring().expect("ring");
        assert!(bell.take().expect("take"));
    }

    #[test]
    fn a_futex_sleeper_wakes_when_the_word_changes() {
        let word = Arc::new(AtomicU32::new(0));
        let w = word.clone();
        let sleeper = std::thread::spawn(move || {
            while w.load(Ordering::Acquire) == 0 {
                futex_wait(&w, 0, Some(Duration::from_secs(5)));
            }
        });
        std::thread::sleep(Duration::from_millis(20));
        word.store(1, Ordering::Release);
        futex_wake(&word, 1);
        sleeper.join().expect("woken");
        // A stale expectation returns at once.
        futex_wait(&word, 0, None);
    }
}
