//! `devicerail mcp`: the host as a Model Context Protocol server over
//! stdio, built for agents. A handful of tools (`devices`, `observe`,
//! `act`, `wait_for`, `session`) with input and output schemas, each call a
//! DeviceRail request in the device's recorded Session.
//!
//! It attaches to the shared host when one listens on the control socket,
//! else runs a host in this process on the same configuration, so
//! `{"command": "devicerail", "args": ["mcp"]}` works in any MCP client.
//!
//! What it must never do: write anything but MCP messages to stdout (fd 1
//! is pointed at stderr before anything else runs), put a secret's value in
//! a result, an event or a log line, or act on a device a call did not
//! name.
//!
//! The public surface is [`run`] and its errors; the modules are private:
//!
//! * `server` — the rmcp handler, `devices` and `session`.
//! * `observe`, `act` — the tools that touch a device.
//! * `tools` — names, schemas and arguments.
//! * `seen` — taking observations as the server keeps them (the agent
//!   crate's `Screen`, through the link's eyes), and settling.
//! * `present`, `image` — what an observation becomes for an agent
//!   (outlines, diffs and effects come from `devicerail-host-agent`).
//! * `state`, `sessions`, `secrets` — per-server state.
//! * `backend` — the DeviceRail connections (shared or in-process host,
//!   through `devicerail-host-link`).

#![forbid(unsafe_code)]

mod act;
mod backend;
mod image;
mod observe;
mod present;
mod search;
mod secrets;
mod seen;
mod server;
mod sessions;
mod state;
mod tools;

use std::path::Path;
use std::time::Duration;

use rmcp::ServiceExt;

use backend::Backend;
pub use devicerail_host_link::LinkError as BackendError;

use devicerail_host_config::Config;
use devicerail_host_core::serve::{self, ServeError};
use server::McpServer;

/// Why `devicerail mcp` stopped with an error.
#[derive(Debug, thiserror::Error)]
pub enum McpError {
    /// Stdout could not be moved aside or the runtime could not start.
    #[error(transparent)]
    Setup(#[from] ServeError),
    /// Neither a shared host nor an in-process host could serve.
    #[error(transparent)]
    Backend(#[from] BackendError),
    /// The MCP client's `initialize` exchange failed (the rmcp error's
    /// text).
    #[error("the MCP session failed to start: {0}")]
    Initialize(String),
}

/// What the `devices` tool says when there is no device, in one line: the
/// same line `serve` and `devicerail devices` print.
fn no_devices_line(backend: &Backend, config: &Config, socket: &Path) -> String {
    use devicerail_host_engine::plugin_dir::{self, shipped};
    match backend {
        Backend::Shared { .. } => format!(
            "no devices: the shared host at {} serves none; install drivers into its plugins directory with `{}` and restart it",
            socket.display(),
            shipped::install_hint()
        ),
        Backend::Local(_) => {
            let dir = &config.plugins_dir.value;
            if plugin_dir::candidates(dir).map_or(true, |c| c.is_empty()) {
                shipped::no_plugins_line(dir)
            } else {
                format!(
                    "no devices: the plugins in {} see none right now; `devicerail devices` and `devicerail doctor` tell why",
                    dir.display()
                )
            }
        }
    }
}

/// Serves MCP on stdin/stdout until the client closes stdin: moves the
/// real stdout aside (fd 1 then points at stderr), attaches to the shared
/// host listening on `socket` or else starts one in this process on
/// `config`; an in-process host is shut down before this returns.
pub fn run(config: &Config, socket: &Path) -> Result<(), McpError> {
    let out = serve::take_stdout()?;
    let rt = serve::runtime()?;
    let result = rt.block_on(async {
        let backend = Backend::open(config, socket)?;
        let no_devices = no_devices_line(&backend, config, socket);
        let server = McpServer::new(backend, config.data_dir.value.clone(), no_devices);
        let transport = (tokio::io::stdin(), tokio::fs::File::from_std(out));
        let running = match server.clone().serve(transport).await {
            Ok(r) => r,
            Err(e) => {
                server.close().await;
                return Err(McpError::Initialize(e.to_string()));
            }
        };
        tracing::info!("MCP client connected");
        match running.waiting().await {
            Ok(reason) => tracing::info!(?reason, "MCP client gone"),
            Err(e) => tracing::warn!("the MCP service ended abnormally: {e}"),
        }
        server.close().await;
        Ok(())
    });
    rt.shutdown_timeout(Duration::from_millis(500));
    result
}
