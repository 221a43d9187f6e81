//! The driver-crate side of `devicerail plugins install ./path/to/crate`:
//! build the crate in release mode with the user's cargo, run its
//! conformance test on exactly that library, and hand the file to
//! `plugins::install`, which checks and copies it like any library file.
//!
//! Cargo runs in the crate's directory (its `.cargo/config.toml` applies);
//! its output goes to stderr, since stdout is this command's result. This
//! module never edits the crate and never loads the library itself.

use std::os::fd::AsFd;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use devicerail_host_plugin_api::cargo_build::{self, LIBRARY_ENV, LibraryBuild};

use super::CommandError;

/// Whether `path` is a driver crate's directory (it has a `Cargo.toml`).
pub(crate) fn is_crate_dir(path: &Path) -> bool {
    path.is_dir() && path.join("Cargo.toml").is_file()
}

/// Builds the crate in `dir` in release mode, runs its conformance test on
/// the library, and returns the library's path.
pub(crate) fn build_and_check(dir: &Path) -> Result<PathBuf, CommandError> {
    let manifest = dir.join("Cargo.toml");
    if !dir.join("tests/conformance.rs").is_file() {
        return Err(CommandError::Refused(format!(
            "{} has no tests/conformance.rs: a driver crate passes the DeviceRail conformance suite before it is installed (add the file `devicerail plugins new` writes: one test calling devicerail_host_plugin_api::conformance::assert_crate)",
            dir.display()
        )));
    }
    eprintln!("building {} (cargo build --release)", dir.display());
    let library = LibraryBuild::new(&manifest).profile("release").run()?;
    eprintln!(
        "checking {} with the crate's conformance suite (cargo test --release --test conformance)",
        library.display()
    );
    // The test's report goes to our stderr.
    let report_to = std::io::stderr()
        .as_fd()
        .try_clone_to_owned()
        .map_err(super::io("cannot pass stderr to", Path::new("cargo test")))?;
    let status = Command::new(cargo_build::cargo_program())
        .args([
            "test",
            "--release",
            "--test",
            "conformance",
            "--manifest-path",
        ])
        .arg(&manifest)
        .current_dir(dir)
        .env(LIBRARY_ENV, &library)
        .stdin(Stdio::null())
        .stdout(Stdio::from(report_to))
        .status()
        .map_err(super::io("cannot run cargo test in", dir))?;
    if !status.success() {
        return Err(CommandError::Refused(format!(
            "{} did not pass the DeviceRail conformance suite (its report is above: each failure with its fix); nothing was installed",
            dir.display()
        )));
    }
    eprintln!("conformance: passed");
    Ok(library)
}
