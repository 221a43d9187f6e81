//! The Python venv `.ci/run` creates (`.ci/python-venv`, or the one
//! `DEVICERAIL_PYTHON_VENV` names) and running a Python suite from it
//! against the real binary, with a deadline and both output streams kept.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// The workspace's root directory.
pub(crate) fn workspace_root() -> PathBuf {
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    crate_dir
        .ancestors()
        .nth(2)
        .unwrap_or(crate_dir)
        .to_path_buf()
}

/// The venv's directory.
pub(crate) fn venv() -> PathBuf {
    std::env::var_os("DEVICERAIL_PYTHON_VENV")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace_root().join(".ci/python-venv"))
}

/// The venv's python when it can `import` every module of `imports`;
/// otherwise `None` after one line saying `test` was skipped and why, or
/// a failure with `DEVICERAIL_REQUIRE_PYTHON_CLIENT=1` (as CI sets).
/// `what` names what the venv lacks, `install` how to create it.
pub(crate) fn venv_python(test: &str, what: &str, imports: &str, install: &str) -> Option<PathBuf> {
    let venv = venv();
    let python = venv.join("bin/python");
    let usable = python.exists()
        && Command::new(&python)
            .args(["-c", &format!("import {imports}")])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
    if usable {
        return Some(python);
    }
    assert!(
        std::env::var("DEVICERAIL_REQUIRE_PYTHON_CLIENT").as_deref() != Ok("1"),
        "no venv with {what} at {} (create it: {install})",
        venv.display()
    );
    println!(
        "{test}: SKIPPED: no venv with {what} at {} (needs python3 with venv; create it with `.ci/run` or `{install}`)",
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

/// A finished suite run.
pub(crate) struct SuiteRun {
    pub status: ExitStatus,
    pub out: String,
    pub err: String,
}

/// Runs `cmd` (stdin closed, output captured and printed), killing it and
/// failing past `wait`; `what` names it in that failure.
pub(crate) fn run_suite(mut cmd: Command, wait: Duration, what: &str) -> SuiteRun {
    let mut child = cmd
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("run {what}: {e}"));
    let out = drain(child.stdout.take().expect("stdout"));
    let err = drain(child.stderr.take().expect("stderr"));
    let deadline = Instant::now() + wait;
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
    let status = status.unwrap_or_else(|| panic!("{what} ran over {wait:?}"));
    SuiteRun { status, out, err }
}
