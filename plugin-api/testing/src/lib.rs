//! # devicerail-host-testing
//!
//! Test support for this workspace's own crates, kept out of the plugin
//! SDK (`devicerail-host-plugin-api`), because it only works inside this cargo
//! workspace: it builds plugin crates and the host binary with the cargo
//! that runs the tests.
//!
//! * [`build_workspace_plugin`], [`load_workspace_plugin`]: a workspace
//!   plugin crate, built and loaded through the host's loader;
//! * [`client::ClientHost`] and [`client::HostClient`]: the workspace's `devicerail` driven
//!   through the protocol authors' official Rust client (`devicerail-client`
//!   from crates.io), for end-to-end tests;
//! * [`host_process::HostProcess`]: the same binary over raw NDJSON pipes,
//!   only for frames a client refuses to send (malformed lines, calls
//!   before hello, oversized lines);
//! * [`assert_golden`]: wire JSON compared with a golden file byte for
//!   byte;
//! * [`call`]: an `ActionCall` with a fresh id.
//!
//! The conformance suite itself stays in the SDK
//! (`devicerail_host_plugin_api::conformance`), where plugin authors get it.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod client;
pub mod host_process;

use std::path::{Path, PathBuf};
use std::process::Command;

use devicerail_host_plugin_api::library_file_name;
use devicerail_host_plugin_api::loader::{self, LoadedPlugin};
use devicerail_host_plugin_api::protocol::{ActionCall, CallId};
use serde_json::Value;

/// An `ActionCall` of `name` with `arguments` and a fresh call id.
pub fn call(name: &str, arguments: Value) -> ActionCall {
    ActionCall::new(CallId::new_v4(), name, arguments)
}

/// A fresh temporary root with copies of `plugins` in its `plugins/`
/// directory (returned beside it); a host serving from it keeps its data
/// in `data/`.
pub fn root_with_plugins(plugins: &[PathBuf]) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("tempdir: {e}"));
    let plugins_dir = dir.path().join("plugins");
    std::fs::create_dir_all(&plugins_dir).unwrap_or_else(|e| panic!("mkdir: {e}"));
    for p in plugins {
        let name = p.file_name().unwrap_or_default();
        std::fs::copy(p, plugins_dir.join(name))
            .unwrap_or_else(|e| panic!("copy {}: {e}", p.display()));
    }
    (dir, plugins_dir)
}

/// The `target/<profile>` directory of the running test binary.
pub fn profile_dir() -> PathBuf {
    let exe = std::env::current_exe().unwrap_or_default();
    // target/<profile>/deps/<test-binary>
    exe.parent()
        .and_then(Path::parent)
        .map(Path::to_path_buf)
        .unwrap_or_default()
}

/// A `cargo` command that builds into the running test binary's target
/// directory (the one [`profile_dir`] is in), whatever the environment says,
/// so nested builds reuse the outer build instead of filling a second
/// target directory.
pub fn cargo_command() -> Command {
    let mut cmd = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    if let Some(target) = profile_dir().parent() {
        cmd.env("CARGO_TARGET_DIR", target);
    }
    cmd
}

/// Builds a workspace plugin crate with cargo (a no-op when up to date)
/// and returns the path of its library in the test binary's profile. Each
/// package is built at most once per process.
pub fn build_workspace_plugin(package: &str, plugin_id: &str) -> PathBuf {
    static BUILT: std::sync::OnceLock<
        std::sync::Mutex<std::collections::HashMap<String, PathBuf>>,
    > = std::sync::OnceLock::new();
    let built = BUILT.get_or_init(Default::default);
    // Holding the lock across the build also keeps concurrent tests of one
    // binary from racing cargo against itself.
    let mut built = built.lock().unwrap_or_else(|p| p.into_inner());
    let key = format!("{package}/{plugin_id}");
    if let Some(path) = built.get(&key) {
        return path.clone();
    }
    let path = build_uncached(package, plugin_id);
    built.insert(key, path.clone());
    path
}

fn build_uncached(package: &str, plugin_id: &str) -> PathBuf {
    let dir = profile_dir();
    let build = |features: Option<&str>, quiet_errors: bool| {
        let mut cmd = cargo_command();
        cmd.args(["build", "--quiet", "-p", package]);
        if let Some(f) = features {
            cmd.args(["--features", f]);
        }
        if dir.file_name().is_some_and(|n| n == "release") {
            cmd.arg("--release");
        }
        if quiet_errors {
            cmd.stderr(std::process::Stdio::null());
        }
        cmd.status()
            .unwrap_or_else(|e| panic!("could not run cargo build -p {package}: {e}"))
    };
    // Test builds compile the plugin-api with this feature; building the
    // library with the same set reuses (and does not overwrite) what the
    // test build made. Packages without the plugin-api fall back.
    let same_as_tests = build(Some("devicerail-host-plugin-api/conformance"), true);
    if !same_as_tests.success() {
        let status = build(None, false);
        assert!(status.success(), "cargo build -p {package} failed");
    }
    let path = dir.join(library_file_name(plugin_id));
    assert!(
        path.exists(),
        "{} was not produced by cargo build -p {package}",
        path.display()
    );
    path
}

/// Builds and loads a workspace plugin.
pub fn load_workspace_plugin(package: &str, plugin_id: &str) -> LoadedPlugin {
    load_workspace_plugin_with(package, plugin_id, &serde_json::Map::new())
}

/// Builds and loads a workspace plugin with host-provided settings.
pub fn load_workspace_plugin_with(
    package: &str,
    plugin_id: &str,
    settings: &serde_json::Map<String, Value>,
) -> LoadedPlugin {
    let path = build_workspace_plugin(package, plugin_id);
    loader::load(&path, settings).unwrap_or_else(|e| panic!("{} did not load: {e}", path.display()))
}

/// Environment variable: set to `1` to (re)write golden files instead of
/// comparing with them.
pub const UPDATE_GOLDEN_ENV: &str = "DEVICERAIL_UPDATE_GOLDEN";

/// Compares `value`'s wire JSON with the golden file at `path` byte for
/// byte (a driver's capabilities must not change by accident); with
/// [`UPDATE_GOLDEN_ENV`]`=1` it writes the file instead.
pub fn assert_golden<T: serde::Serialize>(path: &std::path::Path, value: &T) {
    let json = serde_json::to_string(value).unwrap_or_else(|e| panic!("serialize: {e}"));
    if std::env::var(UPDATE_GOLDEN_ENV).is_ok_and(|v| v == "1") {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).unwrap_or_else(|e| panic!("mkdir: {e}"));
        }
        std::fs::write(path, format!("{json}\n"))
            .unwrap_or_else(|e| panic!("write {}: {e}", path.display()));
        println!("golden: wrote {}", path.display());
        return;
    }
    let golden = std::fs::read_to_string(path).unwrap_or_else(|e| {
        panic!(
            "read {}: {e} (run with {UPDATE_GOLDEN_ENV}=1 to create it)",
            path.display()
        )
    });
    assert!(
        golden.trim_end() == json,
        "the wire JSON differs from {} (run with {UPDATE_GOLDEN_ENV}=1 if the change is intended)\nnow:    {json}\ngolden: {}",
        path.display(),
        golden.trim_end()
    );
    println!("golden: {} matches ({} bytes)", path.display(), json.len());
}
