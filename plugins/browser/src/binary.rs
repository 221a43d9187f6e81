//! Finding the browser executable and asking it for its version.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Environment variable naming the browser executable.
pub(crate) const CHROME_PATH_ENV: &str = "CHROME_PATH";

/// Executable names searched on `PATH`, in order.
pub(crate) const CANDIDATES: [&str; 5] = [
    "chromium",
    "google-chrome",
    "google-chrome-stable",
    "chromium-browser",
    "chrome",
];

/// Why no usable browser executable was found.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BinaryError {
    /// The configured path (setting or `CHROME_PATH`) is not an
    /// executable file, nor a name found on `PATH`.
    #[error("the configured browser {0} does not exist or is not a file")]
    Missing(
        /// The path as configured.
        PathBuf,
    ),
    /// Nothing was configured and no known browser name is on `PATH`.
    #[error(
        "no Chromium or Chrome found: set CHROME_PATH (or the plugin setting \"binary\") to the browser executable, or install one of {candidates} on PATH"
    )]
    NotFound {
        /// The executable names searched, comma-separated.
        candidates: String,
    },
    /// The browser could not be run with `--version`, or printed nothing.
    #[error("{binary} --version failed: {reason}")]
    Version {
        /// The executable run.
        binary: PathBuf,
        /// The spawn error, or the exit status and stderr.
        reason: String,
    },
}

/// The executable to launch: `configured`, else `CHROME_PATH`, else the
/// first candidate on `PATH`.
pub fn find(configured: Option<&Path>) -> Result<PathBuf, BinaryError> {
    if let Some(path) = configured {
        return resolve_explicit(path);
    }
    if let Some(path) = std::env::var_os(CHROME_PATH_ENV).filter(|p| !p.is_empty()) {
        return resolve_explicit(Path::new(&path));
    }
    let path_var = std::env::var_os("PATH").unwrap_or_default();
    for name in CANDIDATES {
        for dir in std::env::split_paths(&path_var) {
            let candidate = dir.join(name);
            if is_executable(&candidate) {
                return Ok(candidate);
            }
        }
    }
    Err(BinaryError::NotFound {
        candidates: CANDIDATES.join(", "),
    })
}

fn resolve_explicit(path: &Path) -> Result<PathBuf, BinaryError> {
    if is_executable(path) {
        return Ok(path.to_path_buf());
    }
    // A bare name such as "chromium" is looked up on PATH.
    if path.components().count() == 1 {
        let path_var = std::env::var_os("PATH").unwrap_or_default();
        for dir in std::env::split_paths(&path_var) {
            let candidate = dir.join(path);
            if is_executable(&candidate) {
                return Ok(candidate);
            }
        }
    }
    Err(BinaryError::Missing(path.to_path_buf()))
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// The browser's `--version` line, e.g. `Chromium 140.0.7339.185`.
pub(crate) fn version(binary: &Path) -> Result<String, BinaryError> {
    let out = Command::new(binary)
        .arg("--version")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .output()
        .map_err(|e| BinaryError::Version {
            binary: binary.to_path_buf(),
            reason: e.to_string(),
        })?;
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text.lines().map(str::trim).find(|l| !l.is_empty());
    match line {
        Some(line) if out.status.success() => Ok(line.to_owned()),
        _ => Err(BinaryError::Version {
            binary: binary.to_path_buf(),
            reason: format!(
                "exit status {}, stderr: {}",
                out.status,
                String::from_utf8_lossy(&out.stderr).trim()
            ),
        }),
    }
}
