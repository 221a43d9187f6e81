//! Hostile load through the real binary: a plugin that never returns, a
//! client that does not read, oversized answers and events, idle sockets
//! on the event-stream port, lenient params and a full disk. The host keeps
//! serving, bounds every frame and queue, and every started Action gets its
//! terminal event. Figures are printed (`--show-output`) for the record;
//! the assertions are generous liveness bounds, not timings. Calls go
//! through the official Rust client except the frames no client sends
//! (near-limit lines, a client that does not read, idle sockets).

mod support;

use support::client::Launch as _;

use std::io::Write;
use std::time::{Duration, Instant};

use devicerail_client::CallOptions;
use devicerail_client::methods::{DeviceExecute, RpcMethod};
use devicerail_client::protocol::RequestTimeoutMs;
use serde_json::{Value, json};
use support::client::{ClientHost, action, hello};
use support::{Options, TestHost, error_code, root_with_hostile};

fn hostile_options(tmp: &tempfile::TempDir) -> Options {
    Options {
        root: Some(tmp.path().to_path_buf()),
        faults: true,
        ..Options::default()
    }
}

/// Raw: for frames no client sends (near-limit lines, not reading).
fn with_hostile(tmp: &tempfile::TempDir) -> TestHost {
    TestHost::with(hostile_options(tmp))
}

/// Through the official client, on a host the test owns (to kill it).
async fn client_with_hostile(tmp: &tempfile::TempDir) -> ClientHost {
    ClientHost::start_owned(hostile_options(tmp), hello())
        .await
        .expect("the host starts")
}

/// Hello, select and connect `device`, start a session.
fn session_on(h: &mut TestHost, device: &str) -> Value {
    h.hello();
    h.ok("device.select", Some(json!({ "deviceId": device })));
    h.ok("device.connect", None);
    h.ok("session.start", None)["id"].clone()
}

/// Select and connect `device`, start a session.
async fn client_session_on(h: &ClientHost, device: &str) -> Value {
    h.ok("device.select", Some(json!({ "deviceId": device })))
        .await;
    h.ok("device.connect", None).await;
    h.ok("session.start", None).await["id"].clone()
}

