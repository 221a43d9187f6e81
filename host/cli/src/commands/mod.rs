//! The subcommands' work, one module per command family. Each `run`
//! takes its parsed arguments and the configuration's command-line layer,
//! and answers the process's exit code; the work below it returns typed
//! errors ([`CommandError`]).
//!
//! Plugin commands load plugins only to inspect them: with their settings
//! from the configuration file, but starting no external server
//! (`LoadPurpose::Inspect`).

use std::path::{Path, PathBuf};

use devicerail_host_config::{ConfigError, paths};
use devicerail_host_engine::plugin_dir;

pub(crate) mod attach;
pub(crate) mod bench;
pub(crate) mod completions;
pub(crate) mod config;
pub(crate) mod conformance;
pub(crate) mod console;
pub(crate) mod devices;
pub(crate) mod doctor;
pub(crate) mod kube;
pub(crate) mod mcp;
pub(crate) mod plugin_build;
pub(crate) mod plugin_new;
pub(crate) mod plugins;
pub(crate) mod replay;
pub(crate) mod report;
pub(crate) mod serve;
pub(crate) mod worker;

/// Why a command failed.
#[derive(Debug, thiserror::Error)]
pub(crate) enum CommandError {
    #[error(transparent)]
    Paths(#[from] paths::PathError),
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error(transparent)]
    Dir(#[from] plugin_dir::DirError),
    #[error("{0}")]
    Refused(String),
    #[error("cannot find the devicerail binary to inspect plugins with: {0}")]
    Inspector(std::io::Error),
    #[error(transparent)]
    New(#[from] plugin_new::NewError),
    #[error(transparent)]
    Build(#[from] devicerail_host_plugin_api::cargo_build::BuildError),
    #[error(transparent)]
    Report(#[from] devicerail_host_report::report::ReportError),
    #[error(transparent)]
    Bundle(#[from] devicerail_host_report::bundle::BundleError),
    #[error("{0:?} is neither a session id nor a bundle file")]
    BadSource(String),
    #[error("name a session id, a bundle file or --last")]
    NoSource,
    #[error("{what} {path}: {source}")]
    Io {
        what: &'static str,
        path: PathBuf,
        source: std::io::Error,
    },
}

/// An I/O failure on `path` while doing `what`.
pub(crate) fn io(what: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> CommandError {
    let path = path.to_path_buf();
    move |source| CommandError::Io { what, path, source }
}

/// Human-readable byte count.
pub(crate) fn human_bytes(n: u64) -> String {
    const UNITS: [&str; 4] = ["B", "KiB", "MiB", "GiB"];
    let mut v = n as f64;
    let mut unit = 0;
    while v >= 1024.0 && unit < UNITS.len() - 1 {
        v /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{n} B")
    } else {
        format!("{v:.1} {}", UNITS[unit])
    }
}
