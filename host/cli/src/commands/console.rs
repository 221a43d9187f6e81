//! `devicerail console`: the live web console for a device lab.

use std::io::Write as _;
use std::process::ExitCode;

use devicerail_host_config::{CommandLine, paths};
use devicerail_host_console::Options;

use crate::args::ConsoleArgs;
use crate::logging;

/// Serves the console until interrupted; prints the URL to open on stdout.
pub(crate) fn run(a: ConsoleArgs, mut line: CommandLine) -> ExitCode {
    a.host.apply(&mut line);
    let config = match logging::configure("console", &line, "info") {
        Ok(c) => c,
        Err(code) => return code,
    };
    let socket = match paths::socket_path(a.socket.as_deref()) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("devicerail console: {e}");
            return ExitCode::FAILURE;
        }
    };
    let announce = |url: &str| {
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "Open the console (the link works once): {url}");
        let _ = out.flush();
    };
    match devicerail_host_console::run(&config, &socket, Options { listen: a.listen }, announce) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            tracing::error!("{e}");
            eprintln!("devicerail console: {e}");
            ExitCode::FAILURE
        }
    }
}
