//! `devicerail replay` and `devicerail export`: these resolve the source
//! and paths and print; [`devicerail_host_replay`] does the work.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use devicerail_host_config::{CommandLine, paths};
use devicerail_host_replay::export;
use devicerail_host_replay::run::{self, Options};
use devicerail_host_report::report::{self, Source};

use crate::args::{ExportArgs, ReplayArgs, ScriptArg};
use crate::logging;

/// Exit status of a usage error (as clap's own).
const USAGE: u8 = 2;

/// A session id of `data_dir`, or a bundle file.
fn source_of(s: &str, data_dir: &Path) -> Result<Source, super::CommandError> {
    run::source_of(s, data_dir).ok_or_else(|| super::CommandError::BadSource(s.to_owned()))
}

/// Runs `replay`.
pub(crate) fn run(a: ReplayArgs, mut line: CommandLine) -> ExitCode {
    a.host.apply(&mut line);
    let config = match logging::configure("replay", &line, "warn") {
        Ok(c) => c,
        Err(code) => return code,
    };
    let socket = match paths::socket_path(a.socket.as_deref()) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("devicerail replay: {e}");
            return ExitCode::FAILURE;
        }
    };
    let source = match source_of(&a.source, &config.data_dir.value) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("devicerail replay: {e}");
            return ExitCode::from(USAGE);
        }
    };
    let opts = Options {
        source,
        device: a.device,
        from: a.from,
        to: a.to,
        strict: a.strict,
        settle_max_ms: a.settle_ms,
    };
    let replayed = match run::run(&config, &socket, &opts, &|k| std::env::var(k).ok()) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("devicerail replay: {e}");
            return if e.is_usage() {
                ExitCode::from(USAGE)
            } else {
                ExitCode::FAILURE
            };
        }
    };
    let s = &replayed.summary;
    let out = a
        .out
        .unwrap_or_else(|| PathBuf::from(format!("devicerail-replay-{}.html", s.session)));
    // The comparison is the replay Session's own report: each step beside
    // the recorded one.
    let written = match &replayed.replayed {
        Some(data) => report::write(data, Some(&replayed.recorded), &out).map(drop),
        None => Err(report::ReportError::Write {
            path: out.clone(),
            source: std::io::Error::other("the replay's Session could not be read back"),
        }),
    };
    if a.json {
        let mut doc = serde_json::to_value(s).unwrap_or_default();
        if written.is_ok() {
            doc["report"] = serde_json::json!(out.display().to_string());
        }
        println!("{doc}");
    } else {
        println!(
            "replay of Session {} as Session {} on {}",
            s.replays, s.session, s.device
        );
        for st in &s.steps {
            println!(
                "step {:>3} {:<14} {:<8} {}",
                st.number,
                st.action,
                st.verdict.as_str(),
                st.note
            );
        }
        println!(
            "{}{}; replay overhead per step (settle, aim, check, compare) p50 {} ms, p95 {} ms over {} step(s)",
            s.counts(),
            s.stopped
                .as_deref()
                .map(|w| format!("; stopped at {w}"))
                .unwrap_or_default(),
            s.overhead.p50_ms,
            s.overhead.p95_ms,
            s.overhead.steps
        );
    }
    match written {
        Ok(()) => eprintln!(
            "wrote the replay Session's report, both sides per step: {}",
            out.display()
        ),
        Err(e) => {
            eprintln!("devicerail replay: {e}");
            return ExitCode::FAILURE;
        }
    }
    if s.succeeded() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// Runs `export`.
pub(crate) fn run_export(a: ExportArgs) -> ExitCode {
    logging::init("warn");
    let data_dir = match paths::data_dir(a.data_dir.as_deref()) {
        Ok(d) => d,
        Err(e) => {
            eprintln!("devicerail export: {e}");
            return ExitCode::FAILURE;
        }
    };
    let source = match source_of(&a.source, &data_dir) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("devicerail export: {e}");
            return ExitCode::from(USAGE);
        }
    };
    let language = match a.script {
        ScriptArg::Python => export::Language::Python,
        ScriptArg::Typescript => export::Language::TypeScript,
        ScriptArg::Rust => export::Language::Rust,
        ScriptArg::Playwright => export::Language::Playwright,
    };
    let script = match export::export_source(&source, language) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("devicerail export: {e}");
            return ExitCode::from(USAGE);
        }
    };
    match &a.out {
        None => {
            print!("{script}");
            ExitCode::SUCCESS
        }
        Some(out) => logging::exit(
            "export",
            std::fs::write(out, script.as_bytes()).map(|()| {
                eprintln!("wrote {}", out.display());
            }),
        ),
    }
}
