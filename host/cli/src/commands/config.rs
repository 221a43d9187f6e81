//! `devicerail config show`.

use std::io::Write;
use std::process::ExitCode;

use devicerail_host_config::{self as config, CommandLine, Config};

use crate::args::ConfigCommand;
use crate::logging;

/// `config show`.
pub(crate) fn show(config: &Config, as_json: bool) {
    let mut out = std::io::stdout().lock();
    if as_json {
        let _ = writeln!(
            out,
            "{}",
            serde_json::to_string_pretty(&config::show::json(config)).unwrap_or_default()
        );
    } else {
        let _ = write!(out, "{}", config::show::text(config));
    }
}

/// Runs `config show`.
pub(crate) fn run(command: ConfigCommand, mut line: CommandLine) -> ExitCode {
    let ConfigCommand::Show { dirs, json } = command;
    dirs.apply(&mut line);
    match logging::configure("config", &line, "warn") {
        Ok(c) => {
            show(&c, json);
            ExitCode::SUCCESS
        }
        Err(code) => code,
    }
}
