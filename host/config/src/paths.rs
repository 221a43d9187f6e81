//! Where the host keeps plugins and data.
//!
//! Plugins dir: `--plugins-dir`, else `DEVICERAIL_PLUGINS_DIR`, else the
//! platform data dir (`$XDG_DATA_HOME/devicerail/plugins`, i.e.
//! `~/.local/share/devicerail/plugins` on Linux;
//! `~/Library/Application Support/devicerail/plugins` on macOS). The data
//! dir follows the same rule with `DEVICERAIL_DATA_DIR` and `data`.
//! Relative paths resolve against the working directory. The configuration
//! file (`crate`) can set both; these are the defaults under it.
//!
//! It only works out paths: it never creates a directory or opens a file.

use std::path::{Path, PathBuf};

/// Environment variable naming the plugins directory.
pub(crate) const PLUGINS_DIR_ENV: &str = "DEVICERAIL_PLUGINS_DIR";
/// Environment variable naming the data directory.
pub(crate) const DATA_DIR_ENV: &str = "DEVICERAIL_DATA_DIR";

/// Why a directory or socket path could not be worked out.
#[derive(Debug, thiserror::Error)]
pub enum PathError {
    /// Nothing named the path and the default needs a home directory that
    /// the environment does not give.
    #[error("cannot determine a default {what} directory: HOME is not set (pass --{what}-dir)")]
    NoHome {
        /// Which path was wanted: `plugins`, `data` or `socket`.
        what: &'static str,
    },
    /// A relative path could not be made absolute (the working directory
    /// is unreadable or gone).
    #[error("cannot resolve {path}: {source}")]
    Resolve {
        /// The path as given.
        path: PathBuf,
        /// Why the working directory could not be read.
        source: std::io::Error,
    },
}

/// The platform's per-user data directory for DeviceRail, with `env` as
/// the environment: plugins, data and the configuration file live there.
pub(crate) fn platform_base_with(env: &dyn Fn(&str) -> Option<String>) -> Option<PathBuf> {
    if cfg!(target_os = "macos") {
        env("HOME").map(|h| PathBuf::from(h).join("Library/Application Support/devicerail"))
    } else {
        env("XDG_DATA_HOME")
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
            .or_else(|| env("HOME").map(|h| PathBuf::from(h).join(".local/share")))
            .map(|p| p.join("devicerail"))
    }
}

/// The platform's per-user configuration directory for DeviceRail, with
/// `env` as the environment: `$XDG_CONFIG_HOME/devicerail` (else
/// `~/.config/devicerail`) on Linux, `~/Library/Application
/// Support/devicerail` on macOS (where configuration and data share one
/// place).
pub fn config_base_with(env: &dyn Fn(&str) -> Option<String>) -> Option<PathBuf> {
    if cfg!(target_os = "macos") {
        platform_base_with(env)
    } else {
        env("XDG_CONFIG_HOME")
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
            .or_else(|| env("HOME").map(|h| PathBuf::from(h).join(".config")))
            .map(|p| p.join("devicerail"))
    }
}

/// The platform's per-user data directory for DeviceRail.
fn platform_base() -> Option<PathBuf> {
    platform_base_with(&|name| std::env::var(name).ok())
}

/// Makes `path` absolute against the working directory.
pub fn absolute(path: &Path) -> Result<PathBuf, PathError> {
    std::path::absolute(path).map_err(|source| PathError::Resolve {
        path: path.to_path_buf(),
        source,
    })
}

fn resolve(flag: Option<&Path>, env: &str, leaf: &'static str) -> Result<PathBuf, PathError> {
    if let Some(p) = flag {
        return absolute(p);
    }
    if let Some(v) = std::env::var_os(env).filter(|v| !v.is_empty()) {
        return absolute(Path::new(&v));
    }
    platform_base()
        .map(|b| b.join(leaf))
        .ok_or(PathError::NoHome { what: leaf })
}

