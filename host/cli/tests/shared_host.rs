//! One host, many clients: `serve --listen unix:PATH`, `devicerail attach`
//! and device leases, through the real binary over real sockets. Attached
//! clients are the official Rust and Python clients; a direct socket
//! connection (which reports `transport.kind = "unix"`, a transport the
//! official clients do not accept) and the peer check are spoken raw.

mod support;

use support::client::Launch as _;
use support::client::LaunchBlocking as _;

use std::io::{BufRead, BufReader, Write};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use devicerail_client::CallOptions;
use devicerail_client::methods::DeviceExecute;
use devicerail_host_testing::host_process::{ALL_FEATURES, HostProcess};
use serde_json::{Value, json};
use support::client::{BlockingHost, ClientHost, action, hello as client_hello};

const BIN: &str = env!("CARGO_BIN_EXE_devicerail");

/// A shared host listening on a socket in a private temp directory.
struct Shared {
    host: HostProcess,
    socket: PathBuf,
    root: tempfile::TempDir,
}

impl Drop for Shared {
    fn drop(&mut self) {
        if std::thread::panicking() {
            eprintln!("shared host stderr:\n{}", self.host.stderr());
        }
    }
}

fn start_shared(devices: usize, extra: &[&str]) -> Shared {
    let root = tempfile::tempdir().expect("tempdir");
    let plugins = support::plugins_dir_with_mock(root.path());
    let run = root.path().join("run");
    let socket = run.join("host.sock");
    let mut cmd = HostProcess::serve_command(Path::new(BIN), &plugins, &root.path().join("data"));
    let mut listen = std::ffi::OsString::from("unix:");
    listen.push(&socket);
    cmd.arg("--listen").arg(listen).args(extra);
    cmd.env("DEVICERAIL_MOCK_DEVICES", devices.to_string())
        .env("DEVICERAIL_MOCK_FAULTS", "1");
    let host = HostProcess::spawn(cmd);
    wait_for_socket(&socket);
    Shared { host, socket, root }
}

