//! Serving each resource's `DevicePlugin` socket in the kubelet's
//! device-plugin directory and registering it with the kubelet, again
//! whenever the kubelet restarts.
//!
//! A restarted kubelet removes every socket in its directory and listens
//! on a new `kubelet.sock`. Every [`WATCH`] the registrar compares the
//! kubelet socket's identity (device, inode, and when the inode was made:
//! a socket replaced at once often reuses the inode number) with the one
//! it registered with, and checks that its own sockets are still the ones
//! it bound; on any difference it
//! stops its servers, binds its sockets again and registers again. So a
//! kubelet restart is followed by registration within [`WATCH`] plus the
//! time the kubelet takes to answer.
//!
//! It never touches a file in that directory but its own sockets.

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio_util::sync::CancellationToken;
use tonic::transport::{Endpoint, Server};

use crate::api::deviceplugin::device_plugin_server::DevicePluginServer;
use crate::api::deviceplugin::registration_client::RegistrationClient;
use crate::api::deviceplugin::{DevicePluginOptions, RegisterRequest};
use crate::config::{API_VERSION, Config, Resource};
use crate::plugin::ResourcePlugin;
use crate::pool::Pool;

/// How often the kubelet's socket and ours are checked.
pub const WATCH: Duration = Duration::from_millis(250);
/// How long dialling the kubelet may take (the kubelet dials us with the
/// same bound).
const DIAL_TIMEOUT: Duration = Duration::from_secs(10);
/// How long one `Register` may take (it includes the kubelet dialling us
/// back).
const REGISTER_TIMEOUT: Duration = Duration::from_secs(20);
/// Pause before registering again after a refusal.
const RETRY: Duration = Duration::from_secs(1);
/// How long a stopped server may take to close its connections.
const STOP_WAIT: Duration = Duration::from_secs(2);

/// Why serving or registering failed.
#[derive(Debug, thiserror::Error)]
pub enum KubeletError {
    /// The plugin's own socket could not be bound.
    #[error("cannot serve the plugin socket {path}: {source}")]
    Bind {
        /// The socket path.
        path: PathBuf,
        /// What the OS said.
        source: std::io::Error,
    },
    /// The kubelet's registration socket did not answer.
    #[error("cannot reach the kubelet at {path}: {message}")]
    Dial {
        /// The kubelet's socket.
        path: PathBuf,
        /// What the transport said.
        message: String,
    },
    /// The kubelet answered `Register` with an error.
    #[error("the kubelet refused to register {resource}: {message}")]
    Refused {
        /// The resource being registered.
        resource: String,
        /// The kubelet's status message.
        message: String,
    },
}

/// A file's identity: which inode on which device, and when that inode
/// was made. A socket removed and bound again at once often gets the same
/// inode number back; its change time (to the nanosecond) and, where the
/// file system keeps it, its birth time tell the new one from the old.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Identity {
    dev: u64,
    ino: u64,
    ctime: (i64, i64),
    born: Option<std::time::SystemTime>,
}

fn identity(path: &Path) -> Option<Identity> {
    std::fs::metadata(path).ok().map(|m| Identity {
        dev: m.dev(),
        ino: m.ino(),
        ctime: (m.ctime(), m.ctime_nsec()),
        born: m.created().ok(),
    })
}

/// Why a unix socket of the kubelet (or a plugin) could not be dialled:
/// the transport's error with its cause.
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct DialError {
    /// What the transport said, with its source's words.
    pub message: String,
}

/// A tonic channel to the unix socket at `path`.
pub async fn dial(path: &Path) -> Result<tonic::transport::Channel, DialError> {
    let uri = format!("unix://{}", path.display());
    let endpoint = Endpoint::from_shared(uri).map_err(|e| DialError {
        message: e.to_string(),
    })?;
    endpoint
        .connect_timeout(DIAL_TIMEOUT)
        .connect()
        .await
        .map_err(|e| DialError {
            message: format!(
                "{e}: {}",
                std::error::Error::source(&e)
                    .map(ToString::to_string)
                    .unwrap_or_default()
            ),
        })
}

/// Registers `resource` (served at `endpoint` in the kubelet's directory).
pub async fn register(kubelet: &Path, resource: &Resource) -> Result<(), KubeletError> {
    let channel = dial(kubelet).await.map_err(|e| KubeletError::Dial {
        path: kubelet.to_path_buf(),
        message: e.message,
    })?;
    let mut client = RegistrationClient::new(channel);
    let request = RegisterRequest {
        version: API_VERSION.to_owned(),
        endpoint: resource.endpoint(),
        resource_name: resource.name.clone(),
        options: Some(DevicePluginOptions {
            pre_start_required: false,
            get_preferred_allocation_available: false,
        }),
    };
    match tokio::time::timeout(REGISTER_TIMEOUT, client.register(request)).await {
        Ok(Ok(_)) => Ok(()),
        Ok(Err(status)) => Err(KubeletError::Refused {
            resource: resource.name.clone(),
            message: status.message().to_owned(),
        }),
        Err(_) => Err(KubeletError::Refused {
            resource: resource.name.clone(),
            message: "no answer in time".into(),
        }),
    }
}

