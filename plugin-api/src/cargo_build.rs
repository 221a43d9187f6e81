//! Builds a driver crate's plugin library with the user's cargo and finds
//! the file cargo produced: for `devicerail plugins install ./crate` and
//! for the conformance suite run from a driver's own tests
//! (`conformance::assert_crate`).
//!
//! Cargo is `$CARGO` (set when cargo runs a test or a subcommand), else
//! `cargo` on `PATH`. It runs in the crate's directory, so the crate's own
//! `.cargo/config.toml` applies as when its author builds it. The library
//! is read from cargo's JSON artifact messages, never guessed from target
//! directory conventions. This module never edits the crate.

use std::ffi::OsString;
use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};

use serde_json::Value;

/// Environment variable: the plugin library a driver crate's conformance
/// test checks instead of building the crate itself. `devicerail plugins
/// install ./crate` sets it to the release library it built and is about
/// to install, so the suite passes on exactly that file.
pub const LIBRARY_ENV: &str = "DEVICERAIL_CONFORMANCE_LIBRARY";

/// Why a crate's library could not be built.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    /// The manifest path does not lead to a file.
    #[error("{0} is not a Cargo.toml file")]
    NoManifest(PathBuf),
    /// Cargo could not be started.
    #[error("could not run {cargo:?}: {source} (install Rust with rustup, or set CARGO)")]
    Spawn {
        /// The program that was tried.
        cargo: OsString,
        /// What the operating system said.
        source: std::io::Error,
    },
    /// Cargo ran and failed; its diagnostics went to stderr.
    #[error("cargo build of {manifest} failed ({status}); its errors are above")]
    Failed {
        /// The crate's manifest.
        manifest: PathBuf,
        /// Cargo's exit status.
        status: ExitStatus,
    },
    /// The crate builds no `cdylib`.
    #[error(
        "{manifest} builds no plugin library: its [lib] needs crate-type = [\"cdylib\", \"rlib\"] (as `devicerail plugins new` writes it)"
    )]
    NoLibrary {
        /// The crate's manifest.
        manifest: PathBuf,
    },
    /// The manifest builds more than one `cdylib` (a workspace root).
    #[error(
        "{manifest} builds several plugin libraries ({files}); give the directory of one driver crate"
    )]
    Several {
        /// The crate's manifest.
        manifest: PathBuf,
        /// The libraries cargo reported.
        files: String,
    },
}

/// The cargo a build runs: `$CARGO`, else `cargo` on `PATH`.
pub fn cargo_program() -> OsString {
    std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into())
}

/// One `cargo build --lib` of a driver crate.
#[derive(Debug, Clone)]
pub struct LibraryBuild {
    manifest: PathBuf,
    profile: Option<String>,
    features: Vec<String>,
    target_dir: Option<PathBuf>,
    quiet: bool,
}

impl LibraryBuild {
    /// A build of the crate whose `Cargo.toml` is `manifest`, with cargo's
    /// defaults (dev profile, default features, the configured target
    /// directory).
    pub fn new(manifest: impl Into<PathBuf>) -> Self {
        Self {
            manifest: manifest.into(),
            profile: None,
            features: Vec::new(),
            target_dir: None,
            quiet: false,
        }
    }

    /// Builds with cargo profile `profile` (`dev`, `release` or a custom one).
    #[must_use]
    pub fn profile(mut self, profile: impl Into<String>) -> Self {
        self.profile = Some(profile.into());
        self
    }

    /// Adds `--features feature` (`dependency/feature` works too).
    #[must_use]
    pub fn feature(mut self, feature: impl Into<String>) -> Self {
        self.features.push(feature.into());
        self
    }

