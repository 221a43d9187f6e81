//! One live worker as the host's callers see it: the channel (sends from
//! any thread or task, one message each, no lock), the calls waiting for a
//! reply, the arena replies come through, and the worker's process id for
//! a kill. Once the worker is gone every waiting call is told why, exactly
//! once; a link is never revived (a restarted worker gets a new one).
//!
//! Replies are read by [`Link::read_replies`] (a thread) or
//! [`Link::read_replies_async`] (a task on the host's runtime, woken by its
//! reactor: no thread of its own and no hand-off to the waiting task,
//! which runs on the same thread next). A link on the runtime also has the
//! worker's rings (`ring`): calls go there first and replies come from
//! there and the socket alike.

use std::collections::HashMap;
use std::sync::mpsc::SyncSender;
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use devicerail_host_sys::doorbell::{self, EventDoorbell};
use devicerail_host_sys::packet::PacketSocket;
use serde::Serialize;
use tokio::io::unix::AsyncFd;
use tokio::sync::oneshot;

use super::channel::{self, HostArena, Outgoing};
use super::frame::{Frame, FrameError, Kind};
use super::message::{Outcome, Reply};
use super::ring::HostRings;

/// What a waiting call receives: the reply and its byte parts, or why the
/// worker is gone.
pub(crate) type Delivery = Result<(Outcome, Vec<Vec<u8>>), WorkerDown>;

/// How long one send to a worker may wait for room.
pub(crate) const WRITE_TIMEOUT: Duration = Duration::from_secs(10);

/// Why no worker answers a call.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum WorkerDown {
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
    /// The health a listing shows for it.
    pub(super) fn health(&self) -> devicerail_host_protocol::lab::WorkerHealth {
        use devicerail_host_protocol::lab::WorkerHealth;
        match self {
            WorkerDown::Starting | WorkerDown::Restarting => WorkerHealth::Restarting,
            WorkerDown::ShuttingDown => WorkerHealth::Stopping,
            WorkerDown::RestartFailed(_)
            | WorkerDown::Died(_)
            | WorkerDown::ChannelClosed
            | WorkerDown::Killed(_) => WorkerHealth::Crashed,
        }
    }

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

/// Where a waiting call wants its reply.
#[derive(Debug)]
pub(crate) enum Waiter {
    /// A blocking caller (an executor thread).
    Sync(SyncSender<Delivery>),
    /// An async caller (a task).
    Async(oneshot::Sender<Delivery>),
}

