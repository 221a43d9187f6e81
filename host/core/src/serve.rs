//! `devicerail serve`: the daemon, on stdio and optionally on a local
//! control socket shared by many clients (`--listen unix[:PATH]`).
//!
//! Start-up (after `devicerail_host_config` has read the command line, the
//! environment and the configuration file): move the protocol to a private copy of stdout and point fd 1
//! at stderr (so nothing a plugin or its child processes print can corrupt
//! the stream), lock the data dir, recover the event store, bind the
//! socket, load plugins to serve, each with its table of the configuration
//! file. Shutdown (EOF on stdin without `--listen`, SIGINT, SIGTERM): stop
//! admission, cancel in-flight work (terminal events are still recorded),
//! end every active session with outcome `shutdown`, disconnect devices,
//! flush, exit 0. With `--listen`, EOF on stdin only closes the stdio
//! connection; the host serves until signalled.

use std::fs::File;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use devicerail_host_protocol::TransportInfo;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::connection::Connection;
use crate::dispatch::{Closing, Dispatcher};
use crate::handlers::{closing, routing};
use crate::pool_key;
use crate::state::{Host, HostConfig};
use crate::transport::{event_socket, stdio, unix};
use devicerail_host_config::paths;
use devicerail_host_config::{self as config, Config};
use devicerail_host_engine::plugin_dir::{self, LoadOptions};
use devicerail_host_engine::registry::{PluginSlot, Registry};
use devicerail_host_store::event_store::EventStore;
use devicerail_host_store::evidence::EvidenceStore;
use devicerail_host_store::lockfile;

/// How often the device list is refreshed in the background.
pub(crate) const REFRESH_EVERY: Duration = Duration::from_secs(2);
/// Output queue depth (frames).
const OUTPUT_QUEUE: usize = 4096;
/// Output queue size in bytes: past it, a client that does not read stops
/// being answered (and so stops being read) until it catches up.
const OUTPUT_BYTES: usize = 4 * 1024 * 1024;

/// Threads for blocking work (driver calls, store reads, file I/O).
const MAX_BLOCKING_THREADS: usize = 64;

/// Connections the control socket serves at once by default.
pub const DEFAULT_MAX_CONNECTIONS: usize = 64;

/// The shared control socket `serve --listen` adds to stdio.
#[derive(Debug, Clone)]
pub struct Listen {
    /// Where the socket is bound.
    pub path: PathBuf,
    /// Socket connections served at once.
    pub max_connections: usize,
}

