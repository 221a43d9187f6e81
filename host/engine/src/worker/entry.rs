//! Inside the worker process (`devicerail plugin-worker`, hidden): arm the
//! parent-death signal, take the channel descriptor, open one plugin
//! library through the stable-ABI loader and report its manifest (or why
//! it was refused), initialize it with the settings the host then sends,
//! and serve calls until the host closes the channel: every idle thread
//! blocks in `recvmsg` on the packet socket (each message wakes exactly
//! one), runs the call it received and sends the reply itself, large parts
//! through the arena the host passed. The worker never writes to its
//! stdout (plugin code may; the host forwards it to its log) and never
//! touches any other descriptor of the host's.

use std::collections::HashMap;
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

/// Sends one frame (blocking until there is room).
fn send<T: Serialize>(
    socket: &PacketSocket,
    arena: Option<&WorkerArena>,
    kind: Kind,
    header: &T,
    parts: &[&[u8]],
) -> Result<(), FrameError> {
    let json = serde_json::to_vec(header)
        .map_err(|_| FrameError::Malformed("the header does not serialize"))?;
    Outgoing::new(kind, &json, parts, arena, Vec::new())?.send(socket)
}

/// Receives one frame (blocking).
fn receive(socket: &PacketSocket, buf: &mut [u8]) -> Result<Frame, FrameError> {
    channel::receive(socket, buf, None, None)
}

/// Threads serving calls at most.
const MAX_THREADS: usize = 64;

/// The serving threads' shared state. Every idle thread waits in
/// `recvmsg`; the kernel wakes one per message, and that thread runs the
/// call and replies itself, so a call costs no thread hand-off and never
/// waits for another call.
struct Server {
    socket: PacketSocket,
    arena: Option<WorkerArena>,
    driver: Arc<LoadedPlugin>,
    /// Contexts of running calls, for `cancel`.
    flags: Mutex<HashMap<u64, CallContext>>,
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

fn serve_loop(server: &Arc<Server>) -> ! {
    let mut buf = channel::buffer();
    loop {
        let frame = match receive(&server.socket, &mut buf) {
            Ok(f) => f,
            Err(FrameError::Closed) => finish(Ok(())),
            Err(e) => finish(Err(e.into())),
        };
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
                let ctx = CallContext::new(deadline)
                    .with_observation_id(call.observation_id)
                    .with_request_id(call.request_id);
                lock(&server.flags).insert(call.id, ctx.clone());
                // Someone must keep receiving while this thread is busy.
                if server.idle.fetch_sub(1, Ordering::AcqRel) == 1 {
                    spawn_server(server);
                }
                let (outcome, parts) = serve_call(&server.driver, &ctx, call.method);
                lock(&server.flags).remove(&call.id);
                let reply = Reply {
                    id: call.id,
                    outcome,
                };
                let parts: Vec<&[u8]> = parts.iter().map(Part::bytes).collect();
                let sent = send(
                    &server.socket,
                    server.arena.as_ref(),
                    Kind::Reply,
                    &reply,
                    &parts,
                );
                // A result the channel cannot carry is answered with why,
                // so the host's caller never waits for a reply that will
                // not come.
                let sent = match sent {
                    Err(e @ FrameError::TooLarge { .. }) => {
                        let refused = Reply {
                            id: call.id,
                            outcome: Outcome::Err(DriverError::new(
                                devicerail_host_protocol::ErrorCode::ResponseFrameTooLarge,
                                format!("the driver's result cannot cross to the host: {e}"),
                            )),
                        };
                        send(&server.socket, None, Kind::Reply, &refused, &[])
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
                if let Some(ctx) = lock(&server.flags).get(&cancel.id) {
                    ctx.cancel();
                }
            }
            _ => finish(Err(FrameError::Malformed("a frame out of turn").into())),
        }
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
            send(&socket, None, Kind::Opened, &refused, &[])?;
            return Ok(());
        }
    };
    let manifest = opened.manifest().clone();
    send(&socket, None, Kind::Opened, &Opened::Ok { manifest }, &[])?;
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
    // The arena the host created for this worker's large reply parts.
    let arena = match frame.fds.into_iter().next() {
        Some(fd) => Some(WorkerArena::map(fd)?),
        None => None,
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
        send(&socket, None, Kind::Ready, &failed, &[])?;
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
            send(&socket, None, Kind::Ready, &ready_failure(&e), &[])?;
            return Ok(());
        }
    };
    send(
        &socket,
        None,
        Kind::Ready,
        &Ready::Ok {
            pid: std::process::id(),
        },
        &[],
    )?;
    let server = Arc::new(Server {
        socket,
        arena,
        driver,
        flags: Mutex::new(HashMap::new()),
        idle: AtomicUsize::new(1),
        threads: AtomicUsize::new(1),
    });
    serve_loop(&server)
}
