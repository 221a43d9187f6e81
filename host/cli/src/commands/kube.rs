//! `devicerail kube device-plugin`: the device plugin of the shared host
//! (the work is `devicerail_host_kube`'s). Runs until SIGINT or SIGTERM.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use devicerail_host_config::{CommandLine, paths};
use devicerail_host_kube::config::{self, Config};
use tokio_util::sync::CancellationToken;

use crate::args::{KubeCommand, KubeDevicePluginArgs};
use crate::logging;

/// Why the device plugin's configuration is unusable.
#[derive(Debug, thiserror::Error)]
enum SetupError {
    #[error(transparent)]
    Paths(#[from] paths::PathError),
    #[error(transparent)]
    Config(#[from] config::ConfigError),
    #[error("{0} is inside the socket directory pods see; it holds secrets")]
    SecretInSocketDir(PathBuf),
}

/// Runs a `kube` subcommand.
pub(crate) fn run(command: KubeCommand, line: CommandLine) -> ExitCode {
    match command {
        KubeCommand::DevicePlugin(a) => device_plugin(a, line),
    }
}

fn build(a: KubeDevicePluginArgs) -> Result<Config, SetupError> {
    let host_socket = paths::socket_path(a.socket.as_deref())?;
    let socket_dir = host_socket
        .parent()
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/"));
    let state_file = match a.state_file {
        Some(f) => paths::absolute(&f)?,
        None => paths::data_dir(None)?.join("kube").join("allocations.json"),
    };
    if state_file.starts_with(&socket_dir) {
        return Err(SetupError::SecretInSocketDir(state_file));
    }
    let pool_key_file = match a.pool_key {
        Some(f) => paths::absolute(&f)?,
        None => devicerail_host_core::pool_key::key_file(&paths::data_dir(None)?),
    };
    if pool_key_file.starts_with(&socket_dir) {
        return Err(SetupError::SecretInSocketDir(pool_key_file));
    }
    let config = Config {
        pool_key_file,
        node_socket_dir: match a.node_socket_dir {
            Some(d) => d,
            None => socket_dir,
        },
        host_socket,
        kubelet_socket: paths::absolute(&a.kubelet_socket)?,
        pod_resources_socket: (!a.no_pod_resources)
            .then(|| paths::absolute(&a.pod_resources_socket))
            .transpose()?,
        resources: config::resources(&a.resources)?,
        state_file,
        container_socket_dir: a.container_socket_dir,
        poll: Duration::from_millis(a.poll_ms),
        release_poll: Duration::from_millis(a.release_poll_ms),
        release_grace: Duration::from_millis(a.release_grace_ms),
    };
    config.check()?;
    Ok(config)
}

fn device_plugin(a: KubeDevicePluginArgs, mut line: CommandLine) -> ExitCode {
    line.log_filter = a.log_filter.clone();
    if let Err(code) = logging::configure("kube device-plugin", &line, "info") {
        return code;
    }
    let config = match build(a) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("devicerail kube device-plugin: {e}");
            return ExitCode::FAILURE;
        }
    };
    let rt = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("devicerail kube device-plugin: cannot start the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let resources: Vec<&str> = config.resources.iter().map(|r| r.name.as_str()).collect();
    tracing::info!(
        host = %config.host_socket.display(),
        kubelet = %config.kubelet_socket.display(),
        resources = ?resources,
        "starting the device plugin"
    );
    let result = rt.block_on(async move {
        let stop = CancellationToken::new();
        let signals = stop.clone();
        tokio::spawn(async move {
            use tokio::signal::unix::{SignalKind, signal};
            let (Ok(mut term), Ok(mut int)) = (
                signal(SignalKind::terminate()),
                signal(SignalKind::interrupt()),
            ) else {
                tracing::warn!("cannot watch SIGTERM/SIGINT");
                return;
            };
            tokio::select! {
                _ = term.recv() => {}
                _ = int.recv() => {}
            }
            tracing::info!("stopping");
            signals.cancel();
        });
        devicerail_host_kube::run(config, stop).await
    });
    logging::exit("kube device-plugin", result)
}
