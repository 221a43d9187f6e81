//! `devicerail devices`: every device of every installed plugin, with its
//! platform, state and lease, like `adb devices -l`.
//!
//! A shared host listening on the control socket knows the leases, so it is
//! asked first (through the official client, as any client would). Without
//! one, the installed plugins are inspected, each in a short-lived worker
//! (no server started, as for `plugins list`), and asked for their devices;
//! nothing holds a lease then.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use devicerail_host_config::{CommandLine, Config, paths};
use devicerail_host_engine::plugin_dir::{DeviceStatus, Status};
use devicerail_host_protocol::{DeviceInfo, Platform};
use serde::Serialize;
use serde_json::json;

use super::CommandError;
use super::plugins::inspect_dir;
use crate::args::DevicesArgs;
use crate::logging;
use devicerail_host_engine::plugin_dir::shipped::no_plugins_line;

/// One listed device.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct Listed {
    id: String,
    name: String,
    platform: Platform,
    os_version: Option<String>,
    /// The plugin that serves it, when known (not through a shared host).
    plugin: Option<String>,
    /// `connected` (a host holds a connection to it) or `available`.
    state: &'static str,
    /// Who holds its lease on the shared host: `anotherConnection`, or
    /// `None` when free (or when no shared host runs).
    lease: Option<String>,
}

/// Where the list came from.
#[derive(Debug, Serialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
enum From {
    /// The shared host on this socket.
    SharedHost { socket: PathBuf },
    /// The plugins of this directory, inspected.
    Plugins { dir: PathBuf },
}

/// A plugin whose devices could not be listed.
#[derive(Debug, Serialize)]
struct Problem {
    file: String,
    reason: String,
}

fn listed_device(d: DeviceInfo, plugin: Option<String>, lease: Option<String>) -> Listed {
    Listed {
        id: d.id.to_string(),
        name: d.name,
        platform: d.platform,
        os_version: d.os_version,
        plugin,
        state: if d.connected {
            "connected"
        } else {
            "available"
        },
        lease,
    }
}

/// The shared host's devices and leases, when one listens on `socket`.
fn from_shared_host(socket: &Path) -> Option<Result<Vec<Listed>, CommandError>> {
    std::os::unix::net::UnixStream::connect(socket).ok()?;
    let rt = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => return Some(Err(CommandError::Refused(format!("no runtime: {e}")))),
    };
    Some(rt.block_on(async {
        let listed = devicerail_host_link::devices_with_leases(socket, "devicerail-devices")
            .await
            .map_err(|e| {
                CommandError::Refused(format!("the shared host at {}: {e}", socket.display()))
            })?;
        listed
            .into_iter()
            .map(|(d, lease)| {
                let d: DeviceInfo = serde_json::from_value(d).map_err(|e| {
                    CommandError::Refused(format!("the shared host listed a device oddly: {e}"))
                })?;
                Ok(listed_device(d, None, lease))
            })
            .collect()
    }))
}

/// The installed plugins' devices, each plugin inspected in a worker.
fn from_plugins(config: &Config) -> Result<(Vec<Listed>, Vec<Problem>, usize), CommandError> {
    let files = inspect_dir(&config.plugins_dir.value, |o| o.with_devices(), config)?;
    let mut devices = Vec::new();
    let mut problems = Vec::new();
    let name = |f: &Path| {
        f.file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    };
    for f in &files {
        match (&f.status, &f.device_status) {
            (Status::Refused(reason), _) => problems.push(Problem {
                file: name(&f.file),
                reason: format!("refused: {reason}"),
            }),
            (Status::Loaded, DeviceStatus::Failed(reason)) => problems.push(Problem {
                file: name(&f.file),
                reason: format!("devices unavailable: {reason}"),
            }),
            (Status::Loaded, _) => {
                let plugin = f.manifest.as_ref().map(|m| m.id.clone());
                devices.extend(
                    f.devices
                        .iter()
                        .cloned()
                        .map(|d| listed_device(d, plugin.clone(), None)),
                );
            }
        }
    }
    Ok((devices, problems, files.len()))
}

/// Runs `devices`.
pub(crate) fn run(a: DevicesArgs, mut line: CommandLine) -> ExitCode {
    let json_out = a.json;
    a.dirs.apply(&mut line);
    let config = match logging::configure("devices", &line, "warn") {
        Ok(c) => c,
        Err(code) => return code,
    };
    let socket = match paths::socket_path(a.socket.as_deref()) {
        Ok(s) => s,
        Err(e) => return logging::exit("devices", Err::<(), _>(e)),
    };
    let (from, devices, problems, installed) = match from_shared_host(&socket) {
        Some(Ok(devices)) => (From::SharedHost { socket }, devices, Vec::new(), None),
        Some(Err(e)) => return logging::exit("devices", Err::<(), _>(e)),
        None => match from_plugins(&config) {
            Ok((devices, problems, n)) => (
                From::Plugins {
                    dir: config.plugins_dir.value.clone(),
                },
                devices,
                problems,
                Some(n),
            ),
            Err(e) => return logging::exit("devices", Err::<(), _>(e)),
        },
    };
    let hint = (installed == Some(0)).then(|| no_plugins_line(&config.plugins_dir.value));
    let mut out = std::io::stdout().lock();
    if json_out {
        let doc = json!({ "from": from, "devices": devices, "problems": problems, "hint": hint });
        let _ = writeln!(
            out,
            "{}",
            serde_json::to_string_pretty(&doc).unwrap_or_default()
        );
        return ExitCode::SUCCESS;
    }
    match &from {
        From::SharedHost { socket } => {
            let _ = writeln!(
                out,
                "List of devices (shared host at {}):",
                socket.display()
            );
        }
        From::Plugins { dir } => {
            let _ = writeln!(
                out,
                "List of devices (plugins in {}; no shared host running, so no leases):",
                dir.display()
            );
        }
    }
    for d in &devices {
        let mut fields = vec![
            format!("platform:{}", d.platform.name()),
            format!("name:{:?}", d.name),
        ];
        if let Some(v) = &d.os_version {
            fields.push(format!("os:{v}"));
        }
        if let Some(p) = &d.plugin {
            fields.push(format!("plugin:{p}"));
        }
        fields.push(format!("lease:{}", d.lease.as_deref().unwrap_or("-")));
        let _ = writeln!(out, "{:<24} {:<10} {}", d.id, d.state, fields.join(" "));
    }
    for p in &problems {
        let _ = writeln!(out, "{:<24} {:<10} {}", p.file, "problem", p.reason);
    }
    if let Some(h) = &hint {
        let _ = writeln!(out, "{h}");
    } else if devices.is_empty() && problems.is_empty() {
        let _ = writeln!(
            out,
            "(no devices: the installed plugins see none right now)"
        );
    }
    ExitCode::SUCCESS
}