fn wait_for_socket(socket: &Path) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while UnixStream::connect(socket).is_err() {
        assert!(
            Instant::now() < deadline,
            "the host never listened on {}",
            socket.display()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A stdio client of the shared host through `devicerail attach`.
fn attach(socket: &Path) -> HostProcess {
    let mut cmd = Command::new(BIN);
    cmd.arg("attach").arg("--socket").arg(socket);
    HostProcess::spawn(cmd)
}

fn hello(c: &mut HostProcess, name: &str) -> Value {
    c.ok(
        "system.hello",
        Some(json!({
            "client": { "name": name, "version": "1.0.0" },
            "protocol": { "ranges": [{ "major": 1, "minMinor": 0, "maxMinor": 5 }] },
            "features": { "optional": ALL_FEATURES },
        })),
    )
}

fn select(c: &mut HostProcess, device: &str) {
    c.ok("device.select", Some(json!({ "deviceId": device })));
}

fn tap(c: &mut HostProcess) -> Value {
    c.execute("tap", json!({ "x": 10, "y": 10 }))
}

/// A client speaking NDJSON straight to the socket.
struct Direct {
    stream: UnixStream,
    reader: BufReader<UnixStream>,
}

impl Direct {
    fn connect(socket: &Path) -> Self {
        let stream = UnixStream::connect(socket).expect("connect");
        stream
            .set_read_timeout(Some(Duration::from_secs(30)))
            .expect("timeout");
        let reader = BufReader::new(stream.try_clone().expect("clone"));
        Self { stream, reader }
    }

    fn send(&mut self, v: &Value) {
        let mut line = serde_json::to_vec(v).expect("json");
        line.push(b'\n');
        self.stream.write_all(&line).expect("write");
    }

    /// The next line, or `None` at end of stream.
    fn recv(&mut self) -> Option<Value> {
        let mut line = String::new();
        match self.reader.read_line(&mut line) {
            Ok(0) => None,
            Ok(_) => Some(serde_json::from_str(&line).expect("json line")),
            Err(e) => panic!("reading the socket failed: {e}"),
        }
    }
}

fn hello_request(id: u64) -> Value {
    json!({
        "jsonrpc": "2.0", "id": id, "method": "system.hello",
        "params": {
            "client": { "name": "direct", "version": "1.0.0" },
            "protocol": { "ranges": [{ "major": 1, "minMinor": 0, "maxMinor": 5 }] },
        },
    })
}

/// An official Rust client of the shared host through `devicerail attach`,
/// saying hello as `name`.
async fn client(socket: &Path, name: &str) -> ClientHost {
    let mut h = client_hello();
    h.client.name = name.into();
    ClientHost::attach_owned(socket, h)
        .await
        .expect("attach and hello")
}

/// The hello result a client negotiated, as on the wire.
fn negotiated(c: &ClientHost) -> Value {
    serde_json::to_value(c.client.negotiated_hello().expect("hello")).expect("json")
}

async fn select_on(c: &ClientHost, device: &str) {
    c.ok("device.select", Some(json!({ "deviceId": device })))
        .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn attached_clients_share_devices_under_leases() {
    let shared = start_shared(2, &[]);
    let a = client(&shared.socket, "runner-a").await;
    let b = client(&shared.socket, "runner-b").await;
    let hello_a = negotiated(&a);
    assert_eq!(
        hello_a["transport"],
        json!({ "kind": "stdio", "framing": "ndjson" }),
        "an attached client sees a stdio transport"
    );
    select_on(&a, "mock-1").await;
    select_on(&b, "mock-2").await;
    a.ok("device.connect", None).await;
    b.ok("device.connect", None).await;
    let session_a = a.ok("session.start", None).await["id"].clone();
    let session_b = b.ok("session.start", None).await["id"].clone();
    assert_ne!(session_a, session_b);

    // Both run Actions at once, each on its own device.
    let taps = |c: &ClientHost| {
        let c = c.client.clone();
        tokio::spawn(async move {
            let mut out = Vec::new();
            for _ in 0..20 {
                let params = serde_json::from_value(action("tap", json!({ "x": 10, "y": 10 })))
                    .expect("params");
                out.push(
                    c.call::<DeviceExecute>(params, CallOptions::default())
                        .await
                        .map(|_| ()),
                );
            }
            out
        })
    };
    let (ta, tb) = (taps(&a), taps(&b));
    for r in ta.await.expect("a").iter().chain(&tb.await.expect("b")) {
        assert!(r.is_ok(), "tap failed: {r:?}");
    }

    // A third client contends for mock-1. It is spoken raw: `lease` on a
    // listed device is this host's extension, which the official client's
    // types do not carry.
    let mut c = attach(&shared.socket);
    hello(&mut c, "runner-c");
    let listed = c.ok("devices.list", None);
    let leased: Vec<(&str, &str)> = listed["devices"]
        .as_array()
        .expect("devices")
        .iter()
        .map(|d| {
            (
                d["id"].as_str().unwrap_or(""),
                d["lease"]["holder"].as_str().unwrap_or("free"),
            )
        })
        .collect();
    assert_eq!(
        leased,
        vec![
            ("mock-1", "anotherConnection"),
            ("mock-2", "anotherConnection")
        ]
    );
    select(&mut c, "mock-1");
    let refused = c.call("device.connect", None);
    let error = &refused["error"];
    assert_eq!(error["code"], -32014, "{refused}");
    assert_eq!(error["data"]["code"], "device_in_use");
    assert_eq!(error["data"]["retryable"], true);
    let details = &error["data"]["details"];
    assert_eq!(details["deviceId"], "mock-1");
    assert_eq!(details["holderConnectionId"], hello_a["connectionId"]);
    assert_eq!(details["holderClient"]["name"], "runner-a");
    assert!(details["leasedSinceMs"].as_u64().is_some(), "{details}");
    assert_eq!(c.err("session.start", None), "device_in_use");

    // The holder lets go; the device is the third client's.
    a.ok("session.end", Some(json!({}))).await;
    a.ok("device.disconnect", None).await;
    c.ok("device.connect", None);
    c.ok("session.start", None);
    assert!(tap(&mut c).get("result").is_some());
    let mine = c.ok("devices.list", None);
    assert_eq!(mine["devices"][0]["lease"]["holder"], "thisConnection");
    // ...and now the first one is refused.
    assert_eq!(a.err("device.connect", None).await, "device_in_use");

    b.ok("session.end", Some(json!({}))).await;
    c.ok("session.end", None);
    assert!(c.finish().success());
    for client in [a, b] {
        assert!(client.finish().await.success());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_client_releases_its_lease_and_its_session_is_sealed() {
    let shared = start_shared(1, &[]);
    let mut a = client(&shared.socket, "doomed").await;
    a.ok("device.connect", None).await;
    let session = a.ok("session.start", None).await["id"].clone();
    let mut acknowledged = Vec::new();
    for _ in 0..10 {
        let call = action("tap", json!({ "x": 1, "y": 2 }));
        let r = a.answer("device.execute", Some(call.clone())).await;
        assert!(r.get("result").is_some(), "{r}");
        acknowledged.push(call["id"].clone());
    }
    // Leave one more in flight (kept: dropping it would cancel it), then
    // the client dies.
    let params = serde_json::from_value(action("sleep", json!({ "ms": 2000 }))).expect("params");
    let in_flight = a
        .client
        .begin_call::<DeviceExecute>(params, CallOptions::default())
        .expect("begin");
    let c = client(&shared.socket, "next").await;
    assert_eq!(c.err("device.connect", None).await, "device_in_use");
    let killed = Instant::now();
    a.kill9().await;
    let released = loop {
        let r = c.answer("device.connect", None).await;
        if r.get("result").is_some() {
            break killed.elapsed();
        }
        assert_eq!(r["error"]["data"]["code"], "device_in_use", "{r}");
        assert!(
            killed.elapsed() < Duration::from_secs(5),
            "the lease was not released"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    };
    drop(in_flight);
    println!("lease released {released:?} after the client was killed");
    assert!(
        released < Duration::from_secs(1),
        "released after {released:?}"
    );

    // The dead client's Session is sealed with everything it was told.
    let sessions = c.ok("sessions.list", None).await;
    let info = sessions
        .as_array()
        .expect("sessions")
        .iter()
        .find(|s| s["id"] == session)
        .cloned()
        .expect("the session is listed");
    assert_eq!(info["state"], "ended", "{info}");
    let export = c
        .ok("session.export", Some(json!({ "sessionId": session })))
        .await;
    let events = export["events"].as_array().expect("events");
    for (i, e) in events.iter().enumerate() {
        assert_eq!(e["sequence"], json!(i + 1), "contiguous sequences");
    }
    let ended = events.last().expect("events");
    assert_eq!(ended["payload"]["type"], "sessionEnded", "{ended}");
    assert_eq!(ended["payload"]["outcome"], "cancelled", "{ended}");
    for id in &acknowledged {
        let of_call: Vec<&str> = events
            .iter()
            .filter(|e| &e["payload"]["callId"] == id || &e["payload"]["call"]["id"] == id)
            .filter_map(|e| e["payload"]["type"].as_str())
            .collect();
        assert_eq!(
            of_call.len(),
            2,
            "an acknowledged Action has its start and terminal: {of_call:?}"
        );
    }
    let started = events
        .iter()
        .filter(|e| e["payload"]["type"] == "actionStarted")
        .count();
    let terminal = events
        .iter()
        .filter(|e| {
            matches!(
                e["payload"]["type"].as_str(),
                Some("actionCompleted" | "actionFailed" | "actionCancelled")
            )
        })
        .count();
    assert_eq!(
        started, terminal,
        "every started Action has exactly one terminal"
    );
    assert!(c.finish().await.success());
}

#[test]
fn a_direct_socket_connection_is_unix_and_the_socket_is_private() {
    let shared = start_shared(1, &["--max-connections", "2"]);
    let mode = |p: &Path| std::fs::metadata(p).expect("metadata").permissions().mode() & 0o777;
    assert_eq!(mode(&shared.socket), 0o600, "the socket is user-only");
    assert_eq!(
        mode(shared.socket.parent().expect("dir")),
        0o700,
        "its directory is user-only"
    );

    let mut one = Direct::connect(&shared.socket);
    one.send(&hello_request(1));
    let hello = one.recv().expect("hello");
    assert_eq!(
        hello["result"]["transport"],
        json!({ "kind": "unix", "framing": "ndjson" })
    );
    let mut two = Direct::connect(&shared.socket);
    two.send(&hello_request(1));
    assert!(two.recv().expect("hello")["result"].is_object());

    // Over the cap: one error frame, then the connection is closed.
    let mut three = Direct::connect(&shared.socket);
    let refused = three.recv().expect("refusal");
    assert_eq!(refused["id"], Value::Null);
    assert_eq!(refused["error"]["data"]["code"], "too_many_requests");
    assert_eq!(refused["error"]["data"]["details"]["limit"], 2);
    assert!(three.recv().is_none(), "closed after the refusal");

    // A closed connection frees its place.
    drop(two);
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let mut again = Direct::connect(&shared.socket);
        again.send(&hello_request(7));
        match again.recv() {
            Some(v) if v["id"] == 7 => break,
            _ => assert!(Instant::now() < deadline, "the place was never freed"),
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    one.send(&json!({ "jsonrpc": "2.0", "id": 2, "method": "devices.list" }));
    assert!(one.recv().expect("list")["result"]["devices"].is_array());
}

/// Observation answers leave from the event store's writer thread when
/// their commit is durable, straight to the socket when nothing is queued
/// before them. A client that stops reading must cost that thread nothing:
/// what its full socket does not take is queued, whole and in order, and
/// another client's observations (committed by the same thread) go on.
#[test]
fn a_client_that_does_not_read_its_observations_stalls_no_one() {
    let shared = start_shared(2, &[]);
    let ready = |c: &mut Direct, device: &str| {
        let mut hello = hello_request(0);
        hello["params"]["features"] = json!({ "optional": ["device.routing.v1"] });
        c.send(&hello);
        for (i, (method, params)) in [
            ("device.select", json!({ "deviceId": device })),
            ("device.connect", json!({})),
            ("session.start", json!({})),
        ]
        .into_iter()
        .enumerate()
        {
            c.send(&json!({ "jsonrpc": "2.0", "id": i + 1, "method": method, "params": params }));
        }
        for _ in 0..4 {
            let answer = c.recv().expect("answer");
            assert!(answer["result"].is_object(), "{answer}");
        }
    };
    let mut slow = Direct::connect(&shared.socket);
    ready(&mut slow, "mock-1");
    // More answers than its socket holds (the most a connection may have
    // in flight is 1,024), never read meanwhile.
    const PIPELINED: u64 = 1_000;
    let mut send = slow.stream.try_clone().expect("clone");
    let sender = std::thread::spawn(move || {
        for id in 0..PIPELINED {
            let mut line = serde_json::to_vec(
                &json!({ "jsonrpc": "2.0", "id": 100 + id, "method": "device.observe" }),
            )
            .expect("json");
            line.push(b'\n');
            send.write_all(&line).expect("the host reads on");
        }
    });
    // Wait until the host has stopped reading the slow client (its answers
    // fill the socket and the output queue), then observe on the other.
    std::thread::sleep(Duration::from_millis(1500));
    let mut other = Direct::connect(&shared.socket);
    ready(&mut other, "mock-2");
    for id in 0..20 {
        other.send(&json!({ "jsonrpc": "2.0", "id": 100 + id, "method": "device.observe" }));
        let answer = other.recv().expect("the other client is answered");
        assert_eq!(answer["id"], 100 + id);
        assert!(answer["result"]["id"].is_string(), "{answer}");
    }
    // Reading again: every answer arrives once, whole.
    let mut seen = std::collections::HashSet::new();
    while seen.len() < usize::try_from(PIPELINED).expect("small") {
        let answer = slow.recv().expect("every answer arrives");
        if seen.is_empty() {
            println!(
                "an observation's answer: {} bytes",
                answer.to_string().len()
            );
        }
        assert!(answer["result"]["id"].is_string(), "{answer}");
        let id = answer["id"].as_u64().expect("numeric id");
        assert!(seen.insert(id), "answered twice: {id}");
    }
    sender.join().expect("sender");
}

#[test]
fn a_stale_socket_is_replaced_and_a_live_one_is_never_stolen() {
    let root = tempfile::tempdir().expect("tempdir");
    let run = root.path().join("run");
    std::fs::create_dir(&run).expect("mkdir");
    std::fs::set_permissions(&run, std::fs::Permissions::from_mode(0o700)).expect("chmod");
    let socket = run.join("host.sock");
    // A socket file left by a dead process.
    drop(std::os::unix::net::UnixListener::bind(&socket).expect("bind"));
    assert!(socket.exists());
    let plugins = support::plugins_dir_with_mock(root.path());
    let serve = |data: &str| {
        let mut cmd = HostProcess::serve_command(Path::new(BIN), &plugins, &root.path().join(data));
        let mut listen = std::ffi::OsString::from("unix:");
        listen.push(&socket);
        cmd.arg("--listen").arg(listen);
        cmd
    };
    let mut first = HostProcess::spawn(serve("data-1"));
    wait_for_socket(&socket);
    let client = BlockingHost::attach(&socket, "first");

    // A second host on the same socket (another data directory) refuses
    // to start and leaves the first one serving.
    let out = serve("data-2").output().expect("run");
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("already listening"),
        "second host said: {stderr}"
    );
    assert!(client.ok_json("devices.list", None)["devices"].is_array());
    assert!(client.finish_owned().success());

    // A socket directory others can enter is refused.
    let open = root.path().join("open");
    std::fs::create_dir(&open).expect("mkdir");
    std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let mut cmd = HostProcess::serve_command(Path::new(BIN), &plugins, &root.path().join("data-3"));
    let mut listen = std::ffi::OsString::from("unix:");
    listen.push(open.join("host.sock"));
    let out = cmd.arg("--listen").arg(listen).output().expect("run");
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("chmod 700"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    // SIGTERM stops the shared host and removes its socket.
    // SAFETY: kill on our own child.
    unsafe { libc::kill(first.child.id() as i32, libc::SIGTERM) };
    assert!(first.wait().success());
    assert!(!socket.exists(), "the socket file is removed at shutdown");
}

#[test]
fn attach_without_a_host_says_how_to_start_one() {
    let root = tempfile::tempdir().expect("tempdir");
    let socket = root.path().join("nobody.sock");
    let out = Command::new(BIN)
        .arg("attach")
        .arg("--socket")
        .arg(&socket)
        .output()
        .expect("run");
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("devicerail serve --listen unix:"),
        "attach said: {stderr}"
    );
    assert!(out.stdout.is_empty(), "nothing but protocol on stdout");
}

#[test]
fn attach_spawn_starts_a_background_host() {
    let root = tempfile::tempdir().expect("tempdir");
    let plugins = support::plugins_dir_with_mock(root.path());
    let run = root.path().join("run");
    let socket = run.join("host.sock");
    let mut cmd = Command::new(BIN);
    cmd.arg("attach")
        .arg("--socket")
        .arg(&socket)
        .arg("--spawn")
        .arg("--plugins-dir")
        .arg(&plugins)
        .arg("--data-dir")
        .arg(root.path().join("data"));
    let client = BlockingHost::spawn_named(cmd.get_args(), "spawner");
    assert!(client.ok_json("devices.list", None)["devices"][0]["id"] == "mock-1");
    assert!(client.finish_owned().success());
    // The host outlives the client that started it.
    let again = BlockingHost::attach(&socket, "later");
    assert!(again.finish_owned().success());
    let pid: i32 = std::fs::read_to_string(root.path().join("data/host.lock"))
        .expect("lock")
        .trim()
        .parse()
        .expect("pid");
    // SAFETY: signals the host this test started.
    unsafe { libc::kill(pid, libc::SIGTERM) };
    let deadline = Instant::now() + Duration::from_secs(20);
    while socket.exists() {
        assert!(Instant::now() < deadline, "the spawned host did not stop");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A peer of another uid is dropped before anything it sends is read.
/// Needs root (to act as another user); elsewhere it says it was skipped.
#[test]
fn a_peer_of_another_user_is_refused() {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        println!("skipped: acting as a second user needs root");
        return;
    }
    let shared = start_shared(1, &[]);
    // Open the way for the other user (the host refuses such a directory
    // at start, so it is opened afterwards, as an attacker with a
    // misconfigured directory would find it).
    let dir = shared.socket.parent().expect("dir");
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    std::fs::set_permissions(&shared.socket, std::fs::Permissions::from_mode(0o666))
        .expect("chmod");
    // Let others traverse the temp root's ancestors: add the search bit
    // where it is missing, keep every other bit (never loosen or tighten
    // a directory such as `/tmp` beyond that).
    let mut root_dir = shared.root.path().to_path_buf();
    loop {
        if let Ok(meta) = std::fs::metadata(&root_dir) {
            let mode = meta.permissions().mode() & 0o7777;
            if mode & 0o001 == 0 {
                let _ = std::fs::set_permissions(
                    &root_dir,
                    std::fs::Permissions::from_mode(mode | 0o001),
                );
            }
        }
        if !root_dir.pop() || root_dir == Path::new("/") {
            break;
        }
    }
    use std::os::unix::process::CommandExt;
    let probe = r#"
import socket, sys
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
try:
    s.sendall(b'{"jsonrpc":"2.0","id":1,"method":"system.hello","params":{"client":{"name":"x","version":"1"},"protocol":{"ranges":[{"major":1,"minMinor":0,"maxMinor":5}]}}}\n')
except (BrokenPipeError, ConnectionResetError):
    pass
s.settimeout(10)
try:
    data = s.recv(65536)
except ConnectionResetError:
    data = b""
print("REPLY" if data else "CLOSED")
"#;
    let out = match Command::new("python3")
        .arg("-c")
        .arg(probe)
        .arg(&shared.socket)
        .uid(65534)
        .gid(65534)
        .output()
    {
        Ok(o) => o,
        Err(e) => {
            println!("skipped: cannot run python3 as another user: {e}");
            return;
        }
    };
    let said = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        said.trim(),
        "CLOSED",
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let me = BlockingHost::attach(&shared.socket, "owner");
    assert!(me.finish_owned().success());
    let _ = &shared.host;
}

#[test]
fn two_official_python_clients_share_the_host_through_attach() {
    let Some(python) = support::python::venv_python(
        "shared_host python",
        "the official Python client",
        "devicerail",
        "python3 -m venv .ci/python-venv && .ci/python-venv/bin/pip install --require-hashes -r .ci/python-client-requirements.txt",
    ) else {
        return;
    };
    let shared = start_shared(2, &[]);
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/python/attach_leases.py");
    let run = |role: &str, device: &str| {
        Command::new(&python)
            .arg(&script)
            .arg(role)
            .arg(device)
            .env("DEVICERAIL_BIN", BIN)
            .env("DEVICERAIL_SOCKET", &shared.socket)
            .env("HOLD_SECONDS", "1.5")
            .env("PYTHONDONTWRITEBYTECODE", "1")
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("run python")
    };
    let one = run("runner", "mock-1");
    let two = run("runner", "mock-2");
    // Wait until both hold their devices, then contend for the first.
    let mut watcher = attach(&shared.socket);
    hello(&mut watcher, "watcher");
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let listed = watcher.ok("devices.list", None);
        let held = listed["devices"]
            .as_array()
            .expect("devices")
            .iter()
            .filter(|d| d["lease"]["holder"] == "anotherConnection")
            .count();
        if held == 2 {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the runners never held both devices"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let three = run("contender", "mock-1");
    let outputs: Vec<Value> = [one, two, three]
        .into_iter()
        .map(|child| {
            let out = child.wait_with_output().expect("wait");
            assert!(
                out.status.success(),
                "python client failed: {}\n{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
            let text = String::from_utf8_lossy(&out.stdout);
            serde_json::from_str(text.lines().last().unwrap_or("")).expect("json line")
        })
        .collect();
    println!("python clients: {outputs:?}");
    assert_eq!(outputs[0]["actions"], 25);
    assert_eq!(outputs[1]["actions"], 25);
    assert_ne!(outputs[0]["session"], outputs[1]["session"]);
    assert_eq!(outputs[2]["refused"]["code"], "device_in_use");
    assert_eq!(outputs[2]["refused"]["details"]["deviceId"], "mock-1");
    assert!(watcher.finish().success());
}
