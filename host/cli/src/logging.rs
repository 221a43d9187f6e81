//! Diagnostics to stderr (stdout is the protocol), and the few lines every
//! subcommand shares: read the configuration, start logging with its
//! filter, turn a result into an exit code.

use std::process::ExitCode;

use devicerail_host_config::{CommandLine, Config};

/// Starts logging to stderr with `filter` (RUST_LOG syntax; `info` when it
/// does not parse).
pub(crate) fn init(filter: &str) {
    let filter = tracing_subscriber::EnvFilter::builder()
        .parse(filter)
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let ansi = std::io::IsTerminal::is_terminal(&std::io::stderr());
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(filter)
        .with_ansi(ansi)
        .with_target(false)
        .init();
}

/// Logging of a plugin worker: plain lines on stderr, level first, which
/// the host forwards to its own log.
pub(crate) fn init_worker(filter: &str) {
    let filter = tracing_subscriber::EnvFilter::builder()
        .parse(filter)
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(filter)
        .with_ansi(false)
        .with_target(false)
        .without_time()
        .init();
}

/// Reads the configuration and starts logging with its filter, or says why
/// it cannot (`devicerail WHAT: reason` on stderr).
pub(crate) fn configure(
    what: &str,
    line: &CommandLine,
    default_log: &str,
) -> Result<Config, ExitCode> {
    match Config::load(line, default_log) {
        Ok(c) => {
            init(&c.log_filter.value);
            if let Some(notice) = c.file.notice() {
                eprintln!("devicerail: {notice}");
            }
            Ok(c)
        }
        Err(e) => {
            eprintln!("devicerail {what}: {e}");
            Err(ExitCode::FAILURE)
        }
    }
}

/// The exit code of `result`, saying why on stderr when it failed.
pub(crate) fn exit<T, E: std::fmt::Display>(what: &str, result: Result<T, E>) -> ExitCode {
    match result {
        Ok(_) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("devicerail {what}: {e}");
            ExitCode::FAILURE
        }
    }
}
