//! `devicerail mcp` driven by the official MCP Python SDK (`mcp` from
//! PyPI, `host/tests/python/mcp_agent.py`), run with the venv `.ci/run`
//! creates (`.ci/python-venv`, or the one `DEVICERAIL_PYTHON_VENV` names)
//! against the real binary: tool listing with schemas, every result
//! checked against its output schema, a scripted agent signing in through
//! refs on the mock and in real Chromium, the 1,000-row outline budget,
//! two agents sharing a host under leases, and the secret never in a tool
//! result, the recorded Session, its report or the server's log.
//!
//! Without the venv each test prints one line saying it was skipped and
//! why, unless `DEVICERAIL_REQUIRE_PYTHON_CLIENT=1` (as CI sets), where a
//! missing venv fails.

mod support;

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The venv's install command, for the skip line and failures.
const INSTALL: &str = "python3 -m venv .ci/python-venv && .ci/python-venv/bin/pip install \
     --require-hashes -r .ci/python-client-requirements.txt -r .ci/python-mcp-requirements.txt";
/// How long one suite run may take.
const SUITE_WAIT: Duration = Duration::from_secs(600);

fn workspace_root() -> PathBuf {
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    crate_dir.parent().unwrap_or(crate_dir).to_path_buf()
}

fn venv_python() -> Option<PathBuf> {
    let venv = std::env::var_os("DEVICERAIL_PYTHON_VENV")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace_root().join(".ci/python-venv"));
    let python = venv.join("bin/python");
    let has_sdk = python.exists()
        && Command::new(&python)
            .args(["-c", "import mcp, jsonschema"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
    if has_sdk {
        return Some(python);
    }
    assert!(
        std::env::var("DEVICERAIL_REQUIRE_PYTHON_CLIENT").as_deref() != Ok("1"),
        "no venv with the MCP Python SDK at {} (create it: {INSTALL})",
        venv.display()
    );
    println!(
        "mcp: SKIPPED: no venv with the MCP Python SDK at {} (create it with `.ci/run` or `{INSTALL}`)",
        venv.display()
    );
    None
}

/// Reads a pipe to its end on a thread.
fn drain(mut pipe: impl Read + Send + 'static) -> std::thread::JoinHandle<String> {
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = pipe.read_to_end(&mut bytes);
        String::from_utf8_lossy(&bytes).into_owned()
    })
}

/// Runs the unittest classes `classes` of the suite; returns its output.
fn run_suite(python: &Path, classes: &[&str], env: &[(&str, &Path)]) -> String {
    let suite = workspace_root().join("host/tests/python/mcp_agent.py");
    let mut cmd = Command::new(python);
    cmd.arg(&suite)
        .arg("-v")
        .args(classes)
        .env("DEVICERAIL_BIN", env!("CARGO_BIN_EXE_devicerail"))
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd
        .spawn()
        .unwrap_or_else(|e| panic!("run {}: {e}", python.display()));
    let out = drain(child.stdout.take().expect("stdout"));
    let err = drain(child.stderr.take().expect("stderr"));
    let deadline = Instant::now() + SUITE_WAIT;
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break Some(status);
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let out = out.join().unwrap_or_default();
    let err = err.join().unwrap_or_default();
    print!("{out}{err}");
    let status = status.unwrap_or_else(|| panic!("the MCP suite ran over {SUITE_WAIT:?}"));
    assert!(status.success(), "the MCP suite failed ({status})");
    assert!(!err.contains("skipped"), "a scenario was skipped");
    format!("{out}{err}")
}

fn ran(output: &str) -> usize {
    output
        .lines()
        .find_map(|l| {
            l.strip_prefix("Ran ")?
                .split_whitespace()
                .next()?
                .parse()
                .ok()
        })
        .unwrap_or(0)
}

#[test]
fn the_mcp_sdk_lists_the_tools_and_an_agent_signs_in_on_the_mock() {
    let Some(python) = venv_python() else {
        return;
    };
    let tmp = tempfile::tempdir().expect("tempdir");
    let plugins = support::plugins_dir_with_mock(tmp.path());
    let out = run_suite(
        &python,
        &["McpTools", "McpMock", "McpShared"],
        &[("DEVICERAIL_PLUGINS_DIR", &plugins)],
    );
    assert_eq!(ran(&out), 4, "{out}");
    assert!(out.contains("1,000 rows: outline"), "{out}");
}

#[test]
fn an_agent_signs_in_on_a_local_page_in_chromium() {
    let Some(python) = venv_python() else {
        return;
    };
    devicerail_plugin_browser::binary::find(None).expect(
        "these tests drive a real Chromium (Debian: apt-get install -y chromium, or set CHROME_PATH)",
    );
    let tmp = tempfile::tempdir().expect("tempdir");
    let plugins = support::plugins_dir_with_mock(tmp.path());
    let browser =
        devicerail_testing::build_workspace_plugin("devicerail-plugin-browser", "browser");
    std::fs::copy(&browser, plugins.join("libdevicerail_plugin_browser.so"))
        .expect("copy the browser plugin");
    let out = run_suite(
        &python,
        &["McpChromium"],
        &[
            ("DEVICERAIL_PLUGINS_DIR", &plugins),
            ("DEVICERAIL_BROWSER_PLUGINS_DIR", &plugins),
        ],
    );
    assert_eq!(ran(&out), 1, "{out}");
    assert!(out.contains("chromium: JPEG"), "{out}");
}

#[test]
fn mcp_refuses_a_data_directory_held_by_a_host_that_does_not_share_it() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let mut host = support::TestHost::with(support::Options {
        root: Some(tmp.path().to_path_buf()),
        ..support::Options::default()
    });
    host.hello();
    let out = Command::new(env!("CARGO_BIN_EXE_devicerail"))
        .arg("mcp")
        .arg("--plugins-dir")
        .arg(tmp.path().join("plugins"))
        .arg("--data-dir")
        .arg(tmp.path().join("data"))
        .env("DEVICERAIL_SOCKET", tmp.path().join("no-host.sock"))
        .stdin(Stdio::null())
        .output()
        .expect("run devicerail mcp");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(out.stdout.is_empty(), "nothing but MCP on stdout");
    assert!(
        err.contains("in use by a DeviceRail host that does not share it")
            && err.contains("devicerail serve --listen unix"),
        "{err}"
    );
    host.close_stdin();
    assert!(host.finish().success());
}
