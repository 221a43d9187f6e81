//! The host's trust promises, through the real binary:
//!
//! * plugin workers (and so everything a driver starts) never get the
//!   host's credentials: `/proc/<worker>/environ` holds no
//!   `DEVICERAIL_SECRET_*` value and no lease token under `serve`, `mcp`
//!   and `replay`, while a plugin's `env` table does reach its driver;
//! * a worker's reply is untrusted input: forged UI trees (a broken
//!   tree, a node outside the protocol's bounds, a tree over the snapshot
//!   bound) are refused with the worker kept, oversized parts are refused before the host
//!   allocates them (the worker that sent them is killed and restarted),
//!   and the host stays up with its peak memory bounded;
//! * the data directory is private: 0700, its files 0600, under umask
//!   022, and an existing directory too open is tightened with a notice.
//!
//! (Pool authority is in `kube.rs`, next to the device plugin it serves;
//! the install gate in `plugin_authoring.rs`.)

mod support;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support::{Options, TestHost, error_code, root_with_hostile};

const BIN: &str = env!("CARGO_BIN_EXE_devicerail");
const HOSTILE: &str = "hostile-1";
/// A secret and a lease token the host's environment holds.
const SECRET: &str = "s3cret-Value-never-in-a-worker";
const LEASE: &str = "LeaseTokenValue0123456789abcdefghijklmnopq";

fn credentials() -> Vec<(String, String)> {
    vec![
        ("DEVICERAIL_SECRET_PASSWORD".into(), SECRET.into()),
        ("DEVICERAIL_LEASE_TOKEN".into(), LEASE.into()),
    ]
}

/// Asserts no worker of `parent` was started with a credential; returns
/// how many workers were checked.
fn workers_hold_no_credential(parent: u32, what: &str) -> usize {
    let workers = support::plugin_workers(parent);
    for (pid, cmd) in &workers {
        let env = support::process_environ(*pid);
        assert!(!env.is_empty(), "{what}: no environment read for {cmd}");
        assert!(
            env.iter().any(|e| e.starts_with("PATH=")),
            "{what}: the worker keeps PATH: {env:?}"
        );
        for e in &env {
            assert!(
                !e.contains(SECRET) && !e.contains(LEASE),
                "{what}: {cmd} holds a credential: {e}"
            );
            assert!(
                !e.starts_with("DEVICERAIL_SECRET_") && !e.starts_with("DEVICERAIL_LEASE_TOKEN="),
                "{what}: {cmd} holds {e}"
            );
        }
    }
    workers.len()
}

/// Waits until `parent` runs at least one plugin worker.
fn wait_for_workers(parent: u32, what: &str) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while support::plugin_workers(parent).is_empty() {
        assert!(
            Instant::now() < deadline,
            "{what}: no plugin worker started"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[test]
fn plugin_workers_never_get_the_hosts_credentials() {
    let tmp = root_with_hostile();
    let config = "[plugins.test-hostile]\nenv = { DEVICERAIL_HOSTILE_PROBE = \"from-config\" }\n";
    let mut h = TestHost::with(Options {
        root: Some(tmp.path().to_path_buf()),
        env: credentials(),
        config: Some(config.into()),
        ..Options::default()
    });
    h.hello();
    h.ok("device.select", Some(json!({ "deviceId": HOSTILE })));
    h.ok("device.connect", None);
    h.ok("session.start", None);
    assert_eq!(workers_hold_no_credential(h.pid(), "serve"), 2);
    // Inside the driver: its env table arrived, the credentials did not.
    let value = |h: &mut TestHost, name: &str| {
        h.execute("env", json!({ "name": name }))["result"]["output"]["value"].clone()
    };
    assert_eq!(value(&mut h, "DEVICERAIL_HOSTILE_PROBE"), "from-config");
    assert_eq!(value(&mut h, "DEVICERAIL_SECRET_PASSWORD"), Value::Null);
    assert_eq!(value(&mut h, "DEVICERAIL_LEASE_TOKEN"), Value::Null);
    assert!(value(&mut h, "PATH").is_string());
    h.ok("session.end", None);
    assert!(h.finish().success());

    // A credential in a plugin's env table refuses that plugin.
    let bad = "[plugins.test-hostile]\nenv = { DEVICERAIL_SECRET_X = \"x\" }\n";
    let out = Command::new(BIN)
        .args(["plugins", "list", "--plugins-dir"])
        .arg(tmp.path().join("plugins"))
        .arg("--config")
        .arg(write(tmp.path(), "bad.toml", bad))
        .env("DEVICERAIL_DATA_DIR", tmp.path().join("data"))
        .output()
        .expect("plugins list");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        text.contains("plugins.test-hostile.env.DEVICERAIL_SECRET_X")
            && text.contains("credentials"),
        "{text}"
    );

    // `devicerail mcp` runs its own host: its workers too.
    let mut mcp = Command::new(BIN)
        .arg("mcp")
        .arg("--plugins-dir")
        .arg(tmp.path().join("plugins"))
        .arg("--data-dir")
        .arg(tmp.path().join("mcp-data"))
        .env("DEVICERAIL_SOCKET", tmp.path().join("no-host.sock"))
        .envs(credentials())
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start mcp");
    wait_for_workers(mcp.id(), "mcp");
    assert!(workers_hold_no_credential(mcp.id(), "mcp") >= 1);
    let _ = mcp.kill();
    let _ = mcp.wait();
}

fn write(dir: &Path, name: &str, text: &str) -> std::path::PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).expect("write");
    p
}

