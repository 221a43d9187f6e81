//! Calls and replies through shared memory, without a system call while
//! both sides are busy: two byte rings in a memory file the host creates
//! per worker (next to the arena), one for calls (host → worker) and one
//! for replies (worker → host). A record is one channel message exactly as
//! it would cross the socket (`frame`'s layout, arena places included),
//! preceded by its length. Each side keeps its own position private and
//! publishes it in a header word; the other side's word is only ever read,
//! and checked.
//!
//! Doorbells, rung only when the other side sleeps:
//! * calls: idle worker threads sleep on a futex (the `CALL_SEQ` word,
//!   counted in `CALL_WAITERS`); the host bumps the word after every call
//!   and wakes one sleeper if there is any.
//! * replies: the host's reader (a task on its reactor) says it sleeps in
//!   `REPLY_SLEEPING` and waits on an `eventfd`; the worker rings it when
//!   it takes that word back from 1 to 0.
//!
//! The socket stays: for descriptors (a part too large for the arena), a
//! message a full ring cannot take, and the worker's death (the host drains
//! the reply ring one last time when the socket closes).
//!
//! The worker runs plugin code, so the host trusts nothing in this memory:
//! a head past the tail, a length past what was published or past a
//! message's bound breaks the ring ([`RingError`]) and the host kills the
//! worker; the bytes of a record are copied out before they are parsed, as
//! every socket message is. Never a reference into the shared bytes.

use std::io;
use std::os::fd::OwnedFd;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering, fence};
use std::sync::{Mutex, MutexGuard};

use devicerail_host_sys::doorbell;
use devicerail_host_sys::shm::SharedRegion;

use super::frame::{FrameError, MAX_MESSAGE};

/// Bytes of each ring (sparse: only touched pages cost memory).
const RING: usize = 256 << 10;
/// Bytes of a record's length.
const LEN: usize = 4;

// Header words, each on its own cache line (8 words).
/// The call ring's tail (host), head (worker).
const CALL_TAIL: usize = 0;
const CALL_HEAD: usize = 8;
/// Bumped by the host after each call: idle worker threads sleep on it.
const CALL_SEQ: usize = 16;
/// Worker threads asleep on [`CALL_SEQ`].
const CALL_WAITERS: usize = 24;
/// The reply ring's tail (worker), head (host).
const REPLY_TAIL: usize = 32;
const REPLY_HEAD: usize = 40;
/// 1 while the host's reader sleeps on the doorbell.
const REPLY_SLEEPING: usize = 48;

/// Where the two rings are in the data area.
const CALLS_AT: usize = 0;
const REPLIES_AT: usize = RING;

/// A ring broken by the other side.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub(super) enum RingError {
    /// What was wrong with what the peer published.
    #[error("the {0}")]
    Broken(&'static str),
}