/// One plugin socket being served.
struct Served {
    path: PathBuf,
    /// The socket file as bound.
    identity: Option<Identity>,
    task: tokio::task::JoinHandle<()>,
}

/// Binds `path` (replacing a stale socket of ours) and serves `plugin` on
/// it until `stop`.
fn serve<P: Pool>(
    path: &Path,
    plugin: ResourcePlugin<P>,
    stop: CancellationToken,
) -> Result<Served, KubeletError> {
    let bind_err = |source| KubeletError::Bind {
        path: path.to_path_buf(),
        source,
    };
    match std::fs::remove_file(path) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(bind_err(e)),
    }
    let listener = tokio::net::UnixListener::bind(path).map_err(bind_err)?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600)).map_err(bind_err)?;
    let incoming = tokio_stream::wrappers::UnixListenerStream::new(listener);
    let resource = plugin.resource.clone();
    let task = tokio::spawn(async move {
        let served = Server::builder()
            .add_service(DevicePluginServer::new(plugin))
            .serve_with_incoming_shutdown(incoming, stop.cancelled_owned())
            .await;
        if let Err(e) = served {
            tracing::error!(resource = %resource, "serving the device plugin failed: {e}");
        }
    });
    Ok(Served {
        path: path.to_path_buf(),
        identity: identity(path),
        task,
    })
}

/// What the registrar needs per resource to build its service again.
/// (The token given ends the service's streams.)
pub type MakePlugin<P> =
    Arc<dyn Fn(&Resource, CancellationToken) -> ResourcePlugin<P> + Send + Sync>;

/// Serves and registers every resource until `stop`, again after every
/// kubelet restart. `registered` is told each time all resources are
/// registered (for tests and figures).
pub async fn run<P: Pool>(
    config: &Config,
    make: MakePlugin<P>,
    stop: CancellationToken,
    registered: Option<tokio::sync::mpsc::UnboundedSender<Instant>>,
) {
    let dir = config.plugin_dir().to_path_buf();
    let kubelet = config.kubelet_socket.clone();
    let mut waiting_logged = false;
    while !stop.is_cancelled() {
        let Some(id) = identity(&kubelet) else {
            if !waiting_logged {
                tracing::info!(socket = %kubelet.display(), "waiting for the kubelet");
                waiting_logged = true;
            }
            pause(&stop, WATCH).await;
            continue;
        };
        waiting_logged = false;
        let round = stop.child_token();
        let mut served = Vec::new();
        let mut failed = false;
        for r in &config.resources {
            match serve(
                &dir.join(r.endpoint()),
                make(r, round.clone()),
                round.clone(),
            ) {
                Ok(s) => served.push(s),
                Err(e) => {
                    tracing::error!("{e}");
                    failed = true;
                    break;
                }
            }
        }
        if !failed {
            for r in &config.resources {
                match register(&kubelet, r).await {
                    Ok(()) => {
                        tracing::info!(resource = %r.name, endpoint = %r.endpoint(), "registered with the kubelet")
                    }
                    Err(e) => {
                        tracing::warn!("{e}; trying again");
                        failed = true;
                        break;
                    }
                }
            }
        }
        if !failed {
            if let Some(tx) = &registered {
                let _ = tx.send(Instant::now());
            }
            // Watch for a kubelet restart (or our sockets removed).
            loop {
                pause(&stop, WATCH).await;
                if stop.is_cancelled() {
                    break;
                }
                let kubelet_changed = identity(&kubelet) != Some(id);
                let ours_gone = served.iter().any(|s| identity(&s.path) != s.identity);
                if kubelet_changed || ours_gone {
                    tracing::info!(
                        kubelet_changed,
                        plugin_socket_removed = ours_gone,
                        "the kubelet restarted; registering again"
                    );
                    break;
                }
            }
        } else {
            pause(&stop, RETRY).await;
        }
        round.cancel();
        for s in served {
            let abort = s.task.abort_handle();
            if tokio::time::timeout(STOP_WAIT, s.task).await.is_err() {
                abort.abort();
            }
            // Only a socket we bound is removed (a new one of ours is
            // bound next round anyway).
            if stop.is_cancelled() {
                let _ = std::fs::remove_file(&s.path);
            }
        }
    }
}

async fn pause(stop: &CancellationToken, d: Duration) {
    tokio::select! {
        _ = stop.cancelled() => {}
        _ = tokio::time::sleep(d) => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_socket_bound_again_is_a_new_identity_even_on_the_same_inode() {
        let dir = tempfile::tempdir().expect("tmp");
        let path = dir.path().join("kubelet.sock");
        let mut reused = 0;
        for _ in 0..20 {
            let first = std::os::unix::net::UnixListener::bind(&path).expect("bind");
            let a = identity(&path).expect("identity");
            drop(first);
            std::fs::remove_file(&path).expect("remove");
            let _second = std::os::unix::net::UnixListener::bind(&path).expect("bind again");
            let b = identity(&path).expect("identity");
            reused += usize::from(a.ino == b.ino);
            assert_ne!(a, b, "a replaced socket must not look the same");
            std::fs::remove_file(&path).expect("remove");
        }
        println!("kubelet socket replaced 20 times; the inode number came back {reused} times");
    }
}