#[test]
fn replay_workers_never_get_the_hosts_credentials() {
    // Record a few taps, then replay them with credentials in the
    // environment; the replay's own host starts the workers.
    let mut h = TestHost::start();
    let tmp = h.keep_root().expect("root");
    let session = h.ready_session();
    for (x, y) in [(360, 328), (360, 468), (10, 10)] {
        h.execute("tap", json!({ "x": x, "y": y }));
    }
    h.ok("session.end", None);
    assert!(h.finish().success());
    let replay = Command::new(BIN)
        .args(["replay", &session, "--json", "--plugins-dir"])
        .arg(tmp.path().join("plugins"))
        .arg("--out")
        .arg(tmp.path().join("replay.html"))
        .arg("--data-dir")
        .arg(tmp.path().join("data"))
        .env("DEVICERAIL_SOCKET", tmp.path().join("no-host.sock"))
        .env("RUST_LOG", "warn")
        .envs(credentials())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start replay");
    wait_for_workers(replay.id(), "replay");
    assert!(workers_hold_no_credential(replay.id(), "replay") >= 1);
    let out = replay.wait_with_output().expect("replay ends");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The host's peak resident memory, in KiB.
fn peak_kib(pid: u32) -> u64 {
    support::proc_status_kib(pid, "VmHWM:")
}

/// Calls `echo` on the hostile device until it answers (the worker may be
/// restarting).
fn echo_answers(h: &mut TestHost) {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let r = h.execute("echo", json!({ "text": "still here" }));
        if r["result"]["output"]["text"] == "still here" {
            return;
        }
        assert!(Instant::now() < deadline, "the plugin never answered: {r}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The hostile plugin's worker process, if one runs.
fn hostile_worker(h: &TestHost) -> Option<u32> {
    support::plugin_workers(h.pid())
        .into_iter()
        .find(|(_, c)| c.contains("hostile"))
        .map(|(p, _)| p)
}

#[test]
fn forged_worker_replies_are_refused_and_the_host_stays_up() {
    let tmp = root_with_hostile();
    let mut h = TestHost::with(Options {
        root: Some(tmp.path().to_path_buf()),
        ..Options::default()
    });
    h.hello();
    h.ok("device.select", Some(json!({ "deviceId": HOSTILE })));
    h.ok("device.connect", None);
    h.ok("session.start", None);
    assert!(h.ok("device.observe", None)["screenshot"].is_object());
    let baseline = peak_kib(h.pid());
    // Forged UI trees: the observation is refused as the driver's
    // protocol error (an observation over the bound unread); the worker
    // stays.
    for (case, says) in [
        ("structure", "appears twice"),
        ("bounds", "invalid observation"),
        ("oversized", "over the 1835008-byte bound"),
    ] {
        let worker = hostile_worker(&h);
        let armed = h.execute("forgeNextObserve", json!({ "case": case, "skip": 1 }));
        assert_eq!(armed["result"]["output"]["armed"], case, "{armed}");
        let r = h.call("device.observe", None);
        assert_eq!(
            error_code(&r).as_deref(),
            Some("protocol_error"),
            "{case}: {r}\n{}",
            h.stderr_text()
        );
        let message = r["error"]["message"].as_str().unwrap_or("");
        assert!(message.contains(says), "{case}: {message}");
        assert_eq!(worker, hostile_worker(&h), "{case}: the worker was kept");
        echo_answers(&mut h);
        assert!(h.ok("device.observe", None)["screenshot"].is_object());
    }
    // Oversized parts: refused from what the worker announced, before the
    // host reads a byte (the worker broke the channel: it is replaced).
    for case in ["part", "total"] {
        let armed = h.execute("forgeNextObserve", json!({ "case": case, "skip": 1 }));
        assert_eq!(armed["result"]["output"]["armed"], case, "{armed}");
        let r = h.call("device.observe", None);
        assert_eq!(
            error_code(&r).as_deref(),
            Some("driver_crashed"),
            "{case}: {r}"
        );
        echo_answers(&mut h);
    }
    // Scribbled rings: a reply ring whose tail or record is out of place
    // kills the worker while its call waits; a call ring whose head the
    // worker moved past the host's tail kills it at the host's next call.
    for case in ["ringTail", "ringLength", "ringHead"] {
        let worker = hostile_worker(&h);
        let armed = h.execute("forgeNextObserve", json!({ "case": case, "skip": 1 }));
        assert_eq!(armed["result"]["output"]["armed"], case, "{armed}");
        let r = h.call("device.observe", None);
        if case == "ringHead" {
            assert!(r["result"]["screenshot"].is_object(), "{case}: {r}");
            let r = h.execute("echo", json!({ "text": "after" }));
            assert_eq!(
                error_code(&r).as_deref(),
                Some("driver_crashed"),
                "{case}: {r}"
            );
        } else {
            assert_eq!(
                error_code(&r).as_deref(),
                Some("driver_crashed"),
                "{case}: {r}"
            );
        }
        echo_answers(&mut h);
        assert_ne!(
            worker,
            hostile_worker(&h),
            "{case}: the worker was replaced"
        );
    }
    let log = h.stderr_text();
    for says in ["broke its reply ring", "broke its call ring"] {
        assert!(log.contains(says), "{says}: {log}");
    }
    let grown = peak_kib(h.pid()).saturating_sub(baseline);
    println!("trust: host peak memory grew {grown} KiB over eight forged replies");
    assert!(
        grown < 48 * 1024,
        "the host allocated what a worker announced: +{grown} KiB"
    );
    let log = h.stderr_text();
    assert!(log.contains("exceeds the limit"), "{log}");
    h.ok("session.end", None);
    assert!(h.finish().success());
}

fn mode(p: &Path) -> u32 {
    std::os::unix::fs::PermissionsExt::mode(&std::fs::metadata(p).expect("metadata").permissions())
        & 0o777
}

/// Every directory and file under `dir`, with its mode.
fn modes(dir: &Path) -> Vec<(std::path::PathBuf, u32)> {
    let mut out = vec![(dir.to_path_buf(), mode(dir))];
    for e in std::fs::read_dir(dir).expect("read dir").flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(modes(&p));
        } else {
            out.push((p.clone(), mode(&p)));
        }
    }
    out
}

#[test]
fn data_files_are_private_whatever_the_umask() {
    let tmp = tempfile::tempdir().expect("tmp");
    let data = tmp.path().join("data");
    // A host started with umask 022 (through a shell, as a user would).
    let run = |data: &Path| {
        let plugins = support::plugins_dir_with_mock(tmp.path());
        let script = format!(
            "umask 022; exec '{BIN}' serve --plugins-dir '{}' --data-dir '{}'",
            plugins.display(),
            data.display()
        );
        let mut cmd = Command::new("sh");
        cmd.arg("-c").arg(script).env("RUST_LOG", "info");
        let mut host = devicerail_host_testing::host_process::HostProcess::spawn(cmd);
        host.hello();
        host.ok("device.connect", None);
        host.ok("session.start", None);
        // A screenshot large enough to be stored as a file of its own.
        host.ok("device.observe", None);
        host.execute("tap", json!({ "x": 3, "y": 4 }));
        host.ok("session.end", None);
        let stderr = host.stderr();
        assert!(host.finish().success());
        stderr
    };
    run(&data);
    let all = modes(&data);
    assert!(all.len() > 3, "{all:?}");
    for (p, m) in &all {
        let want = if p.is_dir() { 0o700 } else { 0o600 };
        assert_eq!(*m, want, "{} is {m:o}", p.display());
    }
    // A report and a bundle of the session are private too.
    for args in [
        &["report", "--last"][..],
        &["bundle", "export", "--last"][..],
    ] {
        let out = tmp.path().join(format!("{}.out", args[0]));
        let o = Command::new(BIN)
            .args(args)
            .arg("--data-dir")
            .arg(&data)
            .arg("--out")
            .arg(&out)
            .output()
            .expect("run");
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        assert_eq!(mode(&out), 0o600, "{args:?}");
    }

    // A directory left open (an older host, a careless copy) is tightened
    // at start, with one notice.
    std::fs::set_permissions(&data, std::os::unix::fs::PermissionsExt::from_mode(0o755))
        .expect("chmod");
    let db = data.join("events.sqlite3");
    std::fs::set_permissions(&db, std::os::unix::fs::PermissionsExt::from_mode(0o644))
        .expect("chmod");
    let log = run(&data);
    assert_eq!(mode(&data), 0o700);
    assert_eq!(mode(&db), 0o600);
    assert_eq!(log.matches("was open to other users").count(), 1, "{log}");
}
