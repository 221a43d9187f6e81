//! The smoke suite through the official Python client from PyPI
//! (`host/cli/tests/python/smoke_session.py`), run with the venv `.ci/run`
//! creates (`.ci/python-venv`, or the one `DEVICERAIL_PYTHON_VENV` names)
//! against the real `devicerail serve` with the mock plugin.
//!
//! Without that venv the test prints one line saying it was skipped and
//! why, unless `DEVICERAIL_REQUIRE_PYTHON_CLIENT=1` (as CI sets), where a
//! missing venv fails.

mod support;

use std::process::Command;
use std::time::Duration;

use support::python;

/// The venv's install command, for the skip line and failures.
const INSTALL: &str = "python3 -m venv .ci/python-venv && .ci/python-venv/bin/pip install \
     --require-hashes -r .ci/python-client-requirements.txt";
/// How long the whole suite may take.
const SUITE_WAIT: Duration = Duration::from_secs(300);

#[test]
fn the_official_python_client_runs_a_whole_session() {
    let Some(python) = python::venv_python(
        "python_client",
        "the official Python client",
        "devicerail",
        INSTALL,
    ) else {
        return;
    };
    let tmp = tempfile::tempdir().expect("tempdir");
    let plugins = support::plugins_dir_with_mock(tmp.path());
    let mut cmd = Command::new(&python);
    cmd.arg(python::workspace_root().join("host/cli/tests/python/smoke_session.py"))
        .arg("-v")
        .env("DEVICERAIL_BIN", env!("CARGO_BIN_EXE_devicerail"))
        .env("DEVICERAIL_PLUGINS_DIR", &plugins);
    let run = python::run_suite(cmd, SUITE_WAIT, "the Python suite");
    assert!(
        run.status.success(),
        "the Python smoke suite failed ({})",
        run.status
    );
    let err = run.err;
    let ran: usize = err
        .lines()
        .find_map(|l| {
            l.strip_prefix("Ran ")?
                .split_whitespace()
                .next()?
                .parse()
                .ok()
        })
        .unwrap_or(0);
    assert!(ran >= 6, "the Python suite ran {ran} tests");
}
