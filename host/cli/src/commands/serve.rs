//! `devicerail serve`: the daemon on stdio, and on a shared socket with
//! `--listen`.

use std::process::ExitCode;

use devicerail_host_config::{CommandLine, paths};
use devicerail_host_core::serve;

use crate::args::ServeArgs;
use crate::logging;

/// Serves until stdin closes (or, with `--listen`, until a signal).
pub(crate) fn run(a: ServeArgs, mut line: CommandLine) -> ExitCode {
    a.host.apply(&mut line);
    let config = match logging::configure("serve", &line, "info") {
        Ok(c) => c,
        Err(code) => return code,
    };
    let listen = match a
        .listen
        .map(|l| paths::socket_path(l.0.as_deref()))
        .transpose()
    {
        Ok(l) => l.map(|path| serve::Listen {
            path,
            max_connections: a.max_connections.max(1),
        }),
        Err(e) => {
            eprintln!("devicerail serve: {e}");
            return ExitCode::FAILURE;
        }
    };
    match serve::serve(&config, listen) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            tracing::error!("{e}");
            eprintln!("devicerail serve: {e}");
            ExitCode::FAILURE
        }
    }
}
