//! Crash containment through the real binary: with the mock and the
//! hostile plugin in their default isolation (`process`), an abort, a
//! segfault, `exit(3)` and a stack overflow of the hostile driver each end
//! the call with `driver_crashed` (retryable) and the Action with exactly
//! one terminal event, while another client keeps using the mock device;
//! the worker is restarted and the hostile device answers again. A worker
//! that never answers is killed past the deadline plus grace; a host
//! killed with SIGKILL leaves no worker behind; `inline` runs the plugin in
//! the host. Restart times are printed (`--show-output`).

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use devicerail_host_testing::host_process::HostProcess;
use serde_json::{Value, json};
use support::{Options, TestHost, error_code, root_with_hostile};

const BIN: &str = env!("CARGO_BIN_EXE_devicerail");
const HOSTILE: &str = "hostile-1";

/// Whether `pid` is gone (or a zombie nobody reaped yet).
fn gone(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => {
            stat.rsplit(')')
                .next()
                .and_then(|s| s.split_whitespace().next())
                == Some("Z")
        }
    }
}

fn hostile_worker(host: u32) -> Option<u32> {
    support::plugin_workers(host)
        .into_iter()
        .find(|(_, cmd)| cmd.contains("hostile"))
        .map(|(pid, _)| pid)
}

fn action(name: &str, arguments: Value) -> Value {
    TestHost::action(name, arguments)
}

/// Hello, select and connect `device`, start a session.
fn session_on(c: &mut HostProcess, device: &str) -> Value {
    c.hello();
    c.ok("device.select", Some(json!({ "deviceId": device })));
    c.ok("device.connect", None);
    c.ok("session.start", None)["id"].clone()
}