fn timeout(ms: u64) -> CallOptions {
    CallOptions {
        timeout_ms: RequestTimeoutMs::new(ms),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_plugin_that_never_returns_stalls_nothing_else() {
    let tmp = root_with_hostile();
    let h = client_with_hostile(&tmp).await;
    client_session_on(&h, "hostile-1").await;
    // 80 calls that never return, each with a short budget.
    let calls: Vec<_> = (0..80)
        .map(|_| {
            h.request(
                "device.execute",
                Some(action("hang", json!({}))),
                timeout(200),
            )
        })
        .collect();
    // Control methods answer at once, while the calls are stuck.
    let t = Instant::now();
    let d = h.ok("system.describe", None).await;
    let describe = t.elapsed();
    assert!(d["connection"]["connectionId"].is_string());
    println!("hostile: system.describe under 80 stuck calls answered in {describe:?}");
    assert!(
        describe < Duration::from_secs(5),
        "system.describe waited on the stuck plugin ({describe:?})"
    );
    let t = Instant::now();
    h.ok("devices.list", None).await;
    println!("hostile: devices.list answered in {:?}", t.elapsed());
    // Every stuck call is answered: timed out, or refused once the plugin
    // has too many calls that never returned.
    let t = Instant::now();
    let mut codes = std::collections::BTreeMap::<String, usize>::new();
    for call in calls {
        let r = h.response(call).await;
        *codes.entry(error_code(&r).unwrap_or_default()).or_default() += 1;
    }
    println!(
        "hostile: 80 stuck calls answered within {:?}: {codes:?}",
        t.elapsed()
    );
    assert!(
        codes
            .keys()
            .all(|c| ["request_timed_out", "device_unavailable"].contains(&c.as_str())),
        "{codes:?}"
    );
    // Every Action that started got its terminal event.
    let events = h.ok("events.list", Some(json!({ "limit": 1000 }))).await;
    let events = events.as_array().expect("events");
    let started = events
        .iter()
        .filter(|e| e["payload"]["type"] == "actionStarted")
        .count();
    let completed: Vec<&Value> = events
        .iter()
        .filter(|e| e["payload"]["type"] == "actionCompleted")
        .collect();
    assert_eq!(started, completed.len(), "one terminal per started Action");
    assert!(
        completed
            .iter()
            .all(|e| e["payload"]["outcome"]["outcome"] == "timedOut")
    );
    // Keep calling until the plugin counts as wedged: its devices answer
    // device_unavailable, promptly.
    let mut wedged = None;
    for _ in 0..40 {
        let r = h
            .call_json(
                "device.execute",
                Some(action("hang", json!({}))),
                timeout(100),
            )
            .await;
        if error_code(&r).as_deref() == Some("device_unavailable") {
            wedged = Some(r);
            break;
        }
    }
    let wedged = wedged.expect("the plugin is reported unavailable once wedged");
    assert_eq!(wedged["error"]["data"]["retryable"], true);
    // The other plugin's device is untouched.
    h.ok("session.end", Some(json!({}))).await;
    client_session_on(&h, "mock-1").await;
    assert!(h.ok("device.observe", None).await["screenshot"].is_object());
    assert!(
        h.ok(
            "device.execute",
            Some(action("tap", json!({ "x": 10, "y": 10 })))
        )
        .await["output"]
            .is_object()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn actions_running_at_a_crash_end_with_a_terminal_on_restart() {
    let tmp = root_with_hostile();
    let mut h = client_with_hostile(&tmp).await;
    let session = client_session_on(&h, "hostile-1").await;
    // Kept until the crash: dropping a call would cancel it.
    let running: Vec<_> = (0..3)
        .map(|_| {
            let params: <DeviceExecute as RpcMethod>::Params =
                serde_json::from_value(action("hang", json!({}))).expect("params");
            h.client
                .begin_call::<DeviceExecute>(params, CallOptions::default())
                .expect("begin")
        })
        .collect();
    // Wait until the three actionStarted events are durable.
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let events = h.ok("events.list", Some(json!({}))).await;
        let started = events
            .as_array()
            .map(|e| {
                e.iter()
                    .filter(|e| e["payload"]["type"] == "actionStarted")
                    .count()
            })
            .unwrap_or(0);
        if started == 3 {
            break;
        }
        assert!(Instant::now() < deadline, "the actions did not start");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    h.kill9().await;
    drop(running);
    let h = client_with_hostile(&tmp).await;
    let export = h
        .ok("session.export", Some(json!({ "sessionId": session })))
        .await;
    let events = export["events"].as_array().expect("events");
    let terminals: Vec<&Value> = events
        .iter()
        .filter(|e| e["payload"]["type"] == "actionCompleted")
        .collect();
    assert_eq!(terminals.len(), 3, "{export}");
    for t in &terminals {
        assert_eq!(t["payload"]["outcome"]["outcome"], "cancelled");
        assert_eq!(t["payload"]["outcome"]["error"]["code"], "host_stopped");
    }
    let last = events.last().expect("events");
    assert_eq!(last["payload"]["type"], "sessionEnded");
    assert_eq!(last["payload"]["outcome"], "shutdown");
}

#[test]
fn every_recorded_event_can_be_read_back() {
    let tmp = root_with_hostile();
    let mut h = with_hostile(&tmp);
    let session = session_on(&mut h, "hostile-1");
    // A 2 MiB output: the Action ran, but its result fits no frame; the
    // failure is what is recorded and answered (not retryable).
    let r = h.call(
        "device.execute",
        Some(TestHost::action("big", json!({ "bytes": 2 * 1024 * 1024 }))),
    );
    assert_eq!(
        error_code(&r).as_deref(),
        Some("response_frame_too_large"),
        "{}",
        &r.to_string()[..r.to_string().len().min(400)]
    );
    assert_eq!(r["error"]["data"]["retryable"], false);
    // One too large even for the worker's channel (8 MiB) is answered at
    // once: the worker says why (as a driver failure) instead of going
    // silent until the deadline.
    let t = std::time::Instant::now();
    let r = h.call(
        "device.execute",
        Some(TestHost::action("big", json!({ "bytes": 9 * 1024 * 1024 }))),
    );
    assert_eq!(error_code(&r).as_deref(), Some("platform_error"), "{r}");
    assert_eq!(
        r["error"]["data"]["details"]["platformCode"], "response_frame_too_large",
        "{r}"
    );
    assert!(
        t.elapsed() < std::time::Duration::from_secs(20),
        "{:?}",
        t.elapsed()
    );
    // Arguments whose recorded event would not fit are refused before the
    // device acts.
    let text = "y".repeat(1024 * 1024 - 220);
    let line = serde_json::to_vec(
        &json!({ "jsonrpc": "2.0", "id": "huge", "method": "device.execute",
        "params": TestHost::action("echo", json!({ "text": text })) }),
    )
    .expect("encode");
    assert!(line.len() <= 1024 * 1024, "{} bytes", line.len());
    h.send_raw(&[line, b"\n".to_vec()].concat());
    let r = h.response(&json!("huge"));
    assert_eq!(error_code(&r).as_deref(), Some("invalid_params"), "{r}");
    // A near-limit output that fits is recorded and read back.
    let ok = h.ok(
        "device.execute",
        Some(TestHost::action("big", json!({ "bytes": 900 * 1024 }))),
    );
    assert_eq!(
        ok["output"]["data"].as_str().map(str::len),
        Some(900 * 1024)
    );
    h.ok("session.end", None);
    // Every event of the session reads back one page at a time.
    let mut after = 0;
    loop {
        let mut params = json!({ "sessionId": session, "limit": 1 });
        if after > 0 {
            params["afterSequence"] = json!(after);
        }
        let page = h.ok("session.export", Some(params));
        let events = page["events"].as_array().expect("events");
        assert_eq!(events.len(), 1);
        after = events[0]["sequence"].as_u64().expect("sequence");
        if page.get("nextAfterSequence").is_none() {
            break;
        }
    }
    let terminals: Vec<Value> = h
        .ok(
            "events.list",
            Some(json!({ "sessionId": session, "limit": 1000 })),
        )
        .as_array()
        .expect("events")
        .iter()
        .filter(|e| e["payload"]["type"] == "actionCompleted")
        .map(|e| e["payload"]["outcome"].clone())
        .collect::<Vec<_>>()
        .into_iter()
        .take(1)
        .collect();
    assert_eq!(terminals[0]["outcome"], "failed");
    assert_eq!(terminals[0]["error"]["code"], "response_frame_too_large");
}

#[test]
fn error_frames_are_bounded() {
    let mut h = TestHost::start();
    // A hello whose offer (echoed in the error) is almost 1 MiB.
    let ranges: Vec<Value> = (0..20_000)
        .map(|_| json!({ "major": 0, "minMinor": 0, "maxMinor": 9 }))
        .collect();
    let line = serde_json::to_vec(&json!({ "jsonrpc": "2.0", "id": 1, "method": "system.hello",
        "params": { "client": { "name": "x", "version": "1" }, "protocol": { "ranges": ranges } } }))
    .expect("encode");
    assert!(line.len() < 1024 * 1024);
    h.send_raw(&[line.clone(), b"\n".to_vec()].concat());
    let r = h.recv();
    let size = r.to_string().len();
    println!(
        "hostile: a {}-byte hello answered with a {size}-byte error",
        line.len()
    );
    assert_eq!(
        error_code(&r).as_deref(),
        Some("protocol_version_incompatible")
    );
    assert!(size < 16 * 1024, "{size} bytes");
    // An unknown method name of 500 kB.
    h.hello();
    let name = "m".repeat(500_000);
    let r = h.call(&name, None);
    assert_eq!(error_code(&r).as_deref(), Some("method_not_found"));
    assert!(r.to_string().len() < 16 * 1024);
    // Objects where the schema says object: an array is refused.
    let mut g = TestHost::start();
    let r = g.call(
        "system.hello",
        Some(json!({ "client": ["x", "1"], "protocol": { "ranges": [{ "major": 1, "minMinor": 0, "maxMinor": 5 }] } })),
    );
    assert_eq!(error_code(&r).as_deref(), Some("invalid_params"), "{r}");
    assert_eq!(r["error"]["data"]["retryable"], true);
}

/// Every answer respects the frame limit the host enforces on others, even
/// to a request whose id alone is close to it: an id too long to echo is
/// refused as `invalid_request` with `id: null` (4,096 bytes of JSON at
/// most), and the next request is answered as usual.
#[test]
fn huge_ids_are_answered_within_the_frame_limit() {
    const LIMIT: usize = 1024 * 1024;
    fn answer(h: &mut TestHost, id: &str, method: &str) -> (Value, usize) {
        let line = serde_json::to_vec(&json!({ "jsonrpc": "2.0", "id": id, "method": method }))
            .expect("encode");
        assert!(line.len() < LIMIT, "the request itself is within the limit");
        h.send_raw(&[line, b"\n".to_vec()].concat());
        let r = h.recv();
        let size = r.to_string().len();
        (r, size)
    }
    let mut h = TestHost::start();
    let huge = "i".repeat(LIMIT - 200);
    // Before the handshake, and after it: unknown and known methods.
    let (r, size) = answer(&mut h, &huge, "system.describe");
    assert!(size <= LIMIT, "{size} bytes");
    assert_eq!(error_code(&r).as_deref(), Some("invalid_request"), "{r}");
    assert!(r["id"].is_null());
    h.hello();
    for method in ["no.such.method", "system.describe", "devices.list"] {
        let (r, size) = answer(&mut h, &huge, method);
        println!(
            "hostile: a {}-byte id on {method} answered with {size} bytes",
            huge.len()
        );
        assert!(size <= LIMIT, "{size} bytes");
        assert_eq!(error_code(&r).as_deref(), Some("invalid_request"), "{r}");
        assert!(r["id"].is_null(), "an id that cannot be echoed is null");
    }
    // The bound: 4,096 bytes of JSON (quotes included) are echoed, one more is not.
    let at_bound = "b".repeat(4096 - 2);
    let (r, _) = answer(&mut h, &at_bound, "system.describe");
    assert_eq!(r["id"], json!(at_bound), "{r}");
    assert!(r["result"].is_object());
    let over = "b".repeat(4096 - 1);
    let (r, _) = answer(&mut h, &over, "system.describe");
    assert_eq!(error_code(&r).as_deref(), Some("invalid_request"));
    // Escapes count as sent: 700 control characters are 4,200 bytes of JSON.
    let escaped = "\u{1}".repeat(700);
    let (r, _) = answer(&mut h, &escaped, "system.describe");
    assert_eq!(error_code(&r).as_deref(), Some("invalid_request"));
    // The connection is fine.
    assert!(h.ok("system.describe", None).is_object());
}

#[test]
fn a_client_that_does_not_read_is_not_buffered_without_limit() {
    let tmp = root_with_hostile();
    let mut h = with_hostile(&tmp);
    let session = session_on(&mut h, "hostile-1");
    for _ in 0..4 {
        h.ok(
            "device.execute",
            Some(TestHost::action("big", json!({ "bytes": 900 * 1024 }))),
        );
    }
    h.ok("session.end", None);
    let baseline = h.rss_kib();
    // 1,000 requests for ~900 kB pages, without reading the answers.
    let mut stdin = h.take_stdin_pipe();
    let writer = std::thread::spawn(move || {
        for i in 0..1000u64 {
            let line = json!({ "jsonrpc": "2.0", "id": format!("p{i}"), "method": "events.list",
                "params": { "sessionId": session, "afterSequence": 2 + (i % 4) * 2, "limit": 1 } });
            let mut bytes = serde_json::to_vec(&line).expect("encode");
            bytes.push(b'\n');
            if stdin.write_all(&bytes).is_err() {
                break;
            }
        }
        stdin
    });
    std::thread::sleep(Duration::from_secs(3));
    let peak = h.rss_kib();
    println!(
        "hostile: RSS with 1,000 unread ~900 kB answers pending: {} MiB (baseline {} MiB)",
        peak / 1024,
        baseline / 1024
    );
    assert!(
        peak < baseline + 256 * 1024,
        "the host buffered the unread answers: {peak} KiB"
    );
    // Reading resumes the flow; every answer arrives.
    let mut got = 0;
    for i in 0..1000u64 {
        let r = h.response(&json!(format!("p{i}")));
        assert!(r.get("result").is_some(), "{}", &r.to_string()[..200]);
        got += 1;
    }
    let pipe = writer.join().expect("writer");
    h.put_stdin_pipe(pipe);
    assert_eq!(got, 1000);
}

#[test]
fn idle_sockets_on_the_stream_port_cost_the_host_nothing_lasting() {
    raise_own_fd_limit();
    let mut h = TestHost::start();
    let session = json!(h.ready_session());
    let opened = h.ok(
        "events.stream.open",
        Some(json!({ "sessionId": session, "originPolicy": { "kind": "absent" } })),
    );
    let endpoint = opened["endpoint"].as_str().expect("endpoint");
    let addr = endpoint
        .trim_start_matches("ws://")
        .split('/')
        .next()
        .expect("addr")
        .to_owned();
    let before = h.open_fds();
    let mut idle = Vec::new();
    for _ in 0..1100 {
        match std::net::TcpStream::connect(&addr) {
            Ok(s) => idle.push(s),
            Err(e) => panic!("connect: {e}"),
        }
    }
    std::thread::sleep(Duration::from_millis(500));
    let during = h.open_fds();
    println!(
        "hostile: host descriptors with 1,100 idle stream connections: {during} (before {before})"
    );
    // Connections that have not upgraded are kept up to a bound (the
    // oldest are closed beyond it), never all of them.
    assert!(during < before + 512 + 64, "{during} descriptors");
    // The host still observes (Evidence files, store readers) meanwhile.
    assert!(h.ok("device.observe", None)["screenshot"].is_object());
    // Idle sockets are closed after the upgrade timeout.
    std::thread::sleep(Duration::from_secs(6));
    let after = h.open_fds();
    println!("hostile: host descriptors 6 s later: {after}");
    assert!(after <= before + 8, "{after} descriptors");
    drop(idle);
}

fn raise_own_fd_limit() {
    // SAFETY: getrlimit/setrlimit on this test process with a valid struct.
    unsafe {
        let mut lim = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) == 0 {
            lim.rlim_cur = lim.rlim_max.min(1 << 16);
            libc::setrlimit(libc::RLIMIT_NOFILE, &lim);
        }
    }
}
