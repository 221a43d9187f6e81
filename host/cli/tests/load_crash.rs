//! A plugin library whose load-time code crashes (the `load-abort` test
//! plugin: an `.init_array` constructor that aborts, or hangs) must never
//! take the host down: every command opens libraries in a short-lived
//! worker first, so `serve`, `plugins list`, `plugins install` and
//! `doctor` report the file refused with the reason and keep going, with
//! the real binary, the real mock beside it and real `dlopen`s.

mod support;

use support::client::Launch as _;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

use devicerail_client::methods::DevicesList;
use serde_json::Value;
use support::client::{ClientHost, hello};
use support::{Options, mock_library};

const BIN: &str = env!("CARGO_BIN_EXE_devicerail");
const FILE: &str = "libdevicerail_plugin_test_load_abort.so";
const CRASHED: &str =
    "the plugin crashed while loading; its worker ended: killed by signal 6 (SIGABRT)";

fn load_abort_library() -> PathBuf {
    static PATH: OnceLock<PathBuf> = OnceLock::new();
    PATH.get_or_init(|| {
        devicerail_host_testing::build_workspace_plugin(
            "devicerail-host-test-plugin-load-abort",
            "test-load-abort",
        )
    })
    .clone()
}

/// A home for the default locations, so the machine's own never count.
fn xdg_home() -> &'static Path {
    static HOME: OnceLock<tempfile::TempDir> = OnceLock::new();
    HOME.get_or_init(|| tempfile::tempdir().expect("tempdir"))
        .path()
}

/// A root whose plugins directory holds the mock and the load-abort
/// plugin.
fn root() -> tempfile::TempDir {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("plugins");
    std::fs::create_dir_all(&dir).expect("mkdir");
    std::fs::copy(mock_library(), dir.join("libdevicerail_plugin_mock.so")).expect("copy mock");
    std::fs::copy(load_abort_library(), dir.join(FILE)).expect("copy load-abort");
    tmp
}

fn devicerail(args: &[&str], root: &Path, env: &[(&str, &str)]) -> Output {
    let out = Command::new(BIN)
        .args(args)
        .arg("--plugins-dir")
        .arg(root.join("plugins"))
        .env("XDG_DATA_HOME", xdg_home())
        .env_remove("DEVICERAIL_CONFIG")
        .env_remove("DEVICERAIL_PLUGINS_DIR")
        .env_remove("DEVICERAIL_DATA_DIR")
        .env_remove("RUST_LOG")
        .envs(env.iter().copied())
        .output()
        .expect("run devicerail");
    println!(
        "$ devicerail {}\n[exit {:?}]\n{}{}",
        args.join(" "),
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// `plugins list --json`: the entry of `file`.
fn listed(doc: &Value, file: &str) -> Value {
    doc["plugins"]
        .as_array()
        .and_then(|p| p.iter().find(|p| p["file"] == file))
        .cloned()
        .unwrap_or_else(|| panic!("{file} not listed: {doc}"))
}

#[test]
fn plugins_list_reports_the_crashing_library_refused_and_lists_the_mock() {
    let root = root();
    let out = devicerail(&["plugins", "list", "--json"], root.path(), &[]);
    assert!(out.status.success(), "plugins list itself failed");
    let doc: Value = serde_json::from_slice(&out.stdout).expect("json");
    let crashed = listed(&doc, FILE);
    assert_eq!(crashed["status"], "refused", "{crashed}");
    let reason = crashed["reason"].as_str().expect("reason");
    assert!(reason.starts_with(CRASHED), "{reason}");
    let mock = listed(&doc, "libdevicerail_plugin_mock.so");
    assert_eq!(mock["status"], "loaded", "{mock}");
    assert_eq!(mock["devices"][0]["id"], "mock-1", "{mock}");
}

#[test]
fn plugins_install_refuses_the_crashing_library_and_copies_nothing() {
    let root = tempfile::tempdir().expect("tempdir");
    let lib = load_abort_library();
    let lib = lib.to_str().expect("utf-8");
    let out = devicerail(&["plugins", "install", lib], root.path(), &[]);
    assert_eq!(out.status.code(), Some(1), "a refusal, not a crash");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("is not an installable plugin"), "{err}");
    assert!(err.contains(CRASHED), "{err}");
    let dir = root.path().join("plugins");
    let entries = std::fs::read_dir(&dir).map_or(0, |d| d.count());
    assert_eq!(entries, 0, "nothing was copied into {}", dir.display());
    // The mock still installs in the same way.
    let mock = mock_library();
    let out = devicerail(
        &["plugins", "install", mock.to_str().expect("utf-8")],
        root.path(),
        &[],
    );
    assert!(out.status.success());
}

#[test]
fn doctor_fails_the_crashing_library_and_checks_the_rest() {
    let root = root();
    let data = root.path().join("data");
    let out = devicerail(
        &[
            "doctor",
            "--json",
            "--data-dir",
            data.to_str().expect("utf-8"),
        ],
        root.path(),
        &[],
    );
    assert_eq!(out.status.code(), Some(1), "a failed check, not a crash");
    let doc: Value = serde_json::from_slice(&out.stdout).expect("json");
    let check = |source: &str, name: &str| {
        doc["checks"]
            .as_array()
            .and_then(|c| {
                c.iter()
                    .find(|c| c["source"] == source && c["name"] == name)
            })
            .cloned()
            .unwrap_or_else(|| panic!("no check {source}/{name}: {doc}"))
    };
    let crashed = check("host", &format!("plugin file {FILE}"));
    assert_eq!(crashed["status"], "fail", "{crashed}");
    assert!(
        crashed["detail"]
            .as_str()
            .is_some_and(|d| d.starts_with(CRASHED)),
        "{crashed}"
    );
    assert_eq!(check("host", "plugin mock")["status"], "ok");
    // The mock's own checks ran (in its inspecting worker).
    assert_eq!(check("mock", "mock devices")["status"], "ok");
}

#[tokio::test]
async fn serve_refuses_the_crashing_library_and_serves_the_mock() {
    // Process isolation (the default), and inline: an inline plugin is
    // opened by a worker first, so its load-time crash is caught there too.
    for config in [
        None,
        Some("[plugins.test-load-abort]\nisolation = \"inline\"\n"),
    ] {
        let root = root();
        let host = ClientHost::start_owned(
            Options {
                root: Some(root.path().to_path_buf()),
                config: config.map(str::to_owned),
                ..Options::default()
            },
            hello(),
        )
        .await
        .expect("the host starts");
        let listed = host.call0::<DevicesList>().await.expect("devices.list");
        let ids: Vec<&str> = listed.devices.iter().map(|d| d.id.0.as_str()).collect();
        assert_eq!(ids, ["mock-1"], "config {config:?}");
        let log = host.stderr_text();
        assert!(log.contains(CRASHED), "config {config:?}: {log}");
        host.close().await;
    }
}

#[test]
fn a_library_that_hangs_while_loading_is_refused_after_the_open_timeout() {
    let root = root();
    let out = devicerail(
        &["plugins", "list", "--json"],
        root.path(),
        &[("DEVICERAIL_TEST_LOAD_HANG", "1")],
    );
    assert!(out.status.success());
    let doc: Value = serde_json::from_slice(&out.stdout).expect("json");
    let hung = listed(&doc, FILE);
    assert_eq!(hung["status"], "refused", "{hung}");
    assert_eq!(
        hung["reason"], "the plugin did not load within 10 s (its worker was killed)",
        "{hung}"
    );
    assert_eq!(
        listed(&doc, "libdevicerail_plugin_mock.so")["status"],
        "loaded"
    );
}
