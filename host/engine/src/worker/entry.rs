//! Inside the worker process (`devicerail plugin-worker`, hidden): arm the
//! parent-death signal, take the channel descriptor, load one plugin
//! through the stable-ABI loader with the settings of the first frame,
//! then serve calls (threads take turns reading; each runs the call it
//! read) until the host closes the channel. The worker never writes to its
//! stdout (plugin code may; the host forwards it to its log) and never
//! touches any other descriptor of the host's.

use std::collections::HashMap;
use std::io::BufReader;
use std::os::fd::RawFd;
use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use devicerail_host_plugin_api::loader::{self, LoadError, LoadedPlugin};
use devicerail_host_plugin_api::{
    CallContext, Driver, DriverError, DriverResult, LoadPurpose, ObservationWire,
};
use serde::Serialize;
use serde_json::Value;

use super::frame::{FrameError, Kind, read_frame, write_frame};
use super::message::{Call, Cancel, Init, Method, Outcome, Ready, Reply, split_output};

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
fn channel(fd: RawFd) -> Result<UnixStream, WorkerError> {
    devicerail_host_sys::inherited_socket(fd).map_err(|_| WorkerError::NotASocket(fd))
}

type Writer = Arc<Mutex<UnixStream>>;

fn send<T: Serialize>(w: &Writer, kind: Kind, header: &T, bytes: &[u8]) -> Result<(), FrameError> {
    let json = serde_json::to_vec(header)
        .map_err(|_| FrameError::Malformed("the header does not serialize"))?;
    let mut w = lock(w);
    write_frame(&mut *w, kind, &json, bytes)
}

/// The serving threads' shared state. Threads take turns reading the
/// channel (leader/follower): the one that reads a call hands the reader to
/// the next thread and runs the call itself, so a call costs no extra
/// thread hand-off and never waits for another call.
struct Server {
    reader: Mutex<BufReader<UnixStream>>,
    writer: Writer,
    driver: Arc<LoadedPlugin>,
    /// Contexts of running calls, for `cancel`.
    flags: Mutex<HashMap<u64, CallContext>>,
    /// Threads not running a call (reading, or waiting to read).
    readers: AtomicUsize,
}

/// Starts one more serving thread.
fn spawn_server(server: &Arc<Server>) {
    server.readers.fetch_add(1, Ordering::AcqRel);
    let s = server.clone();
    let spawned = std::thread::Builder::new()
        .name("plugin-call".into())
        .spawn(move || serve_loop(&s));
    if let Err(e) = spawned {
        server.readers.fetch_sub(1, Ordering::AcqRel);
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
    loop {
        let read = read_frame(&mut *lock(&server.reader));
        let frame = match read {
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
                // Someone must keep reading while this thread is busy.
                if server.readers.fetch_sub(1, Ordering::AcqRel) == 1 {
                    spawn_server(server);
                }
                let (outcome, bytes) = serve_call(&server.driver, &ctx, call.method);
                lock(&server.flags).remove(&call.id);
                let reply = Reply {
                    id: call.id,
                    outcome,
                };
                if let Err(e) = send(&server.writer, Kind::Reply, &reply, &bytes) {
                    tracing::warn!("cannot send a reply to the host: {e}");
                }
                server.readers.fetch_add(1, Ordering::AcqRel);
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

fn to_value<T: Serialize>(v: &T) -> DriverResult<Value> {
    serde_json::to_value(v)
        .map_err(|e| DriverError::failure(format!("could not serialize driver output: {e}")))
}

/// Runs one call on the driver.
fn serve_call(driver: &LoadedPlugin, ctx: &CallContext, method: Method) -> (Outcome, Vec<u8>) {
    let result: DriverResult<(Value, Option<Vec<u8>>)> = (|| {
        Ok(match method {
            Method::ListDevices => (to_value(&driver.list_devices(ctx)?)?, None),
            Method::Connect { device } => (to_value(&driver.connect(ctx, &device)?)?, None),
            Method::Disconnect { device } => {
                driver.disconnect(ctx, &device)?;
                (Value::Null, None)
            }
            Method::Health { device } => (to_value(&driver.health(ctx, &device)?)?, None),
            Method::Capabilities { device } => {
                (to_value(&driver.capabilities(ctx, &device)?)?, None)
            }
            Method::Observe { device, request } => {
                let (json, png) = ObservationWire::split(driver.observe(ctx, &device, &request)?);
                (to_value(&json)?, png)
            }
            Method::Execute { device, call } => {
                let (json, png) = split_output(driver.execute(ctx, &device, &call)?);
                (to_value(&json)?, png)
            }
            Method::Doctor => (to_value(&driver.doctor())?, None),
        })
    })();
    match result {
        Ok((v, png)) => (Outcome::Ok(v), png.unwrap_or_default()),
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

/// Serves until the host closes the channel (then the process exits).
pub fn run(args: &WorkerArgs) -> Result<(), WorkerError> {
    tie_to_parent(args.parent)?;
    let stream = channel(args.fd)?;
    let mut reader = BufReader::new(stream.try_clone()?);
    let writer: Writer = Arc::new(Mutex::new(stream));
    let frame = read_frame(&mut reader)?;
    if frame.kind != Kind::Init {
        return Err(FrameError::Malformed("the first frame is not init").into());
    }
    let init: Init =
        serde_json::from_slice(&frame.header).map_err(|source| WorkerError::BadHeader {
            what: "init",
            source,
        })?;
    let purpose = LoadPurpose::from_ffi(&init.purpose);
    let loaded = loader::open(&args.plugin).and_then(|opened| {
        if opened.manifest().id != init.plugin_id {
            return Err(LoadError::BadManifest(format!(
                "the library now declares plugin id {:?}, not {:?}",
                opened.manifest().id,
                init.plugin_id
            )));
        }
        opened.init(&init.settings, purpose)
    });
    let driver = match loaded {
        Ok(d) => Arc::new(d),
        Err(e) => {
            send(&writer, Kind::Ready, &ready_failure(&e), &[])?;
            return Ok(());
        }
    };
    send(
        &writer,
        Kind::Ready,
        &Ready::Ok {
            pid: std::process::id(),
        },
        &[],
    )?;
    let server = Arc::new(Server {
        reader: Mutex::new(reader),
        writer,
        driver,
        flags: Mutex::new(HashMap::new()),
        readers: AtomicUsize::new(1),
    });
    serve_loop(&server)
}
