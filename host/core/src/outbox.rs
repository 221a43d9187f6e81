//! Output queues: what a connection has to send, bounded in frames *and*
//! bytes. Connections (state) put frames in; a transport's writer takes
//! them out. A peer that does not read stops being fed once its queue is
//! full: senders wait, which stops its connection being read.

use std::sync::Arc;

use tokio::sync::{OwnedSemaphorePermit, Semaphore, mpsc};

/// One queued output frame with the share of the byte budget it holds
/// until it is written.
#[derive(Debug)]
pub(crate) struct Outgoing {
    pub frame: Vec<u8>,
    _bytes: Option<OwnedSemaphorePermit>,
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
        };
        (queue, rx)
    }

    /// Queues a frame, waiting while the queue is full.
    pub(crate) async fn send(&self, frame: Vec<u8>) -> Result<(), Closed> {
        self.send_then(frame, || {}).await
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
        // A frame larger than the whole budget takes all of it.
        let share = u32::try_from(frame.len().clamp(1, self.bytes)).unwrap_or(u32::MAX);
        let permit = self
            .budget
            .clone()
            .acquire_many_owned(share)
            .await
            .map_err(|_| Closed)?;
        let slot = self.tx.reserve().await.map_err(|_| Closed)?;
        entered();
        slot.send(Outgoing {
            frame,
            _bytes: Some(permit),
        });
        Ok(())
    }
}