impl From<RingError> for FrameError {
    fn from(e: RingError) -> Self {
        let RingError::Broken(what) = e;
        FrameError::Malformed(what)
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// One direction: where its bytes are and which words hold its positions.
#[derive(Debug, Clone, Copy)]
struct Ring {
    at: usize,
    tail: usize,
    head: usize,
}

const CALLS: Ring = Ring {
    at: CALLS_AT,
    tail: CALL_TAIL,
    head: CALL_HEAD,
};
const REPLIES: Ring = Ring {
    at: REPLIES_AT,
    tail: REPLY_TAIL,
    head: REPLY_HEAD,
};

/// The rings' memory file, mapped.
#[derive(Debug)]
struct Region(SharedRegion);

impl Region {
    fn word(&self, index: usize) -> &AtomicU64 {
        self.0
            .word(index)
            .unwrap_or_else(|| unreachable!("ring words lie in the header page"))
    }

    fn word32(&self, index: usize) -> &AtomicU32 {
        self.0
            .word32(index)
            .unwrap_or_else(|| unreachable!("ring words lie in the header page"))
    }

    /// Where `len` bytes at stream position `pos` lie in a ring: the
    /// offset of the first run and its length (the rest wraps to 0).
    fn span(pos: u64, len: usize) -> (usize, usize) {
        let start = (pos % RING as u64) as usize;
        (start, len.min(RING - start))
    }

    /// Copies `bytes` into `ring` at stream position `pos`, wrapping.
    fn put(&self, ring: Ring, pos: u64, bytes: &[u8]) {
        let (start, first) = Self::span(pos, bytes.len());
        let (a, b) = bytes.split_at(first);
        // In bounds by construction: `start + first <= RING`, `b.len() < RING`.
        let _ = self.0.write(ring.at + start, a);
        let _ = self.0.write(ring.at, b);
    }

    /// Copies `out.len()` bytes of `ring` at stream position `pos` out.
    fn get(&self, ring: Ring, pos: u64, out: &mut [u8]) {
        let (start, first) = Self::span(pos, out.len());
        let (a, b) = out.split_at_mut(first);
        let _ = self.0.read_into(ring.at + start, a);
        let _ = self.0.read_into(ring.at, b);
    }

    /// A call (or something else) waits for the worker's idle threads:
    /// bump their futex word and wake one if any sleeps.
    fn wake_idle(&self) {
        self.word32(CALL_SEQ).fetch_add(1, Ordering::SeqCst);
        fence(Ordering::SeqCst);
        if self.word(CALL_WAITERS).load(Ordering::SeqCst) != 0 {
            doorbell::futex_wake(self.word32(CALL_SEQ), 1);
        }
    }

    /// Appends one record (`pieces` together) at `*tail`; `false` when
    /// the ring has no room for it now.
    fn push(&self, ring: Ring, tail: &mut u64, pieces: &[&[u8]]) -> Result<bool, RingError> {
        let len: usize = pieces.iter().map(|p| p.len()).sum();
        if len > MAX_MESSAGE {
            return Ok(false);
        }
        let head = self.word(ring.head).load(Ordering::Acquire);
        let used = tail.wrapping_sub(head);
        if used > RING as u64 {
            return Err(RingError::Broken("ring's head is past its tail"));
        }
        if (RING as u64 - used) < (LEN + len) as u64 {
            return Ok(false);
        }
        // `len <= MAX_MESSAGE` fits a u32.
        self.put(ring, *tail, &(len as u32).to_le_bytes());
        let mut pos = tail.wrapping_add(LEN as u64);
        for p in pieces {
            self.put(ring, pos, p);
            pos = pos.wrapping_add(p.len() as u64);
        }
        *tail = pos;
        self.word(ring.tail).store(pos, Ordering::Release);
        Ok(true)
    }

    /// Takes the record at `*head` into `buf` (at least [`MAX_MESSAGE`]
    /// bytes): its length, or `None` when the ring is empty.
    fn pop(&self, ring: Ring, head: &mut u64, buf: &mut [u8]) -> Result<Option<usize>, RingError> {
        let tail = self.word(ring.tail).load(Ordering::Acquire);
        let avail = tail.wrapping_sub(*head);
        if avail == 0 {
            return Ok(None);
        }
        if avail > RING as u64 || avail < LEN as u64 {
            return Err(RingError::Broken("ring's tail is out of place"));
        }
        let mut len = [0u8; LEN];
        self.get(ring, *head, &mut len);
        let len = u32::from_le_bytes(len) as usize;
        if len > MAX_MESSAGE || len > buf.len() || (LEN + len) as u64 > avail {
            return Err(RingError::Broken("ring holds a record longer than allowed"));
        }
        self.get(ring, head.wrapping_add(LEN as u64), &mut buf[..len]);
        *head = head.wrapping_add((LEN + len) as u64);
        self.word(ring.head).store(*head, Ordering::Release);
        Ok(Some(len))
    }

    /// Whether `ring` holds a record past `head` (or is broken: look).
    fn pending(&self, ring: Ring, head: u64) -> bool {
        self.word(ring.tail).load(Ordering::Acquire) != head
    }
}

/// The rings as the host holds them: it created them, pushes calls and
/// pops replies.
#[derive(Debug)]
pub(super) struct HostRings {
    region: Region,
    /// The call ring's tail (the host's own copy; the shared word is only
    /// published).
    calls_tail: Mutex<u64>,
    /// The reply ring's head (only the reader moves it).
    replies_head: Mutex<u64>,
    bell: doorbell::EventDoorbell,
}

impl HostRings {
    /// New, empty rings for one worker.
    pub(super) fn create() -> io::Result<Self> {
        Ok(Self {
            region: Region(SharedRegion::create("devicerail-rings", 2 * RING)?),
            calls_tail: Mutex::new(0),
            replies_head: Mutex::new(0),
            bell: doorbell::EventDoorbell::create()?,
        })
    }

    /// The memory file and the reply doorbell, for the worker.
    pub(super) fn fds(&self) -> io::Result<[OwnedFd; 2]> {
        Ok([
            self.region.0.fd().try_clone_to_owned()?,
            std::os::fd::AsFd::as_fd(&self.bell).try_clone_to_owned()?,
        ])
    }

    /// The reply doorbell (a reactor waits on it).
    pub(super) fn bell(&self) -> &doorbell::EventDoorbell {
        &self.bell
    }

    /// Pushes one call message and wakes a sleeping worker thread; `false`
    /// when the ring has no room (send it through the socket).
    pub(super) fn push_call(&self, pieces: &[&[u8]]) -> Result<bool, RingError> {
        {
            let mut tail = lock(&self.calls_tail);
            if !self.region.push(CALLS, &mut tail, pieces)? {
                return Ok(false);
            }
        }
        self.region.wake_idle();
        Ok(true)
    }

    /// Pops one reply message into `buf`.
    pub(super) fn pop_reply(&self, buf: &mut [u8]) -> Result<Option<usize>, RingError> {
        let mut head = lock(&self.replies_head);
        self.region.pop(REPLIES, &mut head, buf)
    }

    /// Says the reader is about to sleep on the doorbell; `false` when a
    /// reply arrived meanwhile (do not sleep: pop it).
    pub(super) fn sleep(&self) -> bool {
        self.region.word(REPLY_SLEEPING).store(1, Ordering::SeqCst);
        fence(Ordering::SeqCst);
        let head = *lock(&self.replies_head);
        if self.region.pending(REPLIES, head) {
            self.region.word(REPLY_SLEEPING).store(0, Ordering::SeqCst);
            return false;
        }
        true
    }

    /// The reader woke. The doorbell's counter is left as it is: the
    /// reactor waits on it edge-triggered, so every ring is a new edge
    /// whatever the count (one system call less per wake; a worker that
    /// fills the counter only stops its own rings from waking the host,
    /// and its calls then time out).
    pub(super) fn woke(&self) {
        self.region.word(REPLY_SLEEPING).store(0, Ordering::SeqCst);
    }
}

/// The rings as a worker holds them: it pops calls (any of its threads)
/// and pushes replies.
#[derive(Debug)]
pub(super) struct WorkerRings {
    region: Region,
    calls_head: Mutex<u64>,
    replies_tail: Mutex<u64>,
    /// The host's reply doorbell; `None` for a worker without rings (its
    /// idle threads still sleep on the region's futex word).
    bell: Option<doorbell::EventDoorbell>,
}

impl WorkerRings {
    /// Maps the rings the host passed: the memory file and the doorbell.
    pub(super) fn map(region: OwnedFd, bell: OwnedFd) -> io::Result<Self> {
        let region = SharedRegion::map(region)?;
        if region.data_len() < 2 * RING {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "the rings' memory is too small",
            ));
        }
        Ok(Self {
            region: Region(region),
            calls_head: Mutex::new(0),
            replies_tail: Mutex::new(0),
            bell: Some(doorbell::EventDoorbell::adopt(bell)?),
        })
    }