impl Waiter {
    fn give(self, d: Delivery) {
        match self {
            Self::Sync(tx) => {
                let _ = tx.try_send(d);
            }
            Self::Async(tx) => {
                let _ = tx.send(d);
            }
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// The channel, registered with the host's runtime when it has one.
#[derive(Debug)]
enum Socket {
    Plain(PacketSocket),
    Async(AsyncFd<PacketSocket>),
}

impl Socket {
    fn get(&self) -> &PacketSocket {
        match self {
            Self::Plain(s) => s,
            Self::Async(a) => a.get_ref(),
        }
    }
}

/// The worker's rings and their reply doorbell, registered with the
/// host's reactor.
#[derive(Debug)]
struct Rings {
    rings: HostRings,
    bell: AsyncFd<EventDoorbell>,
}

/// A worker that answered its handshake.
#[derive(Debug)]
pub(super) struct Link {
    pid: u32,
    socket: Socket,
    arena: HostArena,
    /// Only on a link registered with a runtime.
    rings: Option<Rings>,
    /// Waiting calls; `None` once the worker is gone.
    pending: Mutex<Option<HashMap<u64, Waiter>>>,
    /// Whether the process may still be signalled (not yet reaped), and
    /// why the host killed it, if it did.
    alive: Mutex<(bool, Option<String>)>,
}

impl Link {
    /// A link over `socket` (non-blocking), registered with `runtime`'s
    /// reactor when there is one, with the worker's `rings` (only with a
    /// runtime: their doorbell is waited on by its reactor).
    pub(super) fn new(
        pid: u32,
        socket: PacketSocket,
        arena: HostArena,
        rings: Option<HostRings>,
        runtime: Option<&tokio::runtime::Handle>,
    ) -> std::io::Result<Self> {
        socket.set_nonblocking(true)?;
        let (socket, rings) = match runtime {
            Some(rt) => {
                let _entered = rt.enter();
                let rings = match rings {
                    Some(rings) => {
                        let fd = std::os::fd::AsFd::as_fd(rings.bell()).try_clone_to_owned()?;
                        let bell = doorbell::register(EventDoorbell::adopt(fd)?)?;
                        Some(Rings { rings, bell })
                    }
                    None => None,
                };
                (
                    Socket::Async(devicerail_host_sys::packet::register(socket)?),
                    rings,
                )
            }
            None if rings.is_some() => {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::InvalidInput,
                    "rings need the host's runtime to wait on their doorbell",
                ));
            }
            None => (Socket::Plain(socket), None),
        };
        Ok(Self {
            pid,
            socket,
            arena,
            rings,
            pending: Mutex::new(Some(HashMap::new())),
            alive: Mutex::new((true, None)),
        })
    }

    pub(super) fn pid(&self) -> u32 {
        self.pid
    }

    /// Whether replies are read by a task on the host's runtime.
    pub(super) fn is_async(&self) -> bool {
        matches!(self.socket, Socket::Async(_))
    }

    /// Registers call `id`; false when the worker is already gone.
    pub(super) fn register(&self, id: u64, waiter: Waiter) -> bool {
        match lock(&self.pending).as_mut() {
            Some(map) => {
                map.insert(id, waiter);
                true
            }
            None => false,
        }
    }

    /// Forgets call `id` (its caller stopped waiting).
    /// How many calls wait for a reply on this worker.
    pub(super) fn in_flight(&self) -> usize {
        lock(&self.pending).as_ref().map_or(0, HashMap::len)
    }

    pub(super) fn unregister(&self, id: u64) {
        if let Some(map) = lock(&self.pending).as_mut() {
            map.remove(&id);
        }
    }

    /// Hands a reply to its waiting call, if it still waits.
    pub(super) fn deliver(&self, id: u64, outcome: Outcome, parts: Vec<Vec<u8>>) {
        let waiter = lock(&self.pending).as_mut().and_then(|m| m.remove(&id));
        if let Some(w) = waiter {
            w.give(Ok((outcome, parts)));
        }
    }

    /// The worker is gone: every waiting call gets `reason`; later
    /// registrations are refused.
    pub(super) fn fail_all(&self, reason: &WorkerDown) -> usize {
        let waiting = lock(&self.pending).take().unwrap_or_default();
        let n = waiting.len();
        for (_, w) in waiting {
            w.give(Err(reason.clone()));
        }
        n
    }

    fn outgoing<'a, T: Serialize>(
        kind: Kind,
        header: &T,
        json: &'a mut Vec<u8>,
    ) -> Result<Outgoing<'a>, FrameError> {
        *json = channel::header_json(header)?;
        let json: &'a Vec<u8> = json;
        Outgoing::new(kind, json, &[], None, Vec::new())
    }

    /// Puts `out` in the call ring when the link has rings, the message
    /// fits and there is room: `true` when it did. A ring the worker broke
    /// kills it.
    fn ringed(&self, out: &Outgoing<'_>) -> Result<bool, FrameError> {
        let (Some(r), Some(pieces)) = (&self.rings, out.pieces()) else {
            return Ok(false);
        };
        r.rings.push_call(&pieces).map_err(|e| {
            self.kill(&format!("it broke its call ring: {e}"));
            FrameError::Malformed("the worker broke its call ring")
        })
    }

    /// Sends one frame with a JSON header, waiting at most
    /// [`WRITE_TIMEOUT`] for room (a blocking caller).
    pub(super) fn send<T: Serialize>(&self, kind: Kind, header: &T) -> Result<(), FrameError> {
        let mut json = Vec::new();
        let out = Self::outgoing(kind, header, &mut json)?;
        if self.ringed(&out)? {
            return Ok(());
        }
        channel::send_within(self.socket.get(), &out, WRITE_TIMEOUT)
    }

    /// Sends one frame with a JSON header if there is room right now (a
    /// best-effort notice, such as a cancellation).
    pub(super) fn try_send<T: Serialize>(&self, kind: Kind, header: &T) -> Result<(), FrameError> {
        let mut json = Vec::new();
        let out = Self::outgoing(kind, header, &mut json)?;
        if self.ringed(&out)? {
            return Ok(());
        }
        out.send(self.socket.get())
    }

    /// [`Link::send`] for an async caller: waits for room on the runtime.
    pub(super) async fn send_async<T: Serialize>(
        &self,
        kind: Kind,
        header: &T,
    ) -> Result<(), FrameError> {
        let mut json = Vec::new();
        let out = Self::outgoing(kind, header, &mut json)?;
        if self.ringed(&out)? {
            return Ok(());
        }
        match &self.socket {
            Socket::Plain(s) => channel::send_within(s, &out, WRITE_TIMEOUT),
            Socket::Async(a) => {
                let wait = async {
                    loop {
                        match out.send(a.get_ref()) {
                            Err(e) if e.would_block() => {
                                let mut ready = a.writable().await?;
                                ready.clear_ready();
                            }
                            other => return other,
                        }
                    }
                };
                tokio::time::timeout(WRITE_TIMEOUT, wait)
                    .await
                    .unwrap_or_else(|_| Err(FrameError::Io(std::io::ErrorKind::TimedOut.into())))
            }
        }
    }

    /// Handles one frame from the worker; `false` when the worker broke
    /// the protocol (it was killed).
    fn handle(&self, frame: Frame, plugin: &str) -> bool {
        if frame.kind != Kind::Reply {
            tracing::error!(plugin, "the worker sent a frame out of turn; killing it");
            self.kill("it sent a frame out of turn");
            return false;
        }
        match serde_json::from_slice::<Reply>(&frame.header) {
            Ok(reply) => {
                self.deliver(reply.id, reply.outcome, frame.parts);
                true
            }
            Err(e) => {
                tracing::error!(
                    plugin,
                    "the worker sent an unreadable reply ({e}); killing it"
                );
                self.kill("it sent an unreadable reply");
                false
            }
        }
    }

    fn ended(&self, e: FrameError) -> String {
        match e {
            FrameError::Closed => "its channel closed".into(),
            e => {
                self.kill(&format!("its channel broke: {e}"));
                e.to_string()
            }
        }
    }

    /// Reads replies on this thread until the worker's channel ends;
    /// returns why it ended.
    pub(super) fn read_replies(&self, plugin: &str) -> String {
        let mut buf = channel::buffer();
        loop {
            let frame = channel::receive(self.socket.get(), &mut buf, Some(&self.arena), None);
            if let Some(why) = self.take(frame, plugin) {
                return why;
            }
        }
    }

    /// Handles every reply waiting in the ring; `Some(why)` when the
    /// worker broke the ring or the protocol (it was killed).
    fn drain_ring(&self, rings: &Rings, buf: &mut [u8], plugin: &str) -> Option<String> {
        loop {
            let len = match rings.rings.pop_reply(buf) {
                Ok(Some(len)) => len,
                Ok(None) => return None,
                Err(e) => {
                    tracing::error!(plugin, "the worker broke its reply ring ({e}); killing it");
                    self.kill(&format!("it broke its reply ring: {e}"));
                    return Some(format!("it broke its reply ring: {e}"));
                }
            };
            let frame = channel::decode_record(&buf[..len], Some(&self.arena));
            if let Some(why) = self.take(frame, plugin) {
                return Some(why);
            }
        }
    }

    /// Handles one decoded message; `Some(why)` when it broke the channel
    /// or the protocol (the worker was killed).
    fn take(&self, frame: Result<Frame, FrameError>, plugin: &str) -> Option<String> {
        match frame {
            Ok(f) => (!self.handle(f, plugin)).then(|| "it broke the protocol".into()),
            Err(e) => Some(self.ended(e)),
        }
    }

    /// Handles every message waiting on the socket; `Some(why)` when the
    /// channel ended or the worker broke the protocol, `None` when the
    /// socket has nothing more now.
    fn drain_socket(&self, socket: &PacketSocket, buf: &mut [u8], plugin: &str) -> Option<String> {
        loop {
            match channel::recv(socket, buf) {
                Ok(r) => {
                    let frame = channel::decode(&buf[..r.len], r, Some(&self.arena));
                    if let Some(why) = self.take(frame, plugin) {
                        return Some(why);
                    }
                }
                Err(e) if e.would_block() => return None,
                Err(e) => return Some(self.ended(e)),
            }
        }
    }

    /// Reads replies as a task on the host's runtime until the worker's
    /// channel ends (each wake drains every queued reply, from the ring and
    /// the socket); returns why it ended. A link without a runtime reads on
    /// the calling thread.
    pub(super) async fn read_replies_async(&self, plugin: &str) -> String {
        let Socket::Async(a) = &self.socket else {
            return self.read_replies(plugin);
        };
        let mut buf = channel::buffer();
        loop {
            let Some(rings) = &self.rings else {
                let mut ready = match a.readable().await {
                    Ok(r) => r,
                    Err(e) => return self.ended(FrameError::Io(e)),
                };
                if let Some(why) = self.drain_socket(a.get_ref(), &mut buf, plugin) {
                    return why;
                }
                ready.clear_ready();
                continue;
            };
            if let Some(why) = self.drain_ring(rings, &mut buf, plugin) {
                return why;
            }
            if !rings.rings.sleep() {
                continue;
            }
            tokio::select! {
                ready = a.readable() => {
                    let mut ready = match ready {
                        Ok(r) => r,
                        Err(e) => return self.ended(FrameError::Io(e)),
                    };
                    rings.rings.woke();
                    if let Some(why) = self.drain_socket(a.get_ref(), &mut buf, plugin) {
                        // Replies the worker put in the ring before it
                        // ended still reach their callers.
                        if let Some(broke) = self.drain_ring(rings, &mut buf, plugin) {
                            return broke;
                        }
                        return why;
                    }
                    ready.clear_ready();
                }
                ready = rings.bell.readable() => {
                    match ready {
                        // Cleared before the ring is looked at: a ring after
                        // this is a new edge.
                        Ok(mut r) => r.clear_ready(),
                        Err(e) => return self.ended(FrameError::Io(e)),
                    }
                    rings.rings.woke();
                }
            }
        }
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
