//! A host inside this process, served over socket pairs: `devicerail mcp`
//! runs one when no shared host listens. Each [`InProcessHost::connect`]
//! is one protocol connection, served exactly like a shared host's
//! control-socket connection (the same [`crate::transport::unix`] code,
//! attach preamble included), so a client cannot tell the two apart. It
//! sits beside `serve` (it is a way of serving) and reuses its start-up.
//!
//! It never touches stdin or stdout and never binds anything reachable
//! from outside the process.

use std::sync::Arc;
use std::time::Duration;

use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::dispatch::Dispatcher;
use crate::handlers::routing;
use crate::serve::{self, ServeError};
use crate::state::{Host, HostConfig};
use crate::transport::event_socket;
use devicerail_host_config::Config;
use devicerail_host_store::lockfile::DataDirLock;

/// A running in-process host: its data directory stays locked until
/// [`InProcessHost::shutdown`].
pub struct InProcessHost {
    host: Arc<Host>,
    dispatcher: Dispatcher,
    stop: CancellationToken,
    tasks: TaskTracker,
    _lock: DataDirLock,
}

impl std::fmt::Debug for InProcessHost {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InProcessHost").finish_non_exhaustive()
    }
}

impl InProcessHost {
    /// Locks the data directory, opens its stores and loads the plugins of
    /// `config`. Must run inside the Tokio runtime that will serve it.
    pub fn start(config: &Config) -> Result<Self, ServeError> {
        let stores = serve::open_stores(config)?;
        let registry = serve::load_plugins(config, tokio::runtime::Handle::current())?;
        let mut host_config = HostConfig::new(config.screenshot_policy.value);
        host_config.after_action_tree = config.after_action_tree.value;
        let host = Host::new(host_config, registry, stores.store, stores.evidence);
        let dispatcher = Dispatcher::new(host.clone());
        host.streams
            .set_listener(event_socket::Listener::new(&host));
        routing::spawn_refresher(host.clone(), serve::REFRESH_EVERY);
        Ok(Self {
            host,
            dispatcher,
            stop: CancellationToken::new(),
            tasks: TaskTracker::new(),
            _lock: stores.lock,
        })
    }

    /// A new protocol connection: the returned end is the client's; the
    /// other end is served until either side closes it or the host stops.
    /// The client writes the attach preamble first, as over the control
    /// socket.
    pub fn connect(&self) -> std::io::Result<tokio::net::UnixStream> {
        let (ours, theirs) = std::os::unix::net::UnixStream::pair()?;
        ours.set_nonblocking(true)?;
        theirs.set_nonblocking(true)?;
        let ours = tokio::net::UnixStream::from_std(ours)?;
        let theirs = tokio::net::UnixStream::from_std(theirs)?;
        self.tasks.spawn(crate::transport::unix::connection(
            self.dispatcher.clone(),
            ours,
            Some(std::process::id() as i32),
            self.stop.clone(),
        ));
        Ok(theirs)
    }

    /// Stops serving: open connections close (their sessions end as the
    /// protocol says), devices disconnect, the stores flush.
    pub async fn shutdown(&self) {
        self.host.shutdown.cancel();
        self.stop.cancel();
        self.tasks.close();
        if tokio::time::timeout(
            self.host.config.cleanup_grace * 2 + Duration::from_secs(2),
            self.tasks.wait(),
        )
        .await
        .is_err()
        {
            tracing::warn!("in-process connections did not close before shutdown");
        }
        serve::shutdown(&self.host, &[]).await;
    }
}