    /// No rings (a host that passed none): only the futex words, in
    /// memory of this process, for the idle threads.
    pub(super) fn local() -> io::Result<Self> {
        Ok(Self {
            region: Region(SharedRegion::create("devicerail-idle", 0)?),
            calls_head: Mutex::new(0),
            replies_tail: Mutex::new(0),
            bell: None,
        })
    }

    /// Whether calls and replies may travel through rings.
    pub(super) fn shared(&self) -> bool {
        self.bell.is_some()
    }

    /// Pops one call message into `buf` (`None`: the ring is empty).
    pub(super) fn pop_call(&self, buf: &mut [u8]) -> Result<Option<usize>, RingError> {
        if !self.shared() {
            return Ok(None);
        }
        let mut head = lock(&self.calls_head);
        self.region.pop(CALLS, &mut head, buf)
    }

    /// The futex word idle threads sleep on, as it is now.
    pub(super) fn seq(&self) -> u32 {
        self.region.word32(CALL_SEQ).load(Ordering::SeqCst)
    }

    /// Something for the idle threads that is not in the ring (a call from
    /// the socket): bump the word and wake one.
    pub(super) fn nudge(&self) {
        self.region.wake_idle();
    }

    /// Sleeps until the word moves past `seen`, having announced the
    /// sleep. `check` runs after the announcement (a call pushed before it
    /// would otherwise be slept through): the sleep is skipped when it
    /// says there is work.
    pub(super) fn idle(&self, seen: u32, check: impl FnOnce() -> bool) {
        let waiters = self.region.word(CALL_WAITERS);
        waiters.fetch_add(1, Ordering::SeqCst);
        fence(Ordering::SeqCst);
        if !check() {
            doorbell::futex_wait(self.region.word32(CALL_SEQ), seen, None);
        }
        waiters.fetch_sub(1, Ordering::SeqCst);
    }