/// Why a host could not start (or, for [`ServeError::Stdio`], could not
/// keep serving): each one ends the command with an error before any
/// client is answered.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// A configured path (data dir, plugins dir, socket) could not be
    /// resolved.
    #[error(transparent)]
    Paths(#[from] paths::PathError),
    /// The data directory is locked by another host, or the lock could not
    /// be taken.
    #[error(transparent)]
    Lock(#[from] lockfile::LockError),
    /// The event store could not be opened or recovered.
    #[error("cannot open the event store: {0}")]
    Store(#[from] devicerail_host_store::event_store::StoreError),
    /// The evidence store's directory could not be created or opened.
    #[error("cannot open the evidence store in {dir}: {source}")]
    Evidence {
        /// The data directory whose evidence store failed.
        dir: PathBuf,
        /// What the file system said.
        source: std::io::Error,
    },
    /// The plugins directory could not be read.
    #[error(transparent)]
    Plugins(#[from] plugin_dir::DirError),
    /// The control socket of `--listen` could not be bound.
    #[error(transparent)]
    Listen(#[from] unix::ListenError),
    /// Stdout could not be moved aside for the protocol, or stdin/stdout
    /// could not be set up as the control connection.
    #[error("cannot set up stdio: {0}")]
    Stdio(std::io::Error),
    /// The Tokio runtime could not be built.
    #[error("cannot start the async runtime: {0}")]
    Runtime(std::io::Error),
    /// The running executable could not be located, so process-isolated
    /// plugins have no worker binary.
    #[error("cannot find the devicerail binary to run plugin workers: {0}")]
    WorkerBinary(std::io::Error),
}

/// The log filter plugin workers use: the host's current level.
fn worker_log_filter() -> String {
    tracing::level_filters::LevelFilter::current()
        .to_string()
        .to_lowercase()
}

/// Duplicates stdout for the protocol (close-on-exec, so child processes
/// never inherit it) and redirects fd 1 to stderr.
pub fn take_stdout() -> Result<File, ServeError> {
    devicerail_host_sys::take_stdout().map_err(ServeError::Stdio)
}

/// Raises the soft limit of open files to the hard limit: every socket,
/// pipe and plugin channel is a descriptor.
fn raise_fd_limit() {
    if !devicerail_host_sys::raise_open_files_limit() {
        tracing::debug!("could not raise the open-files limit");
    }
}

/// The data directory of `config`, locked, with its stores open.
pub(crate) struct Stores {
    pub lock: lockfile::DataDirLock,
    pub store: EventStore,
    pub evidence: EvidenceStore,
}

/// Locks the data directory and opens (recovering) its stores.
pub(crate) fn open_stores(config: &Config) -> Result<Stores, ServeError> {
    let data_dir = config.data_dir.value.clone();
    let lock = lockfile::lock(&data_dir)?;
    raise_fd_limit();
    let (store, recovery) = EventStore::open(&data_dir)?;
    if let Some(why) = &recovery.read_only {
        tracing::error!(
            "the data directory cannot be written ({why}): serving read-only; reads and exports work, every write answers event_store_error"
        );
    }
    if !recovery.closed.is_empty() {
        tracing::warn!(
            sessions = recovery.closed.len(),
            "closed sessions left active by a previous run"
        );
    }
    let evidence = EvidenceStore::open(&data_dir).map_err(|source| ServeError::Evidence {
        dir: data_dir.clone(),
        source,
    })?;
    Ok(Stores {
        lock,
        store,
        evidence,
    })
}

/// Loads the plugins of `config` (each with its table of the
/// configuration file) into a registry; plugins isolated in processes
/// run in workers of this binary, their replies read and awaited on
/// `runtime`.
pub(crate) fn load_plugins(
    config: &Config,
    runtime: tokio::runtime::Handle,
) -> Result<Arc<Registry>, ServeError> {
    let plugins_dir = config.plugins_dir.value.clone();
    let workers = plugin_dir::Workers::current_exe(&worker_log_filter())
        .map_err(ServeError::WorkerBinary)?
        .on_runtime(runtime);
    let files = plugin_dir::scan(
        &plugins_dir,
        LoadOptions::serve(config.parsed.as_ref(), &workers),
    )?;
    let loaded = files.iter().filter(|f| f.is_loaded()).count();
    tracing::info!(
        config = %config::show::file_line(config),
        plugins_dir = %plugins_dir.display(),
        data_dir = %config.data_dir.value.display(),
        loaded,
        refused = files.len() - loaded,
        "starting"
    );
    if files.is_empty() {
        tracing::warn!("{}", plugin_dir::shipped::no_plugins_line(&plugins_dir));
    } else if loaded == 0 {
        tracing::warn!(
            "none of the {} plugin files in {} loaded (the lines above say why), so there are no devices; `devicerail doctor` checks them",
            files.len(),
            plugins_dir.display()
        );
    }
    let ids: Vec<String> = files
        .iter()
        .filter_map(|f| f.manifest.as_ref().map(|m| m.id.clone()))
        .collect();
    for (id, table) in config.unused_plugin_tables(&ids) {
        tracing::warn!(
            line = table.line,
            "the configuration has a table for plugin {id:?}, but no installed plugin has that id"
        );
    }
    for f in files.iter().filter(|f| f.is_loaded()) {
        if let Some(m) = &f.manifest {
            tracing::info!(plugin = %m.id, isolation = %f.isolation, "plugin isolation");
        }
    }
    let slots = files
        .into_iter()
        .filter_map(|f| {
            let devices = f.devices;
            let worker = f.worker;
            let backend = f.backend?;
            let id = f.manifest?.id;
            Some((PluginSlot::new(id, backend).with_worker(worker), devices))
        })
        .collect();
    Ok(Arc::new(Registry::new(slots)))
}

/// The multi-threaded runtime every host runs on.
pub fn runtime() -> Result<tokio::runtime::Runtime, ServeError> {
    let mut builder = tokio::runtime::Builder::new_multi_thread();
    builder
        .enable_all()
        .max_blocking_threads(MAX_BLOCKING_THREADS);
    // `TOKIO_WORKER_THREADS`, when set, is tokio's to read.
    if std::env::var_os("TOKIO_WORKER_THREADS").is_none() {
        builder.worker_threads(async_workers(
            std::thread::available_parallelism().map_or(1, usize::from),
        ));
    }
    builder.build().map_err(ServeError::Runtime)
}

/// Threads running the host's tasks on a machine of `cores`: one core is
/// left to the threads the tasks hand work to (the event store's writer,
/// which spends most of each commit in `fsync`, and the plugin workers).
/// Each thread more than the work needs costs every request a wake-up
/// on another core: on two cores, one thread cut an observation's CPU by
/// a tenth and raised its throughput (docs/PERFORMANCE.md, issue 48).
fn async_workers(cores: usize) -> usize {
    cores.saturating_sub(1).max(1)
}

/// Runs the daemon with `config` until shutdown.
pub fn serve(config: &Config, listen: Option<Listen>) -> Result<(), ServeError> {
    let proto_out = take_stdout()?;
    let stores = open_stores(config)?;
    // The pool manager's key before the socket: a listening socket means
    // the key is there (the data directory's lock keeps it ours).
    let key_file = listen
        .as_ref()
        .and_then(|l| pool_key::location(&config.data_dir.value, &l.path));
    let key = match (&listen, &key_file) {
        (Some(_), None) => {
            tracing::warn!(
                "the control socket is inside the data directory: no pool manager's key is written, so no client may reserve devices (devicerailHost.pool.v1)"
            );
            None
        }
        (_, Some(file)) => match pool_key::create(file) {
            Ok(digest) => {
                tracing::info!(file = %file.display(), "wrote the pool manager's key");
                Some(digest)
            }
            Err(e) => {
                tracing::warn!("{e}; no client may reserve devices");
                None
            }
        },
        (None, None) => None,
    };
    let forget_key = || {
        if let Some(file) = &key_file {
            let _ = std::fs::remove_file(file);
        }
    };
    let socket = listen
        .as_ref()
        .map(|l| unix::bind(&l.path))
        .transpose()
        .inspect_err(|_| forget_key())?;
    let rt = runtime().inspect_err(|_| forget_key())?;
    let registry = load_plugins(config, rt.handle().clone()).inspect_err(|_| forget_key())?;
    let mut host_config = HostConfig::new(config.screenshot_policy.value);
    host_config.after_action_tree = config.after_action_tree.value;
    let host = Host::with_pool_key(host_config, registry, stores.store, stores.evidence, key);
    let listen = socket.zip(listen.map(|l| l.max_connections));
    let result = rt.block_on(run(host, proto_out, listen));
    rt.shutdown_timeout(Duration::from_millis(200));
    forget_key();
    drop(stores.lock);
    result
}

async fn run(
    host: Arc<Host>,
    proto_out: File,
    listen: Option<(unix::Socket, usize)>,
) -> Result<(), ServeError> {
    let dispatcher = Dispatcher::new(host.clone());
    // The transports: the event-stream listener (bound on first use), the
    // shared control socket when asked for, then the control connection
    // on stdio.
    host.streams
        .set_listener(event_socket::Listener::new(&host));
    let stop = CancellationToken::new();
    spawn_signal_watch(stop.clone());
    let sockets = TaskTracker::new();
    let shared = listen.is_some();
    if let Some((socket, max)) = listen {
        sockets.spawn(unix::serve(
            dispatcher.clone(),
            socket,
            max,
            stop.clone(),
            sockets.clone(),
        ));
    }
    let (out, writer) = stdio::writer_for(proto_out, OUTPUT_QUEUE, OUTPUT_BYTES);
    let conn = Connection::new(TransportInfo::stdio(), out);
    routing::spawn_refresher(host.clone(), REFRESH_EVERY);
    // The stdio connection runs on a runtime worker, beside the device
    // calls it starts, not in the main thread's `block_on`: every handoff
    // between the two was a thread wake-up per request.
    let serving = {
        let (dispatcher, conn, stop) = (dispatcher.clone(), conn.clone(), stop.clone());
        tokio::spawn(async move {
            stdio::serve_stdin(&dispatcher, &conn, stop).await;
        })
    };
    if let Err(e) = serving.await {
        tracing::error!("the stdio connection ended abnormally: {e}");
    }
    if shared && !stop.is_cancelled() {
        // A shared host outlives its stdio peer: close that connection
        // alone and serve the socket until signalled.
        dispatcher.close(&conn, Closing::PeerClosed).await;
        stop.cancelled().await;
    }
    host.shutdown.cancel();
    stop.cancel();
    sockets.close();
    if tokio::time::timeout(
        host.config.cleanup_grace * 2 + Duration::from_secs(2),
        sockets.wait(),
    )
    .await
    .is_err()
    {
        tracing::warn!("socket connections did not close before shutdown");
    }
    shutdown(&host, std::slice::from_ref(&conn)).await;
    let store = host.store.clone();
    drop(conn);
    drop(dispatcher);
    drop(host);
    // Everything is recorded: a clean stop leaves the store as one file.
    store.close().await;
    match writer.join().await {
        Ok(Ok(())) => {}
        Ok(Err(e)) => tracing::warn!("writing stdout failed: {e}"),
        Err(e) => tracing::warn!("{e}"),
    }
    tracing::info!("stopped");
    Ok(())
}

fn spawn_signal_watch(stop: CancellationToken) {
    tokio::spawn(async move {
        use tokio::signal::unix::{SignalKind, signal};
        let (Ok(mut term), Ok(mut int)) = (
            signal(SignalKind::terminate()),
            signal(SignalKind::interrupt()),
        ) else {
            tracing::warn!("cannot install signal handlers");
            return;
        };
        tokio::select! {
            _ = term.recv() => tracing::info!("SIGTERM received"),
            _ = int.recv() => tracing::info!("SIGINT received"),
        }
        stop.cancel();
    });
}

pub(crate) async fn shutdown(host: &Arc<Host>, conns: &[Arc<Connection>]) {
    host.shutdown.cancel();
    for conn in conns {
        closing::close(host, conn, closing::Why::Shutdown).await;
    }
    for device in host.connected_devices() {
        let Some(route) = host.registry.route(&device) else {
            continue;
        };
        let ctx = devicerail_host_plugin_api::CallContext::new(Some(
            std::time::Instant::now() + Duration::from_secs(5),
        ));
        let flag = ctx.clone();
        let d = device.clone();
        let driver = route.driver.clone();
        let result = match route.executor.submit(move || driver.disconnect(&ctx, &d)) {
            Ok((ticket, rx)) => match tokio::time::timeout(Duration::from_secs(6), rx).await {
                Ok(Ok(r)) => Some(r),
                _ => {
                    flag.cancel();
                    ticket.abandon();
                    None
                }
            },
            Err(e) => Some(Err(
                devicerail_host_plugin_api::DriverError::device_unavailable(&device, e.to_string()),
            )),
        };
        match result {
            Some(Ok(())) => tracing::info!(device = %device, "device disconnected at shutdown"),
            Some(Err(e)) => {
                tracing::warn!(device = %device, "disconnect at shutdown failed: {e}")
            }
            None => tracing::warn!(device = %device, "disconnect at shutdown did not finish"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::async_workers;

    #[test]
    fn a_core_is_left_to_the_writer_and_the_workers() {
        assert_eq!(async_workers(0), 1);
        assert_eq!(async_workers(1), 1);
        assert_eq!(async_workers(2), 1);
        assert_eq!(async_workers(8), 7);
    }
}