    /// Builds into `dir` (`CARGO_TARGET_DIR`) instead of the configured
    /// target directory.
    #[must_use]
    pub fn target_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.target_dir = Some(dir.into());
        self
    }

    /// Passes `--quiet` and drops cargo's diagnostics instead of letting
    /// them through to stderr.
    #[must_use]
    pub fn quiet(mut self) -> Self {
        self.quiet = true;
        self
    }

    /// The manifest this build reads.
    pub fn manifest(&self) -> &Path {
        &self.manifest
    }

    /// Runs cargo and returns the plugin library it built (or found up to
    /// date). Cargo's diagnostics go to this process's stderr.
    pub fn run(&self) -> Result<PathBuf, BuildError> {
        let manifest = std::fs::canonicalize(&self.manifest)
            .ok()
            .filter(|m| m.is_file())
            .ok_or_else(|| BuildError::NoManifest(self.manifest.clone()))?;
        let cargo = cargo_program();
        let mut cmd = Command::new(&cargo);
        cmd.args(["build", "--lib", "--message-format=json-render-diagnostics"])
            .arg("--manifest-path")
            .arg(&manifest)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(if self.quiet {
                Stdio::null()
            } else {
                Stdio::inherit()
            });
        if let Some(dir) = manifest.parent() {
            cmd.current_dir(dir);
        }
        if let Some(profile) = &self.profile {
            cmd.args(["--profile", profile]);
        }
        for feature in &self.features {
            cmd.args(["--features", feature]);
        }
        if self.quiet {
            cmd.arg("--quiet");
        }
        if let Some(dir) = &self.target_dir {
            cmd.env("CARGO_TARGET_DIR", dir);
        }
        let output = cmd.output().map_err(|source| BuildError::Spawn {
            cargo: cargo.clone(),
            source,
        })?;
        if !output.status.success() {
            return Err(BuildError::Failed {
                manifest,
                status: output.status,
            });
        }
        let libraries = cdylibs_of(&manifest, &output.stdout);
        match libraries.as_slice() {
            [] => Err(BuildError::NoLibrary { manifest }),
            [one] => Ok(one.clone()),
            several => Err(BuildError::Several {
                manifest,
                files: several
                    .iter()
                    .map(|p| p.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", "),
            }),
        }
    }
}

/// The `cdylib` files cargo's JSON messages report for the package of
/// `manifest` (a build prints one artifact message per target it built
/// or found fresh).
fn cdylibs_of(manifest: &Path, messages: &[u8]) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = Vec::new();
    for line in messages.lines().map_while(Result::ok) {
        let Ok(msg) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        if msg["reason"] != "compiler-artifact" {
            continue;
        }
        let ours = msg["manifest_path"]
            .as_str()
            .and_then(|p| std::fs::canonicalize(p).ok())
            .is_some_and(|p| p == manifest);
        let cdylib = msg["target"]["kind"]
            .as_array()
            .is_some_and(|kinds| kinds.iter().any(|k| k == "cdylib"));
        if !(ours && cdylib) {
            continue;
        }
        for file in msg["filenames"].as_array().into_iter().flatten() {
            if let Some(file) = file.as_str()
                && file.ends_with(std::env::consts::DLL_SUFFIX)
                && !out.iter().any(|p| p == Path::new(file))
            {
                out.push(PathBuf::from(file));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_library_comes_from_the_artifact_messages_of_the_crate() {
        let dir = std::env::temp_dir();
        let manifest = std::fs::canonicalize(&dir).expect("temp dir");
        let suffix = std::env::consts::DLL_SUFFIX;
        let ours = manifest.display().to_string();
        let messages = format!(
            "{}\n{}\n{}\nnot json\n",
            serde_json::json!({
                "reason": "compiler-artifact",
                "manifest_path": "/elsewhere/Cargo.toml",
                "target": { "kind": ["cdylib"] },
                "filenames": [format!("/t/libother{suffix}")]
            }),
            serde_json::json!({
                "reason": "compiler-artifact",
                "manifest_path": ours,
                "target": { "kind": ["cdylib", "rlib"] },
                "filenames": [format!("/t/libdevicerail_plugin_x{suffix}"), "/t/libdevicerail_plugin_x.rlib"]
            }),
            serde_json::json!({ "reason": "build-finished", "success": true }),
        );
        assert_eq!(
            cdylibs_of(&manifest, messages.as_bytes()),
            [PathBuf::from(format!("/t/libdevicerail_plugin_x{suffix}"))]
        );
    }
}