    /// Whether the call ring holds a record not yet popped.
    pub(super) fn calls_pending(&self) -> bool {
        self.shared() && self.region.pending(CALLS, *lock(&self.calls_head))
    }

    /// Pushes one reply message and rings the host if its reader sleeps;
    /// `false` when there are no rings or no room (use the socket).
    pub(super) fn push_reply(&self, pieces: &[&[u8]]) -> Result<bool, RingError> {
        let Some(bell) = &self.bell else {
            return Ok(false);
        };
        {
            let mut tail = lock(&self.replies_tail);
            if !self.region.push(REPLIES, &mut tail, pieces)? {
                return Ok(false);
            }
        }
        fence(Ordering::SeqCst);
        if self.region.word(REPLY_SLEEPING).swap(0, Ordering::SeqCst) != 0 {
            // A doorbell that cannot be rung leaves the host to find the
            // reply with the next one; it is an eventfd the host made.
            let _ = bell.ring();
        }
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    fn pair() -> (HostRings, WorkerRings) {
        let host = HostRings::create().expect("rings");
        let [region, bell] = host.fds().expect("fds");
        let worker = WorkerRings::map(region, bell).expect("map");
        (host, worker)
    }

    #[test]
    fn records_cross_both_ways_in_order_and_wrap() {
        let (host, worker) = pair();
        let mut buf = vec![0u8; MAX_MESSAGE];
        // Far more bytes than a ring holds, so positions wrap many times.
        for round in 0..200u32 {
            let body = vec![(round % 251) as u8; 10_000 + round as usize];
            assert!(host.push_call(&[b"call", &body]).expect("push"));
            let n = worker.pop_call(&mut buf).expect("pop").expect("a record");
            assert_eq!(&buf[..4], b"call");
            assert_eq!(&buf[4..n], &body[..]);
            assert!(worker.push_reply(&[&body, b"reply"]).expect("push"));
            let n = host.pop_reply(&mut buf).expect("pop").expect("a record");
            assert_eq!(&buf[n - 5..n], b"reply");
            assert_eq!(n, body.len() + 5);
        }
        assert_eq!(worker.pop_call(&mut buf), Ok(None));
        assert_eq!(host.pop_reply(&mut buf), Ok(None));
    }

    #[test]
    fn a_full_ring_says_so_and_a_message_too_long_is_refused() {
        let (host, worker) = pair();
        let chunk = vec![7u8; MAX_MESSAGE];
        let mut pushed = 0;
        while host.push_call(&[&chunk]).expect("push") {
            pushed += 1;
        }
        assert_eq!(pushed, RING / (MAX_MESSAGE + LEN));
        let mut buf = vec![0u8; MAX_MESSAGE];
        assert!(worker.pop_call(&mut buf).expect("pop").is_some());
        assert!(host.push_call(&[&chunk]).expect("room again"));
        let too_long = vec![0u8; MAX_MESSAGE + 1];
        assert!(!worker.push_reply(&[&too_long]).expect("refused"));
    }

    #[test]
    fn what_a_worker_scribbles_breaks_the_ring_for_the_host() {
        let (host, worker) = pair();
        let mut buf = vec![0u8; MAX_MESSAGE];
        let words = &worker.region;
        // A tail far past anything published.
        words
            .word(REPLY_TAIL)
            .store(u64::MAX / 2, Ordering::Release);
        assert!(host.pop_reply(&mut buf).is_err());
        // A record claiming more bytes than were published.
        words.word(REPLY_TAIL).store(8, Ordering::Release);
        words.put(REPLIES, 0, &(100u32).to_le_bytes());
        assert!(host.pop_reply(&mut buf).is_err());
        // A length past a message's bound.
        words.put(REPLIES, 0, &(u32::MAX).to_le_bytes());
        assert!(host.pop_reply(&mut buf).is_err());
        // A head the worker moved past the host's tail.
        words.word(CALL_HEAD).store(1 << 40, Ordering::Release);
        assert!(host.push_call(&[b"x"]).is_err());
    }

    #[test]
    fn the_reader_sleeps_only_when_nothing_arrived_and_is_rung_after() {
        let (host, worker) = pair();
        let mut buf = vec![0u8; MAX_MESSAGE];
        assert!(host.sleep());
        assert!(worker.push_reply(&[b"one"]).expect("push"));
        assert!(host.bell().take().expect("take"), "the sleeper was rung");
        host.woke();
        // Awake: no ring for the next reply.
        assert!(worker.push_reply(&[b"two"]).expect("push"));
        assert!(!host.bell().take().expect("take"));
        // A reply already there: the reader must not sleep.
        assert!(!host.sleep());
        assert_eq!(host.pop_reply(&mut buf).expect("pop"), Some(3));
        assert_eq!(host.pop_reply(&mut buf).expect("pop"), Some(3));
    }

    #[test]
    fn idle_threads_wake_for_every_call_and_none_is_slept_through() {
        let (host, worker) = pair();
        let worker = Arc::new(worker);
        let taken = Arc::new(AtomicU64::new(0));
        let n = 20_000u64;
        let threads: Vec<_> = (0..3)
            .map(|_| {
                let (w, taken) = (worker.clone(), taken.clone());
                std::thread::spawn(move || {
                    let mut buf = vec![0u8; MAX_MESSAGE];
                    loop {
                        let seen = w.seq();
                        match w.pop_call(&mut buf).expect("pop") {
                            Some(len) if &buf[..len] == b"stop" => return,
                            Some(_) => {
                                taken.fetch_add(1, Ordering::AcqRel);
                            }
                            None => w.idle(seen, || w.calls_pending()),
                        }
                    }
                })
            })
            .collect();
        for i in 0..n {
            while !host.push_call(&[&i.to_le_bytes()]).expect("push") {
                std::thread::yield_now();
            }
            if i % 64 == 0 {
                // Let the threads fall asleep now and then.
                std::thread::sleep(std::time::Duration::from_micros(50));
            }
        }
        for _ in 0..3 {
            host.push_call(&[b"stop"]).expect("push");
        }
        for t in threads {
            t.join().expect("a thread ends");
        }
        assert_eq!(taken.load(Ordering::Acquire), n);
    }
}
