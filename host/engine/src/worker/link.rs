//! One live worker as the host's callers see it: the channel's writer,
//! the calls waiting for a reply, and the worker's process id for a kill.
//! Once the worker is gone every waiting call is told why, exactly once;
//! a link is never revived (a restarted worker gets a new one).

use std::collections::HashMap;
use std::os::unix::net::UnixStream;
use std::sync::mpsc::SyncSender;
use std::sync::{Mutex, MutexGuard};

use serde::Serialize;

use super::frame::{FrameError, Kind, write_frame};
use super::message::Outcome;

/// What a waiting call receives: the reply and its raw bytes, or why the
/// worker is gone.
pub(super) type Delivery = Result<(Outcome, Vec<u8>), WorkerDown>;

/// Why no worker answers a call.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(super) enum WorkerDown {
    /// The first worker has not answered its handshake yet.
    #[error("its worker is starting")]
    Starting,
    /// The worker ended and its successor is not up yet.
    #[error("its worker is restarting")]
    Restarting,
    /// The host is stopping its workers.
    #[error("the host is shutting down")]
    ShuttingDown,
    /// Starting a successor failed (the start error, as text).
    #[error("its worker could not be restarted: {0}")]
    RestartFailed(String),
    /// The worker process ended: how, with its last output lines.
    #[error("{0}")]
    Died(String),
    /// The channel closed before the call's reply arrived.
    #[error("the worker's channel closed")]
    ChannelClosed,
    /// The host killed the worker for this call (deadline or cancellation
    /// plus grace passed).
    #[error("the host killed it: {0}")]
    Killed(String),
}

impl WorkerDown {
    /// What happened, in a few words without the worker's output (for
    /// listings that must stay short).
    pub(super) fn summary(&self) -> &'static str {
        match self {
            WorkerDown::Starting => "its worker is starting",
            WorkerDown::Restarting => "its worker is restarting",
            WorkerDown::ShuttingDown => "the host is shutting down",
            WorkerDown::RestartFailed(_) => "its worker could not be restarted",
            WorkerDown::Died(_) => "its worker died",
            WorkerDown::ChannelClosed => "its worker's channel closed",
            WorkerDown::Killed(_) => "its worker was killed",
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// A worker that answered its handshake.
#[derive(Debug)]
pub(super) struct Link {
    pid: u32,
    writer: Mutex<UnixStream>,
    /// Waiting calls; `None` once the worker is gone.
    pending: Mutex<Option<HashMap<u64, SyncSender<Delivery>>>>,
    /// Whether the process may still be signalled (not yet reaped), and
    /// why the host killed it, if it did.
    alive: Mutex<(bool, Option<String>)>,
}

impl Link {
    pub(super) fn new(pid: u32, writer: UnixStream) -> Self {
        Self {
            pid,
            writer: Mutex::new(writer),
            pending: Mutex::new(Some(HashMap::new())),
            alive: Mutex::new((true, None)),
        }
    }

    pub(super) fn pid(&self) -> u32 {
        self.pid
    }

    /// Registers call `id`; false when the worker is already gone.
    pub(super) fn register(&self, id: u64, tx: SyncSender<Delivery>) -> bool {
        match lock(&self.pending).as_mut() {
            Some(map) => {
                map.insert(id, tx);
                true
            }
            None => false,
        }
    }

    /// Forgets call `id` (its caller stopped waiting).
    pub(super) fn unregister(&self, id: u64) {
        if let Some(map) = lock(&self.pending).as_mut() {
            map.remove(&id);
        }
    }

    /// Hands a reply to its waiting call, if it still waits.
    pub(super) fn deliver(&self, id: u64, outcome: Outcome, bytes: Vec<u8>) {
        let tx = lock(&self.pending).as_mut().and_then(|m| m.remove(&id));
        if let Some(tx) = tx {
            let _ = tx.try_send(Ok((outcome, bytes)));
        }
    }

    /// The worker is gone: every waiting call gets `reason`; later
    /// registrations are refused.
    pub(super) fn fail_all(&self, reason: &WorkerDown) -> usize {
        let waiting = lock(&self.pending).take().unwrap_or_default();
        let n = waiting.len();
        for (_, tx) in waiting {
            let _ = tx.try_send(Err(reason.clone()));
        }
        n
    }

    /// Writes one frame with a JSON header.
    pub(super) fn send<T: Serialize>(&self, kind: Kind, header: &T) -> Result<(), FrameError> {
        let json = serde_json::to_vec(header)
            .map_err(|_| FrameError::Malformed("the header does not serialize"))?;
        let mut w = lock(&self.writer);
        write_frame(&mut *w, kind, &json, &[])
    }

    /// Kills the worker (SIGKILL) unless it was already reaped; `why` is
    /// kept for the crash report.
    pub(super) fn kill(&self, why: &str) {
        let mut alive = lock(&self.alive);
        if !alive.0 {
            return;
        }
        if alive.1.is_none() {
            alive.1 = Some(why.to_owned());
        }
        // `pid` is our own child, not yet reaped (checked under the lock the
        // reaper takes first), so the id cannot have been reused.
        if let Err(e) = devicerail_host_sys::kill(self.pid) {
            tracing::debug!(pid = self.pid, "could not kill the worker: {e}");
        }
    }

    /// The process is about to be reaped: no more signals. Returns why the
    /// host killed it, if it did.
    pub(super) fn mark_reaped(&self) -> Option<String> {
        let mut alive = lock(&self.alive);
        alive.0 = false;
        alive.1.take()
    }
}
