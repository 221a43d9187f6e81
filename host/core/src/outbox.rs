//! Output queues: what a connection has to send, bounded in frames *and*
//! bytes. Connections (state) put frames in; a transport's writer takes
//! them out. A peer that does not read stops being fed once its queue is
//! full: senders wait, which stops its connection being read.
//!
//! A transport whose descriptor can be written from any thread without
//! blocking (a pipe or socket in non-blocking mode) also lends it to the
//! queue ([`Straight`]): an answer known off the runtime (the event
//! store's writer thread, once a commit is durable) is then written there
//! and then when nothing is queued before it, instead of waking the
//! runtime to write it. Frames never interleave or overtake each other:
//! a straight write happens only while no frame is queued or being
//! written, and what it could not write is queued first.
//! It must never block: a peer that does not read leaves the rest of a
//! frame queued, and the writer waits for it.

use std::sync::{Arc, Mutex};

use tokio::sync::{OwnedSemaphorePermit, Semaphore, mpsc};

/// One queued output frame with the share of the byte budget it holds
/// until it is written.
#[derive(Debug)]
pub(crate) struct Outgoing {
    pub frame: Vec<u8>,
    _bytes: Option<OwnedSemaphorePermit>,
}

/// A non-blocking descriptor frames may be written to from any thread.
pub(crate) trait Descriptor: Send + Sync + 'static {
    /// Writes what it can of `bytes` now: `WouldBlock` when nothing fits.
    fn try_write(&self, bytes: &[u8]) -> std::io::Result<usize>;
}

/// The descriptor a queue may write straight to, and how many frames are
/// queued or being written ahead of any straight write.
pub(crate) struct Straight {
    out: Arc<dyn Descriptor>,
    state: Mutex<Backlog>,
}

#[derive(Default)]
struct Backlog {
    /// Frames taken into the queue and not yet written by its writer.
    queued: usize,
    /// A straight write failed: the writer reports the failure.
    failed: bool,
}

impl Straight {
    fn lock(&self) -> std::sync::MutexGuard<'_, Backlog> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl std::fmt::Debug for Straight {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Straight").finish_non_exhaustive()
    }
}

/// Most bytes one write call takes from the queue.
const WRITE_BATCH: usize = 256 * 1024;

/// The writer's side of a queue that lends its descriptor
/// ([`OutputQueue::lending`]): what is queued, as lines for one write.
pub(crate) struct Batches {
    rx: mpsc::Receiver<Outgoing>,
    straight: Arc<Straight>,
    buf: Vec<u8>,
    held: Vec<Outgoing>,
}

impl Batches {
    /// The lines of every frame queued now (at least one, up to
    /// [`WRITE_BATCH`] bytes), waiting for the first; `None` once every
    /// sender is gone. Each frame keeps its share of the byte budget, and
    /// straight writes wait, until [`Batches::written`].
    pub(crate) async fn next(&mut self) -> Option<&[u8]> {
        let first = self.rx.recv().await?;
        self.buf.clear();
        self.take(first);
        while self.buf.len() < WRITE_BATCH {
            let Ok(next) = self.rx.try_recv() else { break };
            self.take(next);
        }
        Some(&self.buf)
    }

    fn take(&mut self, o: Outgoing) {
        self.buf.extend_from_slice(&o.frame);
        self.buf.push(b'\n');
        self.held.push(o);
    }

    /// The last batch was written (or given up with its peer).
    pub(crate) fn written(&mut self) {
        let mut b = self.straight.lock();
        b.queued = b.queued.saturating_sub(self.held.len());
        drop(b);
        self.held.clear();
    }
}

/// The sender side of an output queue, bounded in frames *and* bytes: a
/// connection whose peer does not read stops being fed (senders wait) once
/// its queue holds `bytes` bytes, instead of buffering without limit.
/// Frames must be newline-free JSON; the stdio writer appends `\n`.
#[derive(Debug, Clone)]
pub(crate) struct OutputQueue {
    tx: mpsc::Sender<Outgoing>,
    budget: Arc<Semaphore>,
    bytes: usize,
    straight: Option<Arc<Straight>>,
}

/// The queue was closed (its writer is gone).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the output queue is closed")]
pub(crate) struct Closed;

impl OutputQueue {
    /// A queue of at most `frames` frames and `bytes` bytes, with its
    /// receiver.
    pub(crate) fn bounded(frames: usize, bytes: usize) -> (Self, mpsc::Receiver<Outgoing>) {
        let (tx, rx) = mpsc::channel(frames);
        let bytes = bytes.max(1);
        let queue = Self {
            tx,
            budget: Arc::new(Semaphore::new(bytes)),
            bytes,
            straight: None,
        };
        (queue, rx)
    }

