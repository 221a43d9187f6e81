//! The smoke suite through the official Python client from PyPI
//! (`host/tests/python/smoke_session.py`), run with the venv `.ci/run`
//! creates (`.ci/python-venv`, or the one `DEVICERAIL_PYTHON_VENV` names)
//! against the real `devicerail serve` with the mock plugin.
//!
//! Without that venv the test prints one line saying it was skipped and
//! why, unless `DEVICERAIL_REQUIRE_PYTHON_CLIENT=1` (as CI sets), where a
//! missing venv fails.

mod support;

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The venv's install command, for the skip line and failures.
const INSTALL: &str = "python3 -m venv .ci/python-venv && .ci/python-venv/bin/pip install \
     --require-hashes -r .ci/python-client-requirements.txt";
/// How long the whole suite may take.
const SUITE_WAIT: Duration = Duration::from_secs(300);

fn workspace_root() -> PathBuf {
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    crate_dir.parent().unwrap_or(crate_dir).to_path_buf()
}

fn venv() -> PathBuf {
    std::env::var_os("DEVICERAIL_PYTHON_VENV")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace_root().join(".ci/python-venv"))
}

/// Reads a pipe to its end on a thread.
fn drain(mut pipe: impl Read + Send + 'static) -> std::thread::JoinHandle<String> {
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = pipe.read_to_end(&mut bytes);
        String::from_utf8_lossy(&bytes).into_owned()
    })
}

#[test]
fn the_official_python_client_runs_a_whole_session() {
    let python = venv().join("bin/python");
    if !python.exists() {
        assert!(
            std::env::var("DEVICERAIL_REQUIRE_PYTHON_CLIENT").as_deref() != Ok("1"),
            "no venv with the official Python client at {} (create it: {INSTALL})",
            venv().display()
        );
        println!(
            "python_client: SKIPPED: no venv with the official Python client at {} (needs python3 with venv; create it with `.ci/run` or `{INSTALL}`)",
            venv().display()
        );
        return;
    }
    let tmp = tempfile::tempdir().expect("tempdir");
    let plugins = support::plugins_dir_with_mock(tmp.path());
    let suite = workspace_root().join("host/tests/python/smoke_session.py");
    let mut child = Command::new(&python)
        .arg(&suite)
        .arg("-v")
        .env("DEVICERAIL_BIN", env!("CARGO_BIN_EXE_devicerail"))
        .env("DEVICERAIL_PLUGINS_DIR", &plugins)
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
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
    // unittest reports on stderr.
    print!("{out}{err}");
    let status = status.unwrap_or_else(|| panic!("the Python suite ran over {SUITE_WAIT:?}"));
    assert!(status.success(), "the Python smoke suite failed ({status})");
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