/// Calls `echo` until it succeeds; returns how long that took.
fn until_echo_answers(c: &mut HostProcess, limit: Duration) -> Duration {
    let t = Instant::now();
    loop {
        let r = c.call(
            "device.execute",
            Some(action("echo", json!({ "text": "back" }))),
        );
        if r["result"]["output"]["text"] == "back" {
            return t.elapsed();
        }
        let code = error_code(&r).unwrap_or_default();
        assert!(
            ["device_unavailable", "driver_crashed"].contains(&code.as_str()),
            "while restarting: {r}"
        );
        assert_eq!(r["error"]["data"]["retryable"], true, "{r}");
        assert!(t.elapsed() < limit, "the plugin did not come back: {r}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A shared host (stdio plus a control socket) over `root`'s plugins.
fn shared_host(root: &Path, config: Option<&str>) -> (HostProcess, PathBuf) {
    let socket = root.join("run").join("host.sock");
    let mut cmd =
        HostProcess::serve_command(Path::new(BIN), &root.join("plugins"), &root.join("data"));
    let mut listen = std::ffi::OsString::from("unix:");
    listen.push(&socket);
    cmd.arg("--listen").arg(listen).env("RUST_LOG", "info");
    if let Some(text) = config {
        let file = root.join("config.toml");
        std::fs::write(&file, text).expect("write the configuration file");
        cmd.arg("--config").arg(file);
    }
    let host = HostProcess::spawn(cmd);
    let deadline = Instant::now() + Duration::from_secs(30);
    while std::os::unix::net::UnixStream::connect(&socket).is_err() {
        assert!(Instant::now() < deadline, "the host never listened");
        std::thread::sleep(Duration::from_millis(20));
    }
    (host, socket)
}

fn attach(socket: &Path) -> HostProcess {
    let mut cmd = Command::new(BIN);
    cmd.arg("attach").arg("--socket").arg(socket);
    HostProcess::spawn(cmd)
}

#[test]
fn faults_in_a_worker_are_contained_and_the_plugin_comes_back() {
    let tmp = root_with_hostile();
    let (mut a, socket) = shared_host(tmp.path(), None);
    let host_pid = a.child.id();
    session_on(&mut a, HOSTILE);
    let mut b = attach(&socket);
    session_on(&mut b, "mock-1");
    let first = hostile_worker(host_pid).expect("the hostile plugin runs in a worker");
    let mut calls = Vec::new();
    for (fault, args, how) in [
        ("abort", json!({}), &["SIGABRT"][..]),
        ("segv", json!({}), &["SIGSEGV"][..]),
        ("exit", json!({ "code": 3 }), &["exited with code 3"][..]),
        ("stackOverflow", json!({}), &["SIGSEGV", "SIGABRT"][..]),
    ] {
        let before = hostile_worker(host_pid).expect("a worker is up");
        let call = action(fault, args);
        calls.push(call["id"].clone());
        let id = a.request("device.execute", Some(call), None);
        // Meanwhile the other client's device is served.
        assert!(b.ok("device.observe", None)["screenshot"].is_object());
        assert!(b.execute("tap", json!({ "x": 10, "y": 10 }))["result"]["output"].is_object());
        let r = a.response(&id);
        assert_eq!(
            error_code(&r).as_deref(),
            Some("driver_crashed"),
            "{fault}: {r}"
        );
        assert_eq!(r["error"]["code"], -32000, "{r}");
        assert_eq!(r["error"]["data"]["retryable"], true, "{r}");
        let details = &r["error"]["data"]["details"];
        assert_eq!(details["plugin"], "test-hostile", "{r}");
        let reason = details["reason"].as_str().unwrap_or("");
        assert!(how.iter().any(|h| reason.contains(h)), "{fault}: {reason}");
        // The other plugin never noticed.
        let listed = b.ok("devices.list", None);
        assert!(
            listed["devices"]
                .as_array()
                .is_some_and(|d| d.iter().any(|d| d["id"] == "mock-1")),
            "{listed}"
        );
        assert!(b.execute("tap", json!({ "x": 20, "y": 20 }))["result"]["output"].is_object());
        let back = until_echo_answers(&mut a, Duration::from_secs(30));
        println!("crash: {fault} contained ({reason}); the plugin answered again after {back:?}");
        let after = hostile_worker(host_pid).expect("a worker is up again");
        assert_ne!(before, after, "a new worker serves the plugin");
        assert!(gone(before), "the crashed worker was reaped");
        let listed = a.ok("devices.list", None);
        assert!(
            listed["devices"]
                .as_array()
                .is_some_and(|d| d.iter().any(|d| d["id"] == HOSTILE)),
            "{listed}"
        );
    }
    assert_ne!(hostile_worker(host_pid), Some(first));
    // Every crashed Action has exactly one terminal event, a failure.
    let events = a.ok("events.list", None);
    let events = events.as_array().expect("events");
    for call in &calls {
        let started = events
            .iter()
            .filter(|e| {
                e["payload"]["type"] == "actionStarted" && e["payload"]["call"]["id"] == *call
            })
            .count();
        let terminals: Vec<&Value> = events
            .iter()
            .filter(|e| {
                e["payload"]["type"] == "actionCompleted" && e["payload"]["callId"] == *call
            })
            .collect();
        assert_eq!((started, terminals.len()), (1, 1), "{call}: {events:?}");
        assert_eq!(terminals[0]["payload"]["outcome"]["outcome"], "failed");
        assert_eq!(
            terminals[0]["payload"]["outcome"]["error"]["code"],
            "driver_crashed"
        );
    }
    // The crash report names the signal or code and keeps the last lines.
    let log = a.stderr();
    assert!(log.contains("plugin worker died"), "{log}");
    assert!(
        log.contains("overflowed its stack"),
        "the worker's stderr is forwarded: {log}"
    );
    assert!(log.contains("isolation=process"), "{log}");
    b.ok("session.end", None);
    a.ok("session.end", None);
}

#[test]
fn a_worker_that_never_answers_is_killed_and_restarted() {
    let tmp = root_with_hostile();
    let mut h = TestHost::with(Options {
        root: Some(tmp.path().to_path_buf()),
        ..Options::default()
    });
    let host_pid = h.pid();
    session_on(&mut h, HOSTILE);
    let before = hostile_worker(host_pid).expect("a worker");
    let call = action("hang", json!({}));
    let t = Instant::now();
    let r = h.call_with_timeout("device.execute", Some(call.clone()), 300);
    assert_eq!(error_code(&r).as_deref(), Some("request_timed_out"), "{r}");
    // Past the deadline plus grace the worker is killed and restarted.
    let back = until_echo_answers(&mut h, Duration::from_secs(30));
    let total = t.elapsed();
    println!("hang: answered again {total:?} after the call (echo retried for {back:?})");
    assert!(
        total >= Duration::from_secs(2),
        "killed before the grace ended"
    );
    let after = hostile_worker(host_pid).expect("a new worker");
    assert_ne!(before, after);
    let log = h.stderr_text();
    assert!(log.contains("killing the worker"), "{log}");
    let events = h.ok("events.list", None);
    let terminals = events
        .as_array()
        .expect("events")
        .iter()
        .filter(|e| {
            e["payload"]["type"] == "actionCompleted" && e["payload"]["callId"] == call["id"]
        })
        .count();
    assert_eq!(terminals, 1);
}

#[test]
fn killing_the_host_leaves_no_worker() {
    let tmp = root_with_hostile();
    let mut h = TestHost::with(Options {
        root: Some(tmp.path().to_path_buf()),
        ..Options::default()
    });
    h.hello();
    let pids: Vec<u32> = support::plugin_workers(h.pid())
        .into_iter()
        .map(|(p, _)| p)
        .collect();
    assert_eq!(pids.len(), 2, "one worker per plugin: {pids:?}");
    // The worker inherits no protocol descriptor: its stdin is null.
    for pid in &pids {
        let stdin = std::fs::read_link(format!("/proc/{pid}/fd/0")).expect("stdin");
        assert_eq!(stdin, Path::new("/dev/null"));
    }
    h.kill9();
    let deadline = Instant::now() + Duration::from_secs(10);
    while !pids.iter().all(|p| gone(*p)) {
        assert!(
            Instant::now() < deadline,
            "workers outlived the host: {pids:?}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn inline_isolation_runs_the_plugin_in_the_host() {
    let tmp = root_with_hostile();
    let mut h = TestHost::with(Options {
        root: Some(tmp.path().to_path_buf()),
        config: Some("[plugins.test-hostile]\nisolation = \"inline\"\n".into()),
        ..Options::default()
    });
    session_on(&mut h, HOSTILE);
    let r = h.ok(
        "device.execute",
        Some(action("echo", json!({ "text": "hi" }))),
    );
    assert_eq!(r["output"]["text"], "hi");
    let left: Vec<String> = support::plugin_workers(h.pid())
        .into_iter()
        .map(|(_, c)| c)
        .collect();
    assert_eq!(left.len(), 1, "only the mock has a worker: {left:?}");
    assert!(!left[0].contains("hostile"), "{left:?}");
    let log = h.stderr_text();
    assert!(log.contains("isolation=inline"), "{log}");
    // `plugins list` and `config show` say so.
    let out = Command::new(BIN)
        .args(["plugins", "list", "--json", "--plugins-dir"])
        .arg(tmp.path().join("plugins"))
        .arg("--config")
        .arg(tmp.path().join("config.toml"))
        .output()
        .expect("plugins list");
    let doc: Value = serde_json::from_slice(&out.stdout).expect("json");
    let isolation = |id: &str| {
        doc["plugins"]
            .as_array()
            .and_then(|p| p.iter().find(|p| p["id"] == id))
            .map(|p| p["isolation"].clone())
    };
    assert_eq!(isolation("test-hostile"), Some(json!("inline")), "{doc}");
    assert_eq!(isolation("mock"), Some(json!("process")), "{doc}");
    let out = Command::new(BIN)
        .args(["config", "show", "--config"])
        .arg(tmp.path().join("config.toml"))
        .output()
        .expect("config show");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.lines()
            .any(|l| l.starts_with("plugins.test-hostile.isolation") && l.contains("inline")),
        "{text}"
    );
}

#[test]
fn a_bad_isolation_value_refuses_only_that_plugin() {
    let tmp = root_with_hostile();
    let mut h = TestHost::with(Options {
        root: Some(tmp.path().to_path_buf()),
        config: Some("[plugins.test-hostile]\nisolation = \"thread\"\n".into()),
        ..Options::default()
    });
    h.hello();
    let listed = h.ok("devices.list", None);
    let ids: Vec<&str> = listed["devices"]
        .as_array()
        .expect("devices")
        .iter()
        .filter_map(|d| d["id"].as_str())
        .collect();
    assert_eq!(ids, ["mock-1"]);
    let log = h.stderr_text();
    assert!(
        log.contains("config.toml:2: plugins.test-hostile.isolation"),
        "{log}"
    );
}
