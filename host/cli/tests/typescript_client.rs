//! The TypeScript example client (`examples/typescript-client`), compiled
//! with the protocol package's pinned `tsc`, runs against the real
//! `devicerail serve` with the mock plugin. Needs Node.js and npm; runs
//! `npm ci` in `schema/typescript` when its `node_modules` is missing.

mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::Value;

const INSTALL_HINT: &str = "the TypeScript checks need Node.js and npm: install them \
     (Debian/Ubuntu: `sudo apt-get install nodejs npm`) and run the tests again";

fn workspace_root() -> PathBuf {
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    crate_dir
        .ancestors()
        .nth(2)
        .unwrap_or(crate_dir)
        .to_path_buf()
}

fn runs(program: &str) -> bool {
    Command::new(program)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

fn read_json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    serde_json::from_str(&text).unwrap_or(Value::Null)
}

/// The devDependencies whose installed version differs from the pinned one.
fn outdated(package: &Path) -> Vec<String> {
    let manifest = read_json(&package.join("package.json"));
    let Some(pinned) = manifest["devDependencies"].as_object() else {
        panic!(
            "{}: no devDependencies",
            package.join("package.json").display()
        );
    };
    pinned
        .iter()
        .filter(|(name, version)| {
            let installed =
                read_json(&package.join("node_modules").join(name).join("package.json"));
            installed["version"].as_str() != version.as_str()
        })
        .map(|(name, _)| name.clone())
        .collect()
}

/// `schema/typescript` with its pinned devDependencies installed (the same
/// check as the schema crate's tests, which this crate does not depend on).
fn typescript_package() -> PathBuf {
    let package = workspace_root().join("schema/typescript");
    assert!(runs("node"), "`node` is not installed: {INSTALL_HINT}");
    let missing = outdated(&package);
    if !missing.is_empty() {
        assert!(runs("npm"), "`npm` is not installed: {INSTALL_HINT}");
        println!(
            "typescript: running `npm ci` in schema/typescript ({} not installed at the pinned version)",
            missing.join(", ")
        );
        let status = Command::new("npm")
            .args(["ci", "--no-audit", "--no-fund"])
            .current_dir(&package)
            .status()
            .unwrap_or_else(|e| panic!("npm ci: {e}"));
        assert!(status.success(), "`npm ci` failed in {}", package.display());
    }
    package
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

#[test]
fn typescript_example_client_talks_to_the_host() {
    let started = Instant::now();
    let package = typescript_package();
    let example = workspace_root().join("examples/typescript-client");
    let tmp = tempfile::tempdir().expect("tempdir");
    let out_dir = tmp.path().join("js");

    let compile = Command::new("node")
        .arg(package.join("node_modules/typescript/bin/tsc"))
        .args(["-p", "tsconfig.json", "--pretty", "false", "--outDir"])
        .arg(&out_dir)
        .current_dir(&example)
        .output()
        .expect("run tsc");
    assert!(
        compile.status.success(),
        "tsc rejects the example:\n{}",
        text(&compile)
    );
    let compiled = started.elapsed();

    let plugins = support::plugins_dir_with_mock(tmp.path());
    let run_started = Instant::now();
    let child = Command::new("node")
        .arg(out_dir.join("client.mjs"))
        .arg("--plugins-dir")
        .arg(&plugins)
        .arg("--data-dir")
        .arg(tmp.path().join("data"))
        .env("DEVICERAIL_BIN", env!("CARGO_BIN_EXE_devicerail"))
        .env("RUST_LOG", "warn")
        .env_remove("DEVICERAIL_SCREENSHOT_POLICY")
        .env_remove("DEVICERAIL_MOCK_FAULTS")
        .env_remove("DEVICERAIL_MOCK_DEVICES")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn node");
    let pid = i32::try_from(child.id()).expect("pid");
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    let run = match rx.recv_timeout(Duration::from_secs(90)) {
        Ok(result) => result.expect("wait for node"),
        Err(_) => {
            // SAFETY: signalling our own child process.
            unsafe { libc::kill(pid, libc::SIGKILL) };
            panic!("the example did not finish within 90 s");
        }
    };
    let ran = run_started.elapsed();
    let stdout = String::from_utf8_lossy(&run.stdout).into_owned();
    assert!(run.status.success(), "the example failed:\n{}", text(&run));

    let lines: Vec<&str> = stdout.lines().collect();
    let has = |line: &str| lines.contains(&line);
    let version = env!("CARGO_PKG_VERSION");
    for expected in [
        format!("negotiated protocol 1.5 with devicerail-host {version}"),
        "device mock-1: Mock Device (mock 1.0)".into(),
        "connected mock-1".into(),
        "device.execute failed as expected: unknown_action (retryable: false)".into(),
        "host exited with status 0".into(),
    ] {
        assert!(has(&expected), "missing {expected:?} in:\n{stdout}");
    }
    let observation = lines
        .iter()
        .find_map(|l| l.strip_prefix("observation "))
        .and_then(|rest| rest.split(' ').next())
        .unwrap_or_else(|| panic!("no observation line in:\n{stdout}"));
    assert!(
        uuid::Uuid::parse_str(observation).is_ok(),
        "observation id {observation:?} is not a UUID"
    );
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("session ") && l.contains(" ended with ")),
        "the session did not end as expected:\n{stdout}"
    );
    println!(
        "typescript client example: compiled in {:.1} s, ran in {:.1} s against the mock: {} lines, observation {observation}",
        compiled.as_secs_f64(),
        ran.as_secs_f64(),
        lines.len()
    );
}
