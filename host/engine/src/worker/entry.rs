//! Inside the worker process (`devicerail plugin-worker`, hidden): arm the
//! parent-death signal, take the channel descriptor, open one plugin
//! library through the stable-ABI loader and report its manifest (or why
//! it was refused), initialize it with the settings the host then sends,
//! and serve calls until the host closes the channel. Calls come through
//! the call ring the host passed (`ring`) or, when a ring cannot take one,
//! the socket, whose thread queues it for the others; every idle thread
//! sleeps on the ring's futex word, the one woken runs the call and sends
//! the reply itself (through the reply ring, large parts through the
//! arena; through the socket when the ring has no room or descriptors
//! travel). The worker never writes to its stdout (plugin code may; the
//! host forwards it to its log) and never touches any other descriptor of
//! the host's.

use std::collections::{BTreeSet, HashMap, VecDeque};
use std::os::fd::RawFd;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use devicerail_host_plugin_api::loader::{self, LoadError, LoadedPlugin};
use devicerail_host_plugin_api::{CallContext, Driver, DriverError, DriverResult, LoadPurpose};
use serde::Serialize;
use serde_json::value::RawValue;

use devicerail_host_sys::packet::PacketSocket;

use super::channel::{self, Outgoing, WorkerArena};
use super::environment;
use super::frame::{Frame, FrameError, Kind};
use super::message::{
    ActedWire, Call, Cancel, Init, Method, ObservedWire, Opened, Outcome, Part, Ready, Reply,
};
use super::ring::WorkerRings;

/// The worker's command line.
#[derive(Debug, Clone)]
pub struct WorkerArgs {
    /// The channel's descriptor.
    pub fd: RawFd,
    /// The plugin library.
    pub plugin: PathBuf,
    /// The host's process id: the worker exits if it is not its parent.
    pub parent: u32,
}

