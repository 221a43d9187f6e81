//! `devicerail serve`: the stdio daemon.
//!
//! Start-up (after `crate::config` has read the command line, the
//! environment and the configuration file): move the protocol to a private copy of stdout and point fd 1
//! at stderr (so nothing a plugin or its child processes print can corrupt
//! the stream), lock the data dir, recover the event store, load plugins
//! to serve, each with its table of the configuration file.
//! Shutdown (EOF, SIGINT, SIGTERM): stop admission, cancel in-flight work
//! (terminal events are still recorded), end the active session with
//! outcome `shutdown`, disconnect devices, flush, exit 0.

use std::fs::File;
use std::os::fd::{FromRawFd, OwnedFd};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use devicerail_protocol::{SessionOutcome, TransportInfo};
use tokio_util::sync::CancellationToken;

use crate::config::{self, Config};
use crate::connection::Connection;
use crate::dispatch::Dispatcher;
use crate::event_store::EventStore;
use crate::evidence::EvidenceStore;
use crate::handlers::routing;
use crate::lockfile;
use crate::paths;
use crate::plugin_dir::{self, LoadOptions};
use crate::registry::{PluginSlot, Registry};
use crate::state::{Host, HostConfig};
use crate::transport::{event_socket, stdio};

/// How often the device list is refreshed in the background.
const REFRESH_EVERY: Duration = Duration::from_secs(2);
/// Output queue depth (frames).
const OUTPUT_QUEUE: usize = 4096;
/// Output queue size in bytes: past it, a client that does not read stops
/// being answered (and so stops being read) until it catches up.
const OUTPUT_BYTES: usize = 4 * 1024 * 1024;

/// Threads for blocking work (driver calls, store reads, file I/O).
const MAX_BLOCKING_THREADS: usize = 64;

#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error(transparent)]
    Paths(#[from] paths::PathError),
    #[error(transparent)]
    Lock(#[from] lockfile::LockError),
    #[error("cannot open the event store: {0}")]
    Store(#[from] crate::event_store::StoreError),
    #[error("cannot open the evidence store in {dir}: {source}")]
    Evidence {
        dir: PathBuf,
        source: std::io::Error,
    },
    #[error(transparent)]
    Plugins(#[from] plugin_dir::DirError),
    #[error("cannot set up stdio: {0}")]
    Stdio(std::io::Error),
    #[error("cannot start the async runtime: {0}")]
    Runtime(std::io::Error),
}

/// Duplicates stdout for the protocol (close-on-exec, so child processes
/// never inherit it) and redirects fd 1 to stderr.
fn take_stdout() -> Result<File, ServeError> {
    // SAFETY: plain fd syscalls on the process's own standard descriptors.
    unsafe {
        let proto = libc::fcntl(1, libc::F_DUPFD_CLOEXEC, 3);
        if proto < 0 {
            return Err(ServeError::Stdio(std::io::Error::last_os_error()));
        }
        if libc::dup2(2, 1) < 0 {
            return Err(ServeError::Stdio(std::io::Error::last_os_error()));
        }
        Ok(File::from(OwnedFd::from_raw_fd(proto)))
    }
}

/// Raises the soft limit of open files to the hard limit: every socket,
/// plugin file and store reader costs a descriptor.
fn raise_fd_limit() {
    // SAFETY: getrlimit/setrlimit on our own process with a valid struct.
    unsafe {
        let mut lim = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) == 0 && lim.rlim_cur < lim.rlim_max {
            lim.rlim_cur = lim.rlim_max.min(1 << 20);
            if libc::setrlimit(libc::RLIMIT_NOFILE, &lim) != 0 {
                tracing::debug!("could not raise the open-files limit");
            }
        }
    }
}

/// Runs the daemon with `config` until shutdown.
pub fn serve(config: &Config) -> Result<(), ServeError> {
    let proto_out = take_stdout()?;
    let plugins_dir = config.plugins_dir.value.clone();
    let data_dir = config.data_dir.value.clone();
    let _lock = lockfile::lock(&data_dir)?;
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
    let files = plugin_dir::scan(&plugins_dir, LoadOptions::serve(config.parsed.as_ref()))?;
    let loaded = files.iter().filter(|f| f.is_loaded()).count();
    tracing::info!(
        config = %config::show::file_line(config),
        plugins_dir = %plugins_dir.display(),
        data_dir = %data_dir.display(),
        loaded,
        refused = files.len() - loaded,
        "starting"
    );
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
    let slots = files
        .into_iter()
        .filter_map(|f| {
            let devices = f.devices;
            let plugin = f.plugin?;
            let id = plugin.id().to_owned();
            let driver: Arc<dyn devicerail_plugin_api::Driver> = plugin;
            Some((PluginSlot::new(id, driver), devices))
        })
        .collect();
    let registry = Arc::new(Registry::new(slots));
    let host_config = HostConfig::new(config.screenshot_policy.value);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .max_blocking_threads(MAX_BLOCKING_THREADS)
        .build()
        .map_err(ServeError::Runtime)?;
    let host = Host::new(host_config, registry, store, evidence);
    let result = rt.block_on(run(host, proto_out));
    rt.shutdown_timeout(Duration::from_millis(200));
    result
}

async fn run(host: Arc<Host>, proto_out: File) -> Result<(), ServeError> {
    let dispatcher = Dispatcher::new(host.clone());
    // The transports: the event-stream listener (bound on first use), then
    // the control connection on stdio.
    host.streams
        .set_listener(event_socket::Listener::new(&host));
    let (out, writer) = stdio::spawn_writer(proto_out, OUTPUT_QUEUE, OUTPUT_BYTES);
    let conn = Connection::new(TransportInfo::stdio(), out);
    routing::spawn_refresher(host.clone(), REFRESH_EVERY);
    let stop_reading = CancellationToken::new();
    spawn_signal_watch(stop_reading.clone());
    stdio::serve(&dispatcher, &conn, std::io::stdin(), stop_reading).await;
    shutdown(&host, &conn).await;
    drop(conn);
    drop(dispatcher);
    drop(host);
    match tokio::task::spawn_blocking(move || writer.join()).await {
        Ok(Ok(Ok(()))) => {}
        Ok(Ok(Err(e))) => tracing::warn!("writing stdout failed: {e}"),
        _ => tracing::warn!("the output writer ended abnormally"),
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

async fn shutdown(host: &Arc<Host>, conn: &Arc<Connection>) {
    host.shutdown.cancel();
    let limit =
        tokio::time::Instant::now() + host.config.cleanup_grace * 2 + Duration::from_secs(1);
    while !conn.inflight.is_empty() && tokio::time::Instant::now() < limit {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    if !conn.inflight.is_empty() {
        tracing::warn!(
            pending = conn.inflight.len(),
            "in-flight requests did not finish before shutdown"
        );
    }
    if let Some(active) = conn.session() {
        match crate::handlers::sessions::finish(
            host,
            &active,
            SessionOutcome::Shutdown,
            Some("the host shut down".into()),
            None,
        )
        .await
        {
            Ok(_) => {
                tracing::info!(session = %active.id, "active session ended with outcome shutdown")
            }
            Err(e) => {
                tracing::error!(session = %active.id, "could not end the active session: {}", e.message)
            }
        }
        conn.set_session(None);
    }
    for device in host.connected_devices() {
        let Some(route) = host.registry.route(&device) else {
            continue;
        };
        let ctx = devicerail_plugin_api::CallContext::new(Some(
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
            Err(e) => Some(Err(devicerail_plugin_api::DriverError::device_unavailable(
                &device,
                e.to_string(),
            ))),
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