    /// A queue as [`OutputQueue::bounded`] whose frames may also be
    /// written straight to `out`, with its writer's side.
    pub(crate) fn lending(
        out: Arc<dyn Descriptor>,
        frames: usize,
        bytes: usize,
    ) -> (Self, Batches) {
        let (mut queue, rx) = Self::bounded(frames, bytes);
        let straight = Arc::new(Straight {
            out,
            state: Mutex::default(),
        });
        queue.straight = Some(straight.clone());
        let batches = Batches {
            rx,
            straight,
            buf: Vec::with_capacity(64 * 1024),
            held: Vec::new(),
        };
        (queue, batches)
    }

    /// Queues a frame, waiting while the queue is full.
    pub(crate) async fn send(&self, frame: Vec<u8>) -> Result<(), Closed> {
        self.send_then(frame, || {}).await
    }

    fn share(&self, frame: &[u8]) -> u32 {
        // A frame larger than the whole budget takes all of it.
        u32::try_from(frame.len().clamp(1, self.bytes)).unwrap_or(u32::MAX)
    }

    /// Queues a frame, running `entered` once the frame's place in the
    /// queue is taken and before the writer can see it: a response's id
    /// is released there, so a peer that reads the response and reuses
    /// the id at once never finds it still reserved.
    pub(crate) async fn send_then(
        &self,
        frame: Vec<u8>,
        entered: impl FnOnce(),
    ) -> Result<(), Closed> {
        let permit = self
            .budget
            .clone()
            .acquire_many_owned(self.share(&frame))
            .await
            .map_err(|_| Closed)?;
        let slot = self.tx.reserve().await.map_err(|_| Closed)?;
        self.enter(slot, frame, permit, entered);
        Ok(())
    }

    /// Puts `frame` in its reserved place, counted ahead of any straight
    /// write, `entered` run first.
    fn enter(
        &self,
        slot: mpsc::Permit<'_, Outgoing>,
        frame: Vec<u8>,
        bytes: OwnedSemaphorePermit,
        entered: impl FnOnce(),
    ) {
        let _backlog = self.straight.as_ref().map(|s| {
            let mut b = s.lock();
            b.queued += 1;
            b
        });
        entered();
        slot.send(Outgoing {
            frame,
            _bytes: Some(bytes),
        });
    }

    /// Sends a frame without waiting, from any thread: written straight to
    /// the transport when `straight` is asked, the queue lends a descriptor
    /// and nothing is queued before it, else queued if the queue has room
    /// now. `entered` runs as in [`OutputQueue::send_then`], before the
    /// peer can read the frame. Hands the frame back, `entered` not run,
    /// when it could be sent neither way (the queue is full or closed).
    pub(crate) fn try_send_then(
        &self,
        mut frame: Vec<u8>,
        straight: bool,
        entered: impl FnOnce(),
    ) -> Result<(), Vec<u8>> {
        if straight && let Some(s) = &self.straight {
            let mut backlog = s.lock();
            if backlog.queued == 0 && !backlog.failed {
                entered();
                frame.push(b'\n');
                let written = write_now(&*s.out, &frame);
                let written = match written {
                    Ok(n) => n,
                    Err(e) => {
                        tracing::debug!("writing an answer straight to the transport failed: {e}");
                        backlog.failed = true;
                        return Ok(());
                    }
                };
                if written < frame.len() {
                    // The peer is slow: the rest goes first in the queue,
                    // whose writer waits for room (the newline is its).
                    frame.truncate(frame.len() - 1);
                    let rest = frame.split_off(written.min(frame.len()));
                    backlog.queued += 1;
                    if self
                        .tx
                        .try_send(Outgoing {
                            frame: rest,
                            _bytes: None,
                        })
                        .is_err()
                    {
                        // Closed: its writer is gone, as for any frame.
                        backlog.queued -= 1;
                    }
                }
                return Ok(());
            }
        }
        let Ok(permit) = self
            .budget
            .clone()
            .try_acquire_many_owned(self.share(&frame))
        else {
            return Err(frame);
        };
        let Ok(slot) = self.tx.try_reserve() else {
            return Err(frame);
        };
        self.enter(slot, frame, permit, entered);
        Ok(())
    }
}

