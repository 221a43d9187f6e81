//! `devicerail mcp`: the Model Context Protocol server for agents.

use std::process::ExitCode;

use devicerail_host_config::{CommandLine, paths};

use crate::args::McpArgs;
use crate::logging;

/// Serves MCP on stdio until the client goes away.
pub(crate) fn run(a: McpArgs, mut line: CommandLine) -> ExitCode {
    a.host.apply(&mut line);
    let config = match logging::configure("mcp", &line, "info") {
        Ok(c) => c,
        Err(code) => return code,
    };
    let socket = match paths::socket_path(a.socket.as_deref()) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("devicerail mcp: {e}");
            return ExitCode::FAILURE;
        }
    };
    match devicerail_host_mcp::run(&config, &socket) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            tracing::error!("{e}");
            eprintln!("devicerail mcp: {e}");
            ExitCode::FAILURE
        }
    }
}
