//! The driver-crate side of `devicerail plugins install ./path/to/crate`:
//! build the crate in release mode with the user's cargo, run the
//! DeviceRail conformance suite of the SDK this devicerail was built with
//! on exactly that library (in a short-lived `devicerail
//! plugin-conformance` process, with the environment a plugin worker
//! gets), and hand the file to `plugins::install`, which checks and copies
//! it like any library file. The crate's own tests are the author's
//! business: the gate is this suite, whatever they say.
//!
//! Cargo runs in the crate's directory (its `.cargo/config.toml` applies);
//! its output goes to stderr, since stdout is this command's result. This
//! module never edits the crate and never loads the library itself.

use std::os::fd::AsFd;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use devicerail_host_config::Config;
use devicerail_host_engine::worker::environment;
use devicerail_host_plugin_api::cargo_build::LibraryBuild;

use super::CommandError;

/// Whether `path` is a driver crate's directory (it has a `Cargo.toml`).
pub(crate) fn is_crate_dir(path: &Path) -> bool {
    path.is_dir() && path.join("Cargo.toml").is_file()
}

/// Builds the crate in `dir` in release mode, runs the conformance suite
/// on the library, and returns the library's path.
pub(crate) fn build_and_check(dir: &Path, config: &Config) -> Result<PathBuf, CommandError> {
    let manifest = dir.join("Cargo.toml");
    eprintln!("building {} (cargo build --release)", dir.display());
    let library = LibraryBuild::new(&manifest).profile("release").run()?;
    eprintln!(
        "checking {} with the DeviceRail conformance suite of this devicerail ({})",
        library.display(),
        env!("CARGO_PKG_VERSION")
    );
    let exe = std::env::current_exe().map_err(CommandError::Inspector)?;
    // The report goes to our stderr.
    let report_to = std::io::stderr()
        .as_fd()
        .try_clone_to_owned()
        .map_err(super::io(
            "cannot pass stderr to",
            Path::new("plugin-conformance"),
        ))?;
    let mut cmd = Command::new(exe);
    cmd.arg("plugin-conformance").arg("--library").arg(&library);
    if let (Some(file), true) = (&config.file.path, config.file.present) {
        cmd.arg("--config").arg(file);
    }
    let status = cmd
        .env_clear()
        .envs(environment::for_worker(std::env::vars_os()))
        .stdin(Stdio::null())
        .stdout(Stdio::from(report_to))
        .status()
        .map_err(super::io("cannot run the conformance suite on", &library))?;
    if !status.success() {
        return Err(CommandError::Refused(format!(
            "{} did not pass the DeviceRail conformance suite (its report is above: each failure with its fix); nothing was installed",
            dir.display()
        )));
    }
    eprintln!("conformance: passed");
    Ok(library)
}