/// Writes what fits of `bytes` now (0 when nothing does).
fn write_now(out: &dyn Descriptor, bytes: &[u8]) -> std::io::Result<usize> {
    let mut done = 0;
    while done < bytes.len() {
        match out.try_write(bytes.get(done..).unwrap_or_default()) {
            Ok(0) => return Err(std::io::ErrorKind::WriteZero.into()),
            Ok(n) => done += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
            Err(e) => return Err(e),
        }
    }
    Ok(done)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// A peer that takes `room` bytes, then would block (or fails).
    #[derive(Default)]
    struct Peer {
        got: Mutex<Vec<u8>>,
        room: AtomicUsize,
        broken: std::sync::atomic::AtomicBool,
    }

    impl Descriptor for Peer {
        fn try_write(&self, bytes: &[u8]) -> std::io::Result<usize> {
            if self.broken.load(Ordering::Relaxed) {
                return Err(std::io::ErrorKind::BrokenPipe.into());
            }
            let n = bytes.len().min(self.room.load(Ordering::Relaxed));
            if n == 0 {
                return Err(std::io::ErrorKind::WouldBlock.into());
            }
            self.room.fetch_sub(n, Ordering::Relaxed);
            self.got
                .lock()
                .expect("lock")
                .extend_from_slice(&bytes[..n]);
            Ok(n)
        }
    }

    fn queue_to(peer: &Arc<Peer>) -> (OutputQueue, Batches) {
        OutputQueue::lending(peer.clone(), 4, 1024)
    }

    /// What a writer does: takes every queued frame and writes it whole.
    async fn drain(batches: &mut Batches, peer: &Peer) {
        let lines = batches.next().await.expect("a frame is queued");
        peer.got.lock().expect("lock").extend_from_slice(lines);
        batches.written();
    }

    fn text(peer: &Peer) -> String {
        String::from_utf8(peer.got.lock().expect("lock").clone()).expect("utf-8")
    }

    #[tokio::test]
    async fn an_answer_goes_straight_out_only_when_nothing_is_queued_before_it() {
        let peer = Arc::new(Peer::default());
        peer.room.store(usize::MAX, Ordering::Relaxed);
        let (q, mut batches) = queue_to(&peer);
        let mut entered = 0;
        q.try_send_then(b"one".to_vec(), true, || entered += 1)
            .expect("sent");
        assert_eq!(text(&peer), "one\n", "nothing queued: written at once");
        // A queued frame is ahead: the next answer queues behind it.
        q.send(b"two".to_vec()).await.expect("queued");
        q.try_send_then(b"three".to_vec(), true, || entered += 1)
            .expect("sent");
        assert_eq!(text(&peer), "one\n", "nothing overtakes what is queued");
        drain(&mut batches, &peer).await;
        assert_eq!(text(&peer), "one\ntwo\nthree\n");
        // Not asked to go straight: queued although nothing is ahead.
        q.try_send_then(b"four".to_vec(), false, || entered += 1)
            .expect("sent");
        assert_eq!(text(&peer), "one\ntwo\nthree\n");
        drain(&mut batches, &peer).await;
        q.try_send_then(b"five".to_vec(), true, || entered += 1)
            .expect("sent");
        assert_eq!(text(&peer), "one\ntwo\nthree\nfour\nfive\n");
        assert_eq!(entered, 4, "each frame entered once");
    }

    #[tokio::test]
    async fn what_a_full_peer_does_not_take_is_queued_first_and_whole() {
        let peer = Arc::new(Peer::default());
        peer.room.store(5, Ordering::Relaxed);
        let (q, mut batches) = queue_to(&peer);
        q.try_send_then(b"{\"id\":1}".to_vec(), true, || {})
            .expect("sent");
        assert_eq!(text(&peer), "{\"id\"", "what fit was written");
        // The rest is queued, so the next answer waits behind it.
        q.try_send_then(b"{\"id\":2}".to_vec(), true, || {})
            .expect("sent");
        assert_eq!(text(&peer), "{\"id\"");
        drain(&mut batches, &peer).await;
        assert_eq!(text(&peer), "{\"id\":1}\n{\"id\":2}\n");
        // A peer with no room at all: the whole frame is queued.
        let (q, mut batches) = queue_to(&peer);
        peer.got.lock().expect("lock").clear();
        q.try_send_then(b"{\"id\":3}".to_vec(), true, || {})
            .expect("sent");
        assert_eq!(text(&peer), "");
        drain(&mut batches, &peer).await;
        assert_eq!(text(&peer), "{\"id\":3}\n");
    }

    #[tokio::test]
    async fn a_full_queue_hands_the_answer_back_unentered() {
        let peer = Arc::new(Peer::default());
        let (q, mut batches) = queue_to(&peer);
        for _ in 0..4 {
            q.send(b"x".to_vec()).await.expect("room");
        }
        let mut entered = false;
        let back = q.try_send_then(b"late".to_vec(), true, || entered = true);
        assert_eq!(back, Err(b"late".to_vec()), "four frames fill the queue");
        assert!(!entered, "its id is still reserved");
        drain(&mut batches, &peer).await;
        assert!(
            q.try_send_then(b"late".to_vec(), true, || entered = true)
                .is_ok()
        );
        assert!(entered);
    }

    #[tokio::test]
    async fn after_a_failed_straight_write_answers_are_queued_for_the_writer() {
        let peer = Arc::new(Peer::default());
        peer.broken.store(true, Ordering::Relaxed);
        let (q, mut batches) = queue_to(&peer);
        q.try_send_then(b"lost".to_vec(), true, || {})
            .expect("the frame is gone with the peer");
        q.try_send_then(b"next".to_vec(), true, || {})
            .expect("queued");
        assert_eq!(batches.next().await, Some(&b"next\n"[..]), "queued");
    }
}