/// The plugins directory to use.
pub fn plugins_dir(flag: Option<&Path>) -> Result<PathBuf, PathError> {
    resolve(flag, PLUGINS_DIR_ENV, "plugins")
}

/// The data directory to use.
pub fn data_dir(flag: Option<&Path>) -> Result<PathBuf, PathError> {
    resolve(flag, DATA_DIR_ENV, "data")
}

/// Environment variable naming the shared host's control socket.
pub(crate) const SOCKET_ENV: &str = "DEVICERAIL_SOCKET";

/// The control socket to listen on or attach to: the flag, else
/// `DEVICERAIL_SOCKET`, else `devicerail/host.sock` in the user's runtime
/// directory (`$XDG_RUNTIME_DIR`), else in the user's state directory
/// (`$XDG_STATE_HOME`, i.e. `~/.local/state`; `~/Library/Application
/// Support/devicerail` on macOS).
pub fn socket_path(flag: Option<&Path>) -> Result<PathBuf, PathError> {
    if let Some(p) = flag {
        return absolute(p);
    }
    if let Some(v) = std::env::var_os(SOCKET_ENV).filter(|v| !v.is_empty()) {
        return absolute(Path::new(&v));
    }
    let nonempty = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty());
    let base = if cfg!(target_os = "macos") {
        platform_base()
    } else {
        nonempty("XDG_RUNTIME_DIR")
            .or_else(|| nonempty("XDG_STATE_HOME"))
            .map(PathBuf::from)
            .or_else(|| nonempty("HOME").map(|h| PathBuf::from(h).join(".local/state")))
            .map(|p| p.join("devicerail"))
    };
    base.map(|b| b.join("host.sock"))
        .ok_or(PathError::NoHome { what: "socket" })
}

/// Where the plugins that ship with this `devicerail` binary are, given the
/// binary's path: `../lib/devicerail/plugins` beside a release archive's
/// `bin/`, else the binary's own directory when it runs from a cargo build
/// (`target/<profile>/`, where the plugin libraries are built next to it).
/// `None` when neither holds a plugin library.
pub fn shipped_plugins_dir(exe: &Path) -> Option<PathBuf> {
    let bin = exe.parent()?;
    let archive = bin.join("../lib/devicerail/plugins");
    let holds_plugins = |dir: &Path| {
        std::fs::read_dir(dir).is_ok_and(|entries| {
            entries.filter_map(Result::ok).any(|e| {
                e.file_name().to_str().is_some_and(|n| {
                    n.starts_with(SHIPPED_PREFIX) && n.ends_with(std::env::consts::DLL_SUFFIX)
                })
            })
        })
    };
    if holds_plugins(&archive) {
        return std::path::absolute(&archive).ok();
    }
    holds_plugins(bin).then(|| bin.to_path_buf())
}

/// The file-name prefix of plugin libraries.
const SHIPPED_PREFIX: &str = "libdevicerail_plugin_";

#[cfg(test)]
mod shipped_tests {
    use super::*;

    #[test]
    fn the_archive_layout_wins_over_the_binary_directory() {
        let root = tempfile::tempdir().expect("tempdir");
        let bin = root.path().join("bin");
        let plugins = root.path().join("lib/devicerail/plugins");
        std::fs::create_dir_all(&bin).expect("bin");
        std::fs::create_dir_all(&plugins).expect("plugins");
        let exe = bin.join("devicerail");
        assert_eq!(shipped_plugins_dir(&exe), None);
        let lib = format!("libdevicerail_plugin_mock{}", std::env::consts::DLL_SUFFIX);
        std::fs::write(bin.join(&lib), b"").expect("write");
        assert_eq!(shipped_plugins_dir(&exe).as_deref(), Some(bin.as_path()));
        std::fs::write(plugins.join(&lib), b"").expect("write");
        let found = shipped_plugins_dir(&exe).expect("archive");
        assert!(
            found.ends_with("lib/devicerail/plugins"),
            "{}",
            found.display()
        );
    }
}