/// Why the worker stopped serving.
#[derive(Debug, thiserror::Error)]
pub enum WorkerError {
    /// The process that started the worker (this pid) is no longer its
    /// parent: the host died before the worker could tie itself to it.
    #[error("the host (pid {0}) is gone; refusing to run orphaned")]
    Orphaned(u32),
    /// The signal that kills the worker with its parent could not be set.
    #[error("cannot arm the parent-death signal: {0}")]
    DeathSignal(std::io::Error),
    /// The descriptor named on the command line is not an open socket.
    #[error("descriptor {0} is not a socket")]
    NotASocket(RawFd),
    /// Reading or writing the channel failed, or the host broke its
    /// framing.
    #[error("the host's channel failed: {0}")]
    Channel(#[from] FrameError),
    /// A frame's JSON header is not the message its kind announces.
    #[error("the host sent an unreadable {what}: {source}")]
    BadHeader {
        /// Which message it was meant to be (`init`, `call`, `cancel`).
        what: &'static str,
        /// Why it does not parse.
        source: serde_json::Error,
    },
    /// Setting up the channel's socket failed.
    #[error("channel setup failed: {0}")]
    Io(#[from] std::io::Error),
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// Dies with the host: SIGKILL when the parent goes, and a check that the
/// parent is still the host once the signal is armed.
fn tie_to_parent(parent: u32) -> Result<(), WorkerError> {
    if !devicerail_host_sys::die_with_parent(parent).map_err(WorkerError::DeathSignal)? {
        return Err(WorkerError::Orphaned(parent));
    }
    Ok(())
}

/// The channel on `fd`, made close-on-exec so processes the plugin starts
/// do not inherit it.
fn channel(fd: RawFd) -> Result<PacketSocket, WorkerError> {
    PacketSocket::inherit(fd).map_err(|_| WorkerError::NotASocket(fd))
}

/// Sends one handshake frame (blocking until there is room).
fn send<T: Serialize>(socket: &PacketSocket, kind: Kind, header: &T) -> Result<(), FrameError> {
    let json = channel::header_json(header)?;
    Outgoing::new(kind, &json, &[], None, Vec::new())?.send(socket)
}

/// Receives one frame (blocking).
fn receive(socket: &PacketSocket, buf: &mut [u8]) -> Result<Frame, FrameError> {
    channel::receive(socket, buf, None, None)
}

/// Threads serving calls at most.
const MAX_THREADS: usize = 64;
/// Cancellations kept for calls not seen yet (a cancel may overtake its
/// call when one went through the ring and the other through the socket).
const EARLY_CANCELS: usize = 1024;

/// Calls running, for `cancel`, and cancellations that came first.
#[derive(Default)]
struct Calls {
    running: HashMap<u64, CallContext>,
    early: BTreeSet<u64>,
}

impl Calls {
    /// Call `id` starts with `ctx`, cancelled at once if its cancellation
    /// came first.
    fn start(&mut self, id: u64, ctx: &CallContext) {
        if self.early.remove(&id) {
            ctx.cancel();
        }
        self.running.insert(id, ctx.clone());
    }

    /// Call `id` returned.
    fn end(&mut self, id: u64) {
        self.running.remove(&id);
    }

    /// Cancels call `id`, or keeps the cancellation for when it arrives
    /// (the oldest kept one is dropped past [`EARLY_CANCELS`]).
    fn cancel(&mut self, id: u64) {
        if let Some(ctx) = self.running.get(&id) {
            ctx.cancel();
        } else {
            self.early.insert(id);
            if self.early.len() > EARLY_CANCELS {
                self.early.pop_first();
            }
        }
    }
}

/// The serving threads' shared state. Idle threads sleep on the rings'
/// futex word; the one woken takes a call (ring or queue), runs it and
/// replies itself, so a call costs no hand-off within the worker and never
/// waits for another call.
struct Server {
    socket: PacketSocket,
    arena: Option<WorkerArena>,
    rings: WorkerRings,
    /// Calls and cancellations that came through the socket.
    queue: Mutex<VecDeque<Frame>>,
    driver: Arc<LoadedPlugin>,
    calls: Mutex<Calls>,
    /// Threads not running a call.
    idle: AtomicUsize,
    /// Serving threads.
    threads: AtomicUsize,
}

/// Starts one more serving thread (up to [`MAX_THREADS`]).
fn spawn_server(server: &Arc<Server>) {
    if server.threads.fetch_add(1, Ordering::AcqRel) >= MAX_THREADS {
        server.threads.fetch_sub(1, Ordering::AcqRel);
        return;
    }
    server.idle.fetch_add(1, Ordering::AcqRel);
    let s = server.clone();
    let spawned = std::thread::Builder::new()
        .name("plugin-call".into())
        .spawn(move || serve_loop(&s));
    if let Err(e) = spawned {
        server.idle.fetch_sub(1, Ordering::AcqRel);
        server.threads.fetch_sub(1, Ordering::AcqRel);
        tracing::error!("cannot start a thread for calls: {e}");
    }
}

/// Ends the worker: the host closed the channel, or broke the protocol.
fn finish(result: Result<(), WorkerError>) -> ! {
    match result {
        Ok(()) => std::process::exit(0),
        Err(e) => {
            tracing::error!("plugin worker: {e}");
            std::process::exit(1)
        }
    }
}

/// The socket's thread: queues what comes through it for the serving
/// threads, and ends the worker when the host closes the channel.
fn socket_loop(server: &Arc<Server>) -> ! {
    let mut buf = channel::buffer();
    loop {
        let frame = match receive(&server.socket, &mut buf) {
            Ok(f) => f,
            Err(FrameError::Closed) => finish(Ok(())),
            Err(e) => finish(Err(e.into())),
        };
        match frame.kind {
            Kind::Call | Kind::Cancel => {
                lock(&server.queue).push_back(frame);
                server.rings.nudge();
            }
            _ => finish(Err(FrameError::Malformed("a frame out of turn").into())),
        }
    }
}

/// The next call or cancellation: from the socket's queue, else the ring.
fn next_frame(server: &Server, buf: &mut [u8]) -> Option<Frame> {
    if let Some(f) = lock(&server.queue).pop_front() {
        return Some(f);
    }
    let len = match server.rings.pop_call(buf) {
        Ok(Some(len)) => len,
        Ok(None) => return None,
        Err(e) => finish(Err(FrameError::from(e).into())),
    };
    match channel::decode_record(&buf[..len], None) {
        Ok(f) => Some(f),
        Err(e) => finish(Err(e.into())),
    }
}

fn serve_loop(server: &Arc<Server>) -> ! {
    let mut buf = channel::buffer();
    loop {
        let seen = server.rings.seq();
        match next_frame(server, &mut buf) {
            Some(frame) => serve_frame(server, frame),
            None => server.rings.idle(seen, || {
                !lock(&server.queue).is_empty() || server.rings.calls_pending()
            }),
        }
    }
}

/// Sends one reply: through the reply ring when it fits, else the socket.
fn reply(server: &Server, header: &Reply, parts: &[&[u8]]) -> Result<(), FrameError> {
    let json = channel::header_json(header)?;
    let out = Outgoing::new(Kind::Reply, &json, parts, server.arena.as_ref(), Vec::new())?;
    if let Some(pieces) = out.pieces()
        && server.rings.push_reply(&pieces)?
    {
        return Ok(());
    }
    out.send(&server.socket)
}

fn serve_frame(server: &Arc<Server>, frame: Frame) {
    match frame.kind {
        Kind::Call => {
            let call: Call = match serde_json::from_slice(&frame.header) {
                Ok(c) => c,
                Err(source) => finish(Err(WorkerError::BadHeader {
                    what: "call",
                    source,
                })),
            };
            let deadline = call
                .budget_us
                .and_then(|us| Instant::now().checked_add(Duration::from_micros(us)));
            let ctx = CallContext::for_call(deadline, call.observation_id, call.request_id);
            lock(&server.calls).start(call.id, &ctx);
            // Someone must keep taking calls while this thread is busy.
            if server.idle.fetch_sub(1, Ordering::AcqRel) == 1 {
                spawn_server(server);
            }
            let (outcome, parts) = serve_call(&server.driver, &ctx, call.method);
            lock(&server.calls).end(call.id);
            let header = Reply {
                id: call.id,
                outcome,
            };
            let parts: Vec<&[u8]> = parts.iter().map(Part::bytes).collect();
            let sent = reply(server, &header, &parts);
            // A result the channel cannot carry is answered with why, so the
            // host's caller never waits for a reply that will not come.
            let sent = match sent {
                Err(e @ FrameError::TooLarge { .. }) => {
                    let refused = Reply {
                        id: call.id,
                        outcome: Outcome::Err(DriverError::new(
                            devicerail_host_protocol::ErrorCode::ResponseFrameTooLarge,
                            format!("the driver's result cannot cross to the host: {e}"),
                        )),
                    };
                    reply(server, &refused, &[])
                }
                other => other,
            };
            if let Err(e) = sent {
                tracing::warn!("cannot send a reply to the host: {e}");
            }
            server.idle.fetch_add(1, Ordering::AcqRel);
        }
        Kind::Cancel => {
            let cancel: Cancel = match serde_json::from_slice(&frame.header) {
                Ok(c) => c,
                Err(source) => finish(Err(WorkerError::BadHeader {
                    what: "cancel",
                    source,
                })),
            };
            lock(&server.calls).cancel(cancel.id);
        }
        _ => finish(Err(FrameError::Malformed("a frame out of turn").into())),
    }
}

/// `v` as JSON text, typed straight to text (no `Value` tree).
fn to_raw<T: Serialize>(v: &T) -> DriverResult<Box<RawValue>> {
    serde_json::value::to_raw_value(v)
        .map_err(|e| DriverError::failure(format!("could not serialize driver output: {e}")))
}

/// Runs one call on the driver: the result's JSON and the byte parts it
/// refers to. An observation's JSON text and PNG stay in the buffers the
/// driver filled and cross unread; the host decodes them.
fn serve_call(driver: &LoadedPlugin, ctx: &CallContext, method: Method) -> (Outcome, Vec<Part>) {
    let mut parts = Vec::new();
    let result: DriverResult<Box<RawValue>> = (|| match method {
        Method::ListDevices => to_raw(&driver.list_devices(ctx)?),
        Method::Connect { device } => to_raw(&driver.connect(ctx, &device)?),
        Method::Disconnect { device } => to_raw(&driver.disconnect(ctx, &device)?),
        Method::Health { device } => to_raw(&driver.health(ctx, &device)?),
        Method::Capabilities { device } => to_raw(&driver.capabilities(ctx, &device)?),
        Method::Observe { device, request } => {
            let obs = driver.observe_encoded(ctx, &device, &request)?;
            to_raw(&ObservedWire::split(obs, &mut parts))
        }
        Method::Execute { device, call } => {
            let out = driver.execute_encoded(ctx, &device, &call)?;
            to_raw(&ActedWire::split(out, &mut parts))
        }
        Method::Doctor => to_raw(&driver.doctor()),
    })();
    match result {
        Ok(v) => (Outcome::Ok(v), parts),
        Err(e) => (Outcome::Err(e), Vec::new()),
    }
}

fn ready_failure(e: &LoadError) -> Ready {
    match e {
        LoadError::SettingRefused { setting, message } => Ready::Failed {
            message: message.clone(),
            setting: Some(setting.clone()),
        },
        other => Ready::Failed {
            message: other.to_string(),
            setting: None,
        },
    }
}

/// Opens the plugin library (its load-time code runs here, never in the
/// host), reports its manifest, then initializes it with the settings the
/// host sends and serves until the host closes the channel (then the
/// process exits). A host that only wanted the manifest closes the channel
/// right after `Opened`; the worker then exits without initializing.
pub fn run(args: &WorkerArgs) -> Result<(), WorkerError> {
    tie_to_parent(args.parent)?;
    let socket = channel(args.fd)?;
    let opened = match loader::open(&args.plugin) {
        Ok(o) => o,
        Err(e) => {
            let refused = Opened::Refused {
                reason: e.to_string(),
            };
            send(&socket, Kind::Opened, &refused)?;
            return Ok(());
        }
    };
    let manifest = opened.manifest().clone();
    send(&socket, Kind::Opened, &Opened::Ok { manifest })?;
    let mut buf = channel::buffer();
    let frame = match receive(&socket, &mut buf) {
        Ok(f) => f,
        // The host wanted the manifest only.
        Err(FrameError::Closed) => return Ok(()),
        Err(e) => return Err(e.into()),
    };
    if frame.kind != Kind::Init {
        return Err(FrameError::Malformed("init was expected").into());
    }
    let init: Init =
        serde_json::from_slice(&frame.header).map_err(|source| WorkerError::BadHeader {
            what: "init",
            source,
        })?;
    // The arena the host created for this worker's large reply parts, then
    // the rings' memory and the host's reply doorbell.
    let mut fds = frame.fds.into_iter();
    let arena = match fds.next() {
        Some(fd) => Some(WorkerArena::map(fd)?),
        None => None,
    };
    let rings = match (fds.next(), fds.next()) {
        (Some(region), Some(bell)) => WorkerRings::map(region, bell)?,
        _ => WorkerRings::local()?,
    };
    let purpose = LoadPurpose::from_ffi(&init.purpose);
    // The plugin's `env` table (checked by the host: no credentials),
    // set while this worker still runs one thread.
    let env_set = init
        .env
        .iter()
        .find(|(k, _)| environment::is_credential(k))
        .map(|(k, _)| {
            Err(format!(
                "the host sent credential {k} in the plugin's environment"
            ))
        })
        .unwrap_or_else(|| {
            devicerail_host_sys::set_env_single_threaded(&init.env)
                .map_err(|e| format!("cannot set the plugin's env table: {e}"))
        });
    if let Err(message) = env_set {
        let failed = Ready::Failed {
            message,
            setting: Some("env".into()),
        };
        send(&socket, Kind::Ready, &failed)?;
        return Ok(());
    }
    let loaded = if opened.manifest().id == init.plugin_id {
        opened.init(&init.settings, purpose)
    } else {
        Err(LoadError::BadManifest(format!(
            "the library declares plugin id {:?}, not {:?}",
            opened.manifest().id,
            init.plugin_id
        )))
    };
    let driver = match loaded {
        Ok(d) => Arc::new(d),
        Err(e) => {
            send(&socket, Kind::Ready, &ready_failure(&e))?;
            return Ok(());
        }
    };
    send(
        &socket,
        Kind::Ready,
        &Ready::Ok {
            pid: std::process::id(),
        },
    )?;
    let server = Arc::new(Server {
        socket,
        arena,
        rings,
        queue: Mutex::new(VecDeque::new()),
        driver,
        calls: Mutex::new(Calls::default()),
        idle: AtomicUsize::new(0),
        threads: AtomicUsize::new(0),
    });
    spawn_server(&server);
    socket_loop(&server)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cancellation_that_overtakes_its_call_cancels_it_on_arrival() {
        let mut calls = Calls::default();
        let running = CallContext::new(None);
        calls.start(1, &running);
        calls.cancel(1);
        assert!(running.is_cancelled());
        // Call 2's cancellation came through the ring before the call
        // itself came through the socket.
        calls.cancel(2);
        let late = CallContext::new(None);
        calls.start(2, &late);
        assert!(late.is_cancelled());
        let other = CallContext::new(None);
        calls.start(3, &other);
        assert!(!other.is_cancelled());
        // Kept cancellations are bounded.
        for id in 100..100 + 2 * EARLY_CANCELS as u64 {
            calls.cancel(id);
        }
        assert_eq!(calls.early.len(), EARLY_CANCELS);
    }
}
