//! `devicerail mcp` driven by the official MCP Python SDK (`mcp` from
//! PyPI, `host/cli/tests/python/mcp_agent.py`), run with the venv `.ci/run`
//! creates (`.ci/python-venv`, or the one `DEVICERAIL_PYTHON_VENV` names)
//! against the real binary: tool listing with schemas, every result
//! checked against its output schema, a scripted agent signing in through
//! refs on the mock and in real Chromium, the 1,000-row outline budget,
//! two agents sharing a host under leases, and the secret never in a tool
//! result, the recorded Session, its report or the server's log; stable
//! refs, diffs, effects (`no visible change`) and `stale_ref`.
//!
//! Without the venv each test prints one line saying it was skipped and
//! why, unless `DEVICERAIL_REQUIRE_PYTHON_CLIENT=1` (as CI sets), where a
//! missing venv fails.

mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use support::python;

/// The venv's install command, for the skip line and failures.
const INSTALL: &str = "python3 -m venv .ci/python-venv && .ci/python-venv/bin/pip install \
     --require-hashes -r .ci/python-client-requirements.txt -r .ci/python-mcp-requirements.txt";
/// How long one suite run may take.
const SUITE_WAIT: Duration = Duration::from_secs(600);
/// How long the agent bench may take (20 MCP servers, half on Chromium).
const BENCH_WAIT: Duration = Duration::from_secs(1500);

fn venv_python() -> Option<PathBuf> {
    python::venv_python("mcp", "the MCP Python SDK", "mcp, jsonschema", INSTALL)
}

/// Runs the unittest classes `classes` of the suite; returns its output.
fn run_suite(python: &Path, classes: &[&str], env: &[(&str, &Path)]) -> String {
    let mut cmd = Command::new(python);
    cmd.arg(python::workspace_root().join("host/cli/tests/python/mcp_agent.py"))
        .arg("-v")
        .args(classes)
        .env("DEVICERAIL_BIN", env!("CARGO_BIN_EXE_devicerail"));
    for (k, v) in env {
        cmd.env(k, v);
    }
    let run = python::run_suite(cmd, SUITE_WAIT, "the MCP suite");
    assert!(
        run.status.success(),
        "the MCP suite failed ({})",
        run.status
    );
    assert!(!run.err.contains("skipped"), "a scenario was skipped");
    format!("{}{}", run.out, run.err)
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

/// The suite's `classes` against the mock (`None` when the venv is
/// missing and the suite may be skipped).
fn mock_suite(classes: &[&str]) -> Option<String> {
    let python = venv_python()?;
    let tmp = tempfile::tempdir().expect("tempdir");
    let plugins = support::plugins_dir_with_mock(tmp.path());
    Some(run_suite(
        &python,
        classes,
        &[("DEVICERAIL_PLUGINS_DIR", &plugins)],
    ))
}

#[test]
fn the_mcp_sdk_lists_the_tools_and_an_agent_signs_in_on_the_mock() {
    let Some(out) = mock_suite(&["McpTools", "McpMock", "McpShared"]) else {
        return;
    };
    assert_eq!(ran(&out), 4, "{out}");
    assert!(out.contains("1,000 rows: outline"), "{out}");
}

/// Replay for agents (issue 39): `session` op=replay runs a recorded
/// Session, then a bundle of it, on the device as new Sessions, through
/// the official MCP Python SDK; refused while a Session is active.
#[test]
fn an_agent_replays_a_session_and_a_bundle_through_the_mcp_sdk() {
    let Some(out) = mock_suite(&["McpReplay"]) else {
        return;
    };
    assert_eq!(ran(&out), 1, "{out}");
    assert!(out.contains("mcp replay: "), "{out}");
}

/// Issue 29 through the SDK: refs stable across looks at an unchanged
/// screen, diffs smaller than outlines, every no-op tap flagged (in the
/// report too), and an element removed, replaced, duplicated or moved
/// between observe and act: `stale_ref` or the same element where it is
/// now, never another one.
#[test]
fn refs_diffs_effects_and_stale_refs_through_the_mcp_sdk() {
    let Some(out) = mock_suite(&["McpAgent"]) else {
        return;
    };
    assert_eq!(ran(&out), 3, "{out}");
    assert!(out.contains("0 wrong-element actions"), "{out}");
    assert!(out.contains("no-op taps: 4 of 4 flagged"), "{out}");
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
    let browser = devicerail_host_testing::build_workspace_plugin(
        "devicerail-host-plugin-browser",
        "browser",
    );
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

/// Issue 29's benchmark loop (`scripts/bench-agent` runs the same script
/// on release builds), once, on the mock and in real Chromium: every task
/// succeeds, no action lands on a wrong element, every no-op tap is
/// flagged, a changed screen answers `stale_ref`, and over the whole loop
/// the agent reads at least 60 % fewer characters than with full
/// re-observation.
#[test]
fn the_agent_bench_meets_the_issue_29_targets() {
    let Some(python) = venv_python() else {
        return;
    };
    devicerail_plugin_browser::binary::find(None).expect(
        "the bench drives a real Chromium (Debian: apt-get install -y chromium, or set CHROME_PATH)",
    );
    let tmp = tempfile::tempdir().expect("tempdir");
    let plugins = support::plugins_dir_with_mock(tmp.path());
    let browser = devicerail_host_testing::build_workspace_plugin(
        "devicerail-host-plugin-browser",
        "browser",
    );
    std::fs::copy(&browser, plugins.join("libdevicerail_plugin_browser.so"))
        .expect("copy the browser plugin");
    let out_json = tmp.path().join("bench.json");
    let mut cmd = Command::new(&python);
    cmd.arg(python::workspace_root().join("host/cli/tests/python/agent_bench.py"))
        .arg("--json")
        .arg(&out_json)
        .env("DEVICERAIL_BIN", env!("CARGO_BIN_EXE_devicerail"))
        .env("DEVICERAIL_PLUGINS_DIR", &plugins);
    let run = python::run_suite(cmd, BENCH_WAIT, "the agent bench");
    let shown = format!("{}{}", run.out, run.err);
    assert!(run.status.success(), "the agent bench failed:\n{shown}");
    println!("{}", run.out);
    let figures: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&out_json).expect("bench JSON")).expect("JSON");
    let s = &figures["summary"];
    assert_eq!(s["all_succeeded"], true, "{shown}");
    assert_eq!(s["wrong_element"], 0, "{shown}");
    assert_eq!(s["no_op_flagged"], s["no_op_taps"], "{shown}");
    assert_eq!(s["no_op_taps"], 10, "one no-op tap per task and platform");
    assert_eq!(s["stale_refs"], 6, "three changes per platform: {shown}");
    for platform in ["mock", "chromium"] {
        let reduction = s[platform]["reduction_text"].as_f64().expect("reduction");
        assert!(
            reduction >= 0.6,
            "{platform}: {:.0} % fewer characters than full re-observation\n{shown}",
            reduction * 100.0
        );
    }
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
